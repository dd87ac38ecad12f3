/*
 * temp_file.h: a private temporary file holding a copy of some bytes.
 *
 * Used to give dlopen a path for a model library that arrives as bytes. The
 * file is created with mkstemps (O_EXCL, mode 0600, unpredictable name) under
 * $TMPDIR (or /tmp when unset or empty), written completely and closed.
 */
#ifndef AOTRUN_TEMP_FILE_H
#define AOTRUN_TEMP_FILE_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"

/* Writes bytes[0..size) to a new file named "<stem>XXXXXX<suffix>" in the
 * temp directory. On success *path_out receives the malloc'ed path (free it
 * with aotrun_temp_file_remove). On failure nothing is left on disk and
 * *path_out is NULL. */
aotrun_status aotrun_temp_file_create(const void *bytes, size_t size,
                                      const char *stem, const char *suffix,
                                      char **path_out, aotrun_error *err);

/* $TMPDIR when set and non-empty, else /tmp. */
const char *aotrun_temp_dir(void);

/* Writes all of bytes[0..size) to fd, retrying short writes and EINTR.
 * Returns 0 or an errno value. */
int aotrun_write_all(int fd, const void *bytes, size_t size);

/* Unlinks the file and frees the path. Accepts NULL. */
void aotrun_temp_file_remove(char *path);

#endif /* AOTRUN_TEMP_FILE_H */
