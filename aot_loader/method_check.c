/* method_check.c: see method_check.h. */
#include "aot_loader/method_check.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/elf_check.h"
#include "aot_loader/kernel_arch.h"
#include "aot_loader/program.h"
#include "shim_lib/aotrun_shim.h"

/* The library's kernels against the target (the load-time check). */
static aotrun_status check_kernels(const aotrun_method_check_config *c,
                                   const char *library, const void *bytes,
                                   size_t size, aotrun_error *err) {
  aotrun_kernel_archs archs;
  aotrun_kernel_archs_scan(bytes, size, &archs);
  const char *skip = getenv("AOTRUN_SKIP_KERNEL_ARCH_CHECK");
  if (skip != NULL && strcmp(skip, "1") == 0) return AOTRUN_OK;
  if (c->gpu_arch != 0)
    return aotrun_kernel_archs_check(&archs, c->gpu_arch, library, c->device,
                                     err);
  if (archs.num_sass == 0 && archs.num_ptx == 0) return AOTRUN_OK;
  char kinds[256];
  return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                          "%s has GPU kernels (%s); device %s runs only "
                          "libraries built for the CPU",
                          library,
                          aotrun_kernel_archs_describe(&archs, kinds,
                                                       sizeof kinds),
                          c->device);
}

static aotrun_status check_library(const aotrun_method_check_config *c,
                                   const char *library, aotrun_error *err) {
  const aotrun_host_api *h = c->host;
  if (h == NULL || h->get_named_data == NULL) return AOTRUN_OK;
  const void *bytes = NULL;
  size_t size = 0;
  void *token = NULL;
  aotrun_status st = h->get_named_data(h->ctx, library, &bytes, &size, &token);
  if (st != AOTRUN_OK)
    return aotrun_error_set(err, st == AOTRUN_ERR_NOT_FOUND
                                     ? AOTRUN_ERR_NOT_FOUND
                                     : AOTRUN_ERR_ACCESS_FAILED,
                            "model library %s of method %s: the host's "
                            "named data gave %s",
                            library, c->method, aotrun_status_string(st));
  st = aotrun_elf_check_shared_library(bytes, size, library, err);
  if (st == AOTRUN_OK) st = check_kernels(c, library, bytes, size, err);
  if (h->release_named_data != NULL) h->release_named_data(h->ctx, token);
  return st;
}

/* The shim library this process binds models to, opened again (NOLOAD:
 * it is already loaded) for dlsym; NULL when it cannot be found. Found by
 * an aotrun_shim_* name: an aoti_torch_* address may resolve to a libtorch
 * loaded globally before us or to a preloaded library (the call profiler),
 * and the imports would then be checked against the wrong library. */
static void *shim_handle(void) {
  Dl_info info;
  void *addr = (void *)(uintptr_t)&aotrun_shim_last_error;
  if (dladdr(addr, &info) == 0 || info.dli_fname == NULL) return NULL;
  return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

static aotrun_status check_imports(const aotrun_method_check_config *c,
                                   aotrun_error *err) {
  cJSON *root = cJSON_ParseWithLength(c->manifest, c->manifest_size);
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "methods");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(methods, c->method);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "aoti_torch_imports");
  aotrun_status st = AOTRUN_OK;
  void *shim = cJSON_IsArray(list) ? shim_handle() : NULL;
  if (cJSON_IsArray(list) && shim == NULL)
    st = aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                          "method %s: cannot find the shim library to check "
                          "its imports",
                          c->method);
  size_t missing = 0;
  const char *first = NULL;
  for (const cJSON *e = list != NULL ? list->child : NULL;
       st == AOTRUN_OK && e != NULL; e = e->next) {
    if (!cJSON_IsString(e) || dlsym(shim, e->valuestring) != NULL) continue;
    if (missing++ == 0) first = e->valuestring;
  }
  if (missing > 0)
    st = aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                          "method %s imports %zu aoti_torch_* function(s) "
                          "the shim library does not export (first: %s)",
                          c->method, missing, first);
  if (shim != NULL) dlclose(shim);
  cJSON_Delete(root);
  return st;
}

aotrun_status aotrun_method_check(const aotrun_method_check_config *c,
                                  aotrun_error *err) {
  if (c == NULL || c->method == NULL || c->device == NULL ||
      (c->manifest == NULL && c->manifest_size != 0))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "can_run: NULL config, method, device or "
                            "manifest");
  aotrun_program *program = NULL;
  aotrun_status st =
      aotrun_program_parse(c->manifest, c->manifest_size, &program, err);
  const aotrun_program_method *m = NULL;
  if (st == AOTRUN_OK)
    st = aotrun_program_find_method(program, c->method, &m, err);
  if (st == AOTRUN_OK) st = check_library(c, m->library, err);
  if (st == AOTRUN_OK) st = check_imports(c, err);
  aotrun_program_destroy(program);
  return st;
}
