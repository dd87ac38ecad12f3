/*
 * elf_check.h: checks that bytes look like a complete shared library for
 * this machine before they are handed to dlopen.
 *
 * Why: dlopen maps segments straight from the file; a truncated library whose
 * segments reach past the end of the file faults (SIGBUS) inside the dynamic
 * loader instead of failing. Checking the ELF header and every program header
 * against the byte count turns that into a clear error.
 */
#ifndef AOTRUN_ELF_CHECK_H
#define AOTRUN_ELF_CHECK_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"

/* AOTRUN_OK, or AOTRUN_ERR_INVALID_ARGUMENT naming what is wrong (not ELF,
 * wrong class/byte order/machine, not a shared object, a table or segment
 * past the end of the bytes). `what` names the library in the message. */
aotrun_status aotrun_elf_check_shared_library(const void *bytes, size_t size,
                                              const char *what,
                                              aotrun_error *err);

#endif /* AOTRUN_ELF_CHECK_H */
