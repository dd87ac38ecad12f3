/*
 * cli_elf.h: the dynamic symbol names of an ELF shared library, read from
 * its bytes (no dlopen: nothing of the library runs). `aotrun inspect` uses
 * it for the aoti_torch_* functions a model library imports and the ones
 * the shim library exports.
 *
 * Only 64-bit little-endian ELF is read (what elf_check accepts). Every
 * table, entry and name is bounds-checked against the byte count; a
 * malformed file is an error naming it, never a crash.
 */
#ifndef AOTRUN_CLI_ELF_H
#define AOTRUN_CLI_ELF_H

#include <stddef.h>

#include "plugin_api/aotrun_plugin.h"

/* Sorted, unique names (each malloc'd). */
typedef struct cli_name_list {
  char **names;
  size_t count;
} cli_name_list;

typedef enum cli_elf_which {
  CLI_ELF_IMPORTS, /* undefined symbols (what the library needs) */
  CLI_ELF_EXPORTS  /* defined global/weak symbols of default or protected
                      visibility (what it gives) */
} cli_elf_which;

/* The names of `which` dynamic symbols that start with `prefix` ("" for
 * all) into *out. `what` names the file in messages ("library forward.so").
 * Returns AOTRUN_OK or INVALID_ARGUMENT / OUT_OF_MEMORY with the reason
 * recorded (aotrun_host_last_error). *out is empty on failure. */
aotrun_status cli_elf_symbols(const void *bytes, size_t size,
                              const char *what, cli_elf_which which,
                              const char *prefix, cli_name_list *out);

/* Whether the sorted list holds `name` (binary search). */
int cli_name_list_has(const cli_name_list *list, const char *name);
void cli_name_list_free(cli_name_list *list);

#endif /* AOTRUN_CLI_ELF_H */
