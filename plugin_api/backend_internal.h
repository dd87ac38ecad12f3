/* backend_internal.h: what the host library knows about a loaded plugin. */
#ifndef AOTRUN_BACKEND_INTERNAL_H
#define AOTRUN_BACKEND_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

struct aotrun_backend {
  void *lib;                     /* dlopen handle */
  /* Backends of one library (the list symbol) share `lib`: the count of
   * them still open, shared; NULL when this backend is the only one. The
   * last to close dlcloses. */
  _Atomic size_t *lib_refs;
  char *path;                    /* the file as opened */
  char *name;                    /* copy of get_name() */
  const aotrun_backend_api *api; /* validated, owned by the plugin */
  /* Host methods whose handle lives on this backend: close refuses to
   * unload while it is not 0. Atomic: host methods of one registry open
   * and close in many threads at once. */
  atomic_size_t open_methods;
};

/* A host method's handle was created on / destroyed from backend b. The
 * count is host bookkeeping, not backend state: b is const to callers.
 * Named aotrun_host_backend_*: install/host.lds keeps them local. */
void aotrun_host_backend_opened(const aotrun_backend *b);
void aotrun_host_backend_closed(const aotrun_backend *b);

/* Fails (naming the backend and the count) while host methods are open on
 * b; nothing is changed then. */
aotrun_status aotrun_host_backend_check_idle(const aotrun_backend *b);

/* True when the plugin's table holds `field` (its struct_size covers the
 * member's last byte) and it is not NULL: every call into a plugin goes
 * through this gate (AOTRUN_TABLE_CAN of the public header). */
#define AOTRUN_BACKEND_CAN(b, field) AOTRUN_TABLE_CAN((b)->api, field)

/* dlopens path as a file (a bare name as "./name"). On success *file is
 * the malloc'd path as opened and *lib the handle; the error names path. */
aotrun_status aotrun_host_plugin_dlopen(const char *path, char **file,
                                    void **lib);

/* Checks one table a plugin returned (version, sizes, required members,
 * name); `label` names it in messages ("plugin x.so" or "plugin x.so,
 * backend 2 of 3"). On failure sets the host's last error. */
/* The status an entry or list symbol returned, as the host reports it: a
 * version refusal names both versions, another failure the symbol and the
 * plugin's status; AOTRUN_OK passes. */
aotrun_status aotrun_host_entry_status(const char *path, const char *symbol,
                                       uint32_t host, aotrun_status s);

aotrun_status aotrun_host_check_table(const char *label, uint32_t host,
                                         const aotrun_backend_api *t);

/* The tables of a library's list symbol (AOTRUN_PLUGIN_LIST_SYMBOL), each
 * checked, names distinct. AOTRUN_ERR_NOT_FOUND (no message set) when
 * the library does not export it. */
aotrun_status aotrun_host_list_tables(const char *path, void *lib,
                                         uint32_t host,
                                         const aotrun_backend_api *const **t,
                                         size_t *count);

/* A backend object for table t of the library (dl handle `lib`, shared
 * through `refs` when not NULL, whose count the caller has raised). */
aotrun_status aotrun_host_make_backend(const char *file, void *lib,
                                  _Atomic size_t *refs,
                                  const aotrun_backend_api *t,
                                  aotrun_backend **out);

#endif /* AOTRUN_BACKEND_INTERNAL_H */
