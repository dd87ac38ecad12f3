/*
 * backend_unload.c: unloading one plugin: refused while host methods are
 * open on it; otherwise the backend's deinit (ABI 1.1) runs before dlclose.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

void aotrun_host_backend_opened(const aotrun_backend *b) {
  atomic_fetch_add(&((aotrun_backend *)b)->open_methods, 1);
}

void aotrun_host_backend_closed(const aotrun_backend *b) {
  atomic_fetch_sub(&((aotrun_backend *)b)->open_methods, 1);
}

aotrun_status aotrun_host_backend_check_idle(const aotrun_backend *b) {
  size_t open = atomic_load(&((aotrun_backend *)b)->open_methods);
  if (open == 0) return AOTRUN_OK;
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "backend '%s' (%s) still has %zu open host "
                          "method%s: close %s first; nothing was unloaded",
                          b->name ? b->name : "?", b->path ? b->path : "?",
                          open, open == 1 ? "" : "s",
                          open == 1 ? "it" : "them");
}

/* The last backend of a library dlcloses it. */
static void release_library(aotrun_backend *b) {
  if (b->lib == NULL) return;
  if (b->lib_refs != NULL && atomic_fetch_sub(b->lib_refs, 1) != 1) return;
  free((void *)b->lib_refs);
  dlclose(b->lib);
}

aotrun_status aotrun_backend_close(aotrun_backend *b) {
  if (b == NULL) return AOTRUN_OK;
  aotrun_status s = aotrun_host_backend_check_idle(b);
  if (s != AOTRUN_OK) return s;
  /* deinit balances the table this backend was handed (every backend
   * object holds a validated table); the library's code must still be
   * mapped while it runs. */
  if (AOTRUN_BACKEND_CAN(b, deinit)) b->api->deinit(b->api);
  release_library(b);
  free(b->name);
  free(b->path);
  free(b);
  return AOTRUN_OK;
}
