/* backend_registry.c: loaded backends by name, in load order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

struct aotrun_registry {
  aotrun_backend **items;
  size_t count;
  size_t capacity;
};

aotrun_status aotrun_registry_create(aotrun_registry **out) {
  if (out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_registry_create: NULL out");
  *out = calloc(1, sizeof **out);
  if (*out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory creating the backend registry");
  return AOTRUN_OK;
}

aotrun_status aotrun_registry_destroy(aotrun_registry *r) {
  if (r == NULL) return AOTRUN_OK;
  /* All or nothing: one busy backend leaves every backend loaded, so the
   * caller can close its methods and destroy again. */
  for (size_t i = 0; i < r->count; i++) {
    aotrun_status s = aotrun_host_backend_check_idle(r->items[i]);
    if (s != AOTRUN_OK) return s;
  }
  /* Reverse load order, like a stack of dlopens. */
  for (size_t i = r->count; i > 0; i--)
    (void)aotrun_backend_close(r->items[i - 1]); /* idle: cannot fail */
  free(r->items);
  free(r);
  return AOTRUN_OK;
}

static const aotrun_backend *find(const aotrun_registry *r, const char *name) {
  for (size_t i = 0; i < r->count; i++)
    if (strcmp(r->items[i]->name, name) == 0) return r->items[i];
  return NULL;
}

static aotrun_status add(aotrun_registry *r, aotrun_backend *b) {
  const aotrun_backend *dup = find(r, b->name);
  if (dup != NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s' from %s is already loaded from %s",
                            b->name, b->path, dup->path);
  if (r->count == r->capacity) {
    size_t cap = r->capacity ? r->capacity * 2 : 4;
    aotrun_backend **items = realloc(r->items, cap * sizeof *items);
    if (items == NULL)
      return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                              "out of memory registering backend '%s'",
                              b->name);
    r->items = items;
    r->capacity = cap;
  }
  r->items[r->count++] = b;
  return AOTRUN_OK;
}

/* Room for n more, so adding them cannot fail half way. */
static aotrun_status reserve(aotrun_registry *r, size_t n, const char *path) {
  if (r->count + n <= r->capacity) return AOTRUN_OK;
  size_t cap = r->capacity ? r->capacity : 4;
  while (cap < r->count + n) cap *= 2;
  aotrun_backend **items = realloc(r->items, cap * sizeof *items);
  if (items == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory registering the backends of %s",
                            path);
  r->items = items;
  r->capacity = cap;
  return AOTRUN_OK;
}

aotrun_status aotrun_registry_load(aotrun_registry *r, const char *path,
                                   const aotrun_backend **out) {
  if (out != NULL) *out = NULL;
  if (r == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_registry_load: NULL registry");
  aotrun_backend **list = NULL;
  size_t n = 0;
  aotrun_status s = aotrun_backend_open_all(path, AOTRUN_ABI_VERSION, &list,
                                            &n);
  if (s != AOTRUN_OK) return s;
  s = reserve(r, n, path);
  size_t added = 0;
  for (; s == AOTRUN_OK && added < n; added++) s = add(r, list[added]);
  if (s != AOTRUN_OK) {
    /* All or nothing: take back the ones already added. Closing them
     * runs their deinit, which may call the host: keep the message. */
    if (added > 0) r->count -= added - 1;
    char why[AOTRUN_HOST_ERROR_SIZE];
    snprintf(why, sizeof why, "%s", aotrun_host_last_error());
    aotrun_backend_close_all(list, n);
    return aotrun_host_fail(s, "%s", why);
  }
  if (out != NULL) *out = list[0];
  free(list); /* the backends are the registry's now */
  return AOTRUN_OK;
}

size_t aotrun_registry_count(const aotrun_registry *r) {
  return r == NULL ? 0 : r->count;
}

const aotrun_backend *aotrun_registry_at(const aotrun_registry *r, size_t i) {
  return (r == NULL || i >= r->count) ? NULL : r->items[i];
}

aotrun_status aotrun_registry_find(const aotrun_registry *r, const char *name,
                                   const aotrun_backend **out) {
  if (out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_registry_find: NULL out");
  *out = NULL;
  if (name == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_registry_find: NULL backend name");
  *out = r != NULL ? find(r, name) : NULL;
  if (*out != NULL) return AOTRUN_OK;
  /* List what is loaded so the user sees the choices. */
  char names[512] = "";
  size_t used = 0;
  for (size_t i = 0; r != NULL && i < r->count && used + 1 < sizeof names;
       i++) {
    size_t n = strlen(r->items[i]->name);
    const char *sep = i ? ", " : "";
    if (used + strlen(sep) + n + 1 >= sizeof names) break;
    memcpy(names + used, sep, strlen(sep));
    used += strlen(sep);
    memcpy(names + used, r->items[i]->name, n + 1);
    used += n;
  }
  return aotrun_host_fail(AOTRUN_ERR_NOT_FOUND,
                          "backend '%s' is not loaded (loaded: %s)", name,
                          used ? names : "none");
}
