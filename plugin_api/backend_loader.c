/*
 * backend_loader.c: dlopen one plugin, negotiate the ABI version and
 * validate its table before the host calls anything in it.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/abi_layout.h"
#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

/* A bare name would make dlopen search the library path instead of the
 * file the user named: open it relative to the working directory. */
static char *file_path_for_dlopen(const char *path) {
  if (strchr(path, '/') != NULL) return strdup(path);
  size_t n = strlen(path) + 3;
  char *p = malloc(n);
  if (p != NULL) {
    memcpy(p, "./", 2);
    memcpy(p + 2, path, n - 2);
  }
  return p;
}

/* Names the first required v1.0 member the table leaves NULL, or NULL. */
static const char *missing_member(const aotrun_backend_api *t) {
#define REQUIRE(field) \
  if (t->field == NULL) return #field
  REQUIRE(get_name);
  REQUIRE(is_available);
  REQUIRE(init);
  REQUIRE(execute);
  REQUIRE(destroy);
  REQUIRE(set_option);
  REQUIRE(get_option);
  REQUIRE(get_num_io);
  REQUIRE(get_io_info);
  REQUIRE(last_error);
#undef REQUIRE
  return NULL;
}

/* struct_size must hold the required 1.0 members and be no larger than
 * the table of the minor it declares: a 1.0 table claiming more bytes
 * would make the host read members (1.1's get_extension) that the plugin
 * never had. A minor newer than this host is bounded by
 * AOTRUN_TABLE_MAX_SIZE; the host reads only the members it knows. */
static aotrun_status check_table_size(const char *path,
                                      const aotrun_backend_api *t) {
  uint32_t v = t->abi_version;
  unsigned major = AOTRUN_VERSION_MAJOR(v), minor = AOTRUN_VERSION_MINOR(v);
  size_t size = t->struct_size;
  if (size < AOTRUN_BACKEND_API_SIZE_1_0)
    return aotrun_host_fail(
        AOTRUN_ERR_VERSION_MISMATCH,
        "plugin %s (ABI %u.%u): backend table is %zu bytes, ABI 1.0 needs at "
        "least %zu",
        path, major, minor, size, (size_t)AOTRUN_BACKEND_API_SIZE_1_0);
  size_t max = aotrun_backend_api_size_of_minor(minor);
  if (max != 0 && size > max)
    return aotrun_host_fail(
        AOTRUN_ERR_VERSION_MISMATCH,
        "plugin %s (ABI %u.%u): backend table is %zu bytes, but the table of "
        "ABI %u.%u is at most %zu bytes",
        path, major, minor, size, major, minor, max);
  if (max == 0 && size > AOTRUN_TABLE_MAX_SIZE)
    return aotrun_host_fail(
        AOTRUN_ERR_VERSION_MISMATCH,
        "plugin %s (ABI %u.%u): backend table is %zu bytes, a table of any "
        "ABI 1.x is at most %zu bytes",
        path, major, minor, size, (size_t)AOTRUN_TABLE_MAX_SIZE);
  return AOTRUN_OK;
}

/* Checks what the entry or list symbol returned; on failure sets the last
 * error. `path` is the label naming the table. */
aotrun_status aotrun_host_check_table(const char *path, uint32_t host,
                                         const aotrun_backend_api *t) {
  if (t == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "plugin %s returned OK but a NULL backend table",
                            path);
  uint32_t v = t->abi_version;
  if (AOTRUN_VERSION_MAJOR(v) != AOTRUN_VERSION_MAJOR(host))
    return aotrun_host_fail(AOTRUN_ERR_VERSION_MISMATCH,
                            "plugin %s has ABI %u.%u, host has %u.%u", path,
                            AOTRUN_VERSION_MAJOR(v), AOTRUN_VERSION_MINOR(v),
                            AOTRUN_VERSION_MAJOR(host),
                            AOTRUN_VERSION_MINOR(host));
  aotrun_status s = check_table_size(path, t);
  if (s != AOTRUN_OK) return s;
  const char *missing = missing_member(t);
  if (missing != NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "plugin %s: required member %s is NULL", path,
                            missing);
  const char *name = t->get_name();
  if (name == NULL || name[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "plugin %s: get_name returned an empty name",
                            path);
  return AOTRUN_OK;
}

/* Calls the entry symbol; a refusal is reported with the host's version. */
static aotrun_status call_entry(const char *path, void *lib, uint32_t host,
                                const aotrun_backend_api **table) {
  dlerror();
  void *sym = dlsym(lib, AOTRUN_PLUGIN_ENTRY_SYMBOL);
  if (sym == NULL)
    return aotrun_host_fail(AOTRUN_ERR_NOT_FOUND,
                            "%s is not an aotrun plugin: it does not export "
                            "%s (nor %s)",
                            path, AOTRUN_PLUGIN_ENTRY_SYMBOL,
                            AOTRUN_PLUGIN_LIST_SYMBOL);
  aotrun_plugin_get_api_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object -> function pointer */
  *table = NULL;
  aotrun_status s = aotrun_host_entry_status(
      path, AOTRUN_PLUGIN_ENTRY_SYMBOL, host, entry(host, table));
  if (s != AOTRUN_OK) return s;
  return aotrun_host_check_table(path, host, *table);
}

aotrun_status aotrun_host_entry_status(const char *path, const char *symbol,
                                       uint32_t host, aotrun_status s) {
  if (s == AOTRUN_ERR_VERSION_MISMATCH)
    return aotrun_host_fail(s, "plugin %s refused host ABI %u.%u", path,
                            AOTRUN_VERSION_MAJOR(host),
                            AOTRUN_VERSION_MINOR(host));
  if (s != AOTRUN_OK)
    return aotrun_host_fail(aotrun_host_known_status(s),
                            "plugin %s: %s failed with status %d (%s)", path,
                            symbol, (int)s, aotrun_status_string(s));
  return AOTRUN_OK;
}

aotrun_status aotrun_host_plugin_dlopen(const char *path, char **file,
                                    void **lib) {
  *lib = NULL;
  *file = file_path_for_dlopen(path);
  if (*file == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory loading plugin %s", path);
  dlerror();
  *lib = dlopen(*file, RTLD_NOW | RTLD_LOCAL);
  if (*lib != NULL) return AOTRUN_OK;
  const char *why = dlerror();
  aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "cannot load plugin %s: %s",
                   path, why != NULL ? why : "unknown dlopen error");
  free(*file);
  *file = NULL;
  return AOTRUN_ERR_ACCESS_FAILED;
}

aotrun_status aotrun_host_make_backend(const char *file, void *lib,
                                  _Atomic size_t *refs,
                                  const aotrun_backend_api *t,
                                  aotrun_backend **out) {
  *out = NULL;
  aotrun_backend *b = calloc(1, sizeof *b);
  if (b != NULL) {
    b->path = strdup(file);
    b->name = strdup(t->get_name());
  }
  if (b == NULL || b->path == NULL || b->name == NULL) {
    if (b != NULL) {
      free(b->path);
      free(b->name);
    }
    free(b);
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory loading plugin %s", file);
  }
  b->lib = lib;
  b->lib_refs = refs;
  b->api = t;
  *out = b;
  return AOTRUN_OK;
}

/* A library with only the list symbol: its one backend, or a refusal that
 * names them (which to open is the caller's choice: open_all). */
static aotrun_status open_listed(const char *path, void *lib, uint32_t host,
                                 const aotrun_backend_api **table) {
  const aotrun_backend_api *const *tables = NULL;
  size_t n = 0;
  aotrun_status s = aotrun_host_list_tables(path, lib, host, &tables, &n);
  if (s != AOTRUN_OK) return s;
  if (n == 1) {
    *table = tables[0];
    return AOTRUN_OK;
  }
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "plugin %s offers %zu backends (%s, %s%s) through "
                          "%s and has no %s: open it with "
                          "aotrun_backend_open_all or aotrun_registry_load",
                          path, n, tables[0]->get_name(),
                          tables[1]->get_name(), n > 2 ? ", ..." : "",
                          AOTRUN_PLUGIN_LIST_SYMBOL,
                          AOTRUN_PLUGIN_ENTRY_SYMBOL);
}

aotrun_status aotrun_backend_open(const char *path, uint32_t host_abi_version,
                                  aotrun_backend **out) {
  if (out == NULL || path == NULL || path[0] == '\0')
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_open: empty plugin path or NULL "
                            "out");
  *out = NULL;
  char *file = NULL;
  void *lib = NULL;
  aotrun_status s = aotrun_host_plugin_dlopen(path, &file, &lib);
  if (s != AOTRUN_OK) return s;
  const aotrun_backend_api *table = NULL;
  dlerror();
  if (dlsym(lib, AOTRUN_PLUGIN_ENTRY_SYMBOL) == NULL &&
      dlsym(lib, AOTRUN_PLUGIN_LIST_SYMBOL) != NULL)
    s = open_listed(path, lib, host_abi_version, &table);
  else
    s = call_entry(path, lib, host_abi_version, &table);
  if (s == AOTRUN_OK) s = aotrun_host_make_backend(file, lib, NULL, table, out);
  free(file);
  if (s != AOTRUN_OK) dlclose(lib);
  return s;
}
