/*
 * backend_list.c: libraries that offer several backends through the list
 * symbol (AOTRUN_PLUGIN_LIST_SYMBOL): every table checked like the entry
 * symbol's, names distinct, one aotrun_backend per table sharing the
 * library.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

/* More than this is a plugin bug, not a real library. */
#define MAX_LISTED_BACKENDS 256

static aotrun_status call_list(const char *path, void *sym, uint32_t host,
                               const aotrun_backend_api *const **tables,
                               size_t *count) {
  aotrun_plugin_get_backends_fn list;
  memcpy(&list, &sym, sizeof list); /* object -> function pointer */
  *tables = NULL;
  *count = 0;
  aotrun_status s = aotrun_host_entry_status(path, AOTRUN_PLUGIN_LIST_SYMBOL,
                                             host, list(host, tables, count));
  if (s != AOTRUN_OK) return s;
  if (*tables == NULL || *count == 0 || *count > MAX_LISTED_BACKENDS)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "plugin %s: %s returned OK with %zu backend "
                            "tables%s (expected 1..%d)",
                            path, AOTRUN_PLUGIN_LIST_SYMBOL, *count,
                            *tables == NULL ? " and a NULL array" : "",
                            MAX_LISTED_BACKENDS);
  return AOTRUN_OK;
}

/* Table i must not repeat the name of an earlier one. */
static aotrun_status check_distinct(const char *path,
                                    const aotrun_backend_api *const *t,
                                    size_t i) {
  const char *name = t[i]->get_name();
  for (size_t j = 0; j < i; j++)
    if (strcmp(t[j]->get_name(), name) == 0)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "plugin %s: backends %zu and %zu are both "
                              "named '%s'",
                              path, j + 1, i + 1, name);
  return AOTRUN_OK;
}

aotrun_status aotrun_host_list_tables(const char *path, void *lib,
                                         uint32_t host,
                                         const aotrun_backend_api *const **t,
                                         size_t *count) {
  dlerror();
  void *sym = dlsym(lib, AOTRUN_PLUGIN_LIST_SYMBOL);
  if (sym == NULL) return AOTRUN_ERR_NOT_FOUND;
  aotrun_status s = call_list(path, sym, host, t, count);
  for (size_t i = 0; s == AOTRUN_OK && i < *count; i++) {
    char label[4200];
    snprintf(label, sizeof label, "%s, backend %zu of %zu", path, i + 1,
             *count);
    s = aotrun_host_check_table(label, host, (*t)[i]);
    if (s == AOTRUN_OK) s = check_distinct(path, *t, i);
  }
  return s;
}

void aotrun_backend_close_all(aotrun_backend **backends, size_t count) {
  if (backends == NULL) return;
  for (size_t i = count; i > 0; i--) aotrun_backend_close(backends[i - 1]);
  free(backends);
}

/* One backend object per table, all sharing lib (and its count). */
static aotrun_status make_all(const char *file, void *lib,
                              const aotrun_backend_api *const *tables,
                              size_t n, aotrun_backend ***out) {
  _Atomic size_t *refs = malloc(sizeof *refs);
  aotrun_backend **list = calloc(n, sizeof *list);
  if (refs == NULL || list == NULL) {
    free((void *)refs);
    free(list);
    dlclose(lib);
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory loading plugin %s", file);
  }
  atomic_init(refs, n);
  for (size_t i = 0; i < n; i++) {
    if (aotrun_host_make_backend(file, lib, refs, tables[i], &list[i]) ==
        AOTRUN_OK)
      continue;
    /* Only the i made ones hold a reference now; the last of them to
     * close dlcloses (none made: close here). */
    atomic_store(refs, i);
    if (i == 0) {
      free((void *)refs);
      dlclose(lib);
    }
    aotrun_backend_close_all(list, i);
    return AOTRUN_ERR_OUT_OF_MEMORY;
  }
  *out = list;
  return AOTRUN_OK;
}

aotrun_status aotrun_backend_open_all(const char *path,
                                      uint32_t host_abi_version,
                                      aotrun_backend ***out, size_t *count) {
  if (out == NULL || count == NULL || path == NULL || path[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_open_all: empty plugin path or "
                            "NULL out/count");
  *out = NULL;
  *count = 0;
  char *file = NULL;
  void *lib = NULL;
  aotrun_status s = aotrun_host_plugin_dlopen(path, &file, &lib);
  if (s != AOTRUN_OK) return s;
  const aotrun_backend_api *const *tables = NULL;
  size_t n = 0;
  s = aotrun_host_list_tables(path, lib, host_abi_version, &tables, &n);
  if (s == AOTRUN_ERR_NOT_FOUND) { /* a one-backend plugin */
    dlclose(lib);
    free(file);
    aotrun_backend **list = calloc(1, sizeof *list);
    if (list == NULL)
      return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                              "out of memory loading plugin %s", path);
    s = aotrun_backend_open(path, host_abi_version, &list[0]);
    if (s != AOTRUN_OK) {
      free(list);
      return s;
    }
    *out = list;
    *count = 1;
    return AOTRUN_OK;
  }
  if (s == AOTRUN_OK) {
    s = make_all(file, lib, tables, n, out);
    if (s == AOTRUN_OK) *count = n;
  } else {
    dlclose(lib);
  }
  free(file);
  return s;
}
