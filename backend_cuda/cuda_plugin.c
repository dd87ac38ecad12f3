/*
 * cuda_plugin.c: the CUDA backend plugin's entry symbol and function table
 * (name "cuda"). Backend-wide state (the option values method handles
 * created afterwards start from) lives in the backend object the table's
 * backend_data points to (cuda_backend.h); the 1.0 members, which get no
 * `self`, reach the same object through the table.
 */
#include <string.h>

#include "backend_cuda/cuda_availability.h"
#include "backend_cuda/cuda_backend.h"
#include "backend_cuda/cuda_backend_life.h"
#include "backend_cuda/cuda_execute_ex.h"
#include "backend_cuda/cuda_identity.h"
#include "backend_cuda/cuda_method.h"
#include "backend_cuda/cuda_options.h"
#include "backend_cuda/cuda_thread_error.h"
#include "plugin_api/aotrun_plugin.h"

static const aotrun_backend_api kApi;
static aotrun_cuda_backend g_backend = AOTRUN_CUDA_BACKEND_INIT("cuda");

/* Failed init, backend-wide and NULL-handle calls of this thread
 * (last_error(NULL)). */
#define g_error (*aotrun_cuda_thread_error())

static aotrun_cuda_backend *backend_of(const aotrun_backend_api *self) {
  return (aotrun_cuda_backend *)self->backend_data;
}

static const char *cuda_name(void) { return g_backend.name; }

static int32_t cuda_is_available_ex(const aotrun_backend_api *self,
                                    char *reason, size_t reason_size) {
  (void)self;
  return aotrun_cuda_available(reason, reason_size);
}

static aotrun_status cuda_init_ex(const aotrun_backend_api *self,
                                  const aotrun_host_api *host,
                                  const void *processed, size_t processed_size,
                                  const aotrun_key_value *specs,
                                  size_t num_specs, aotrun_method **out) {
  aotrun_error_clear(&g_error);
  if (out == NULL)
    return aotrun_error_set(&g_error, AOTRUN_ERR_INVALID_ARGUMENT,
                            "init: out is NULL");
  *out = NULL;
  if (num_specs > 0 && specs == NULL)
    return aotrun_error_set(&g_error, AOTRUN_ERR_INVALID_ARGUMENT,
                            "init: %zu compile specs but the array is NULL",
                            num_specs);
  aotrun_cuda_options opts;
  aotrun_cuda_backend_defaults(backend_of(self), &opts);
  return aotrun_cuda_method_create(host, processed, processed_size, specs,
                                   num_specs, &opts, out, &g_error);
}

static int32_t cuda_is_available(char *reason, size_t reason_size) {
  return cuda_is_available_ex(&kApi, reason, reason_size);
}

static aotrun_status cuda_init(const aotrun_host_api *host,
                               const void *processed, size_t processed_size,
                               const aotrun_key_value *specs, size_t num_specs,
                               aotrun_method **out) {
  return cuda_init_ex(&kApi, host, processed, processed_size, specs,
                      num_specs, out);
}

static aotrun_status cuda_set_backend_option(const aotrun_backend_api *self,
                                             const aotrun_option *opt) {
  return aotrun_cuda_backend_set_option(backend_of(self), opt, &g_error);
}

static aotrun_status cuda_get_backend_option(const aotrun_backend_api *self,
                                             const char *key,
                                             aotrun_option *out, char *buf,
                                             size_t buf_size) {
  return aotrun_cuda_backend_get_option(backend_of(self), key, out, buf,
                                        buf_size, &g_error);
}

static aotrun_status cuda_set_option(aotrun_method *m,
                                     const aotrun_option *opt) {
  return m == NULL ? cuda_set_backend_option(&kApi, opt)
                   : aotrun_cuda_method_set_option(m, opt);
}

/* Backend-wide (m NULL): a string points into this thread's copy, so no
 * other thread's call overwrites it (cuda_backend.h). */
static aotrun_status cuda_get_option(aotrun_method *m, const char *key,
                                     aotrun_option *out) {
  return m == NULL ? aotrun_cuda_backend_get_option_1_0(&g_backend, key, out,
                                                        &g_error)
                   : aotrun_cuda_method_get_option(m, key, out);
}

static const char *cuda_last_error(const aotrun_method *m) {
  return aotrun_cuda_method_last_error(m); /* NULL: this thread's */
}

/* ---- identity, devices, can_run ---- */

static aotrun_status cuda_get_info(const aotrun_backend_api *self,
                                   aotrun_backend_info *out) {
  (void)self;
  aotrun_error_clear(&g_error);
  return aotrun_cuda_get_info(out, &g_error);
}

static aotrun_status cuda_get_device_count(const aotrun_backend_api *self,
                                           int32_t *count) {
  (void)self;
  aotrun_error_clear(&g_error);
  return aotrun_cuda_device_count(count, &g_error);
}

static aotrun_status cuda_get_device_info(const aotrun_backend_api *self,
                                          int32_t device,
                                          aotrun_device_info *out) {
  (void)self;
  aotrun_error_clear(&g_error);
  return aotrun_cuda_device_info(device, out, &g_error);
}

static aotrun_status cuda_can_run(const aotrun_backend_api *self,
                                  const aotrun_host_api *host,
                                  const void *processed, size_t size,
                                  const aotrun_key_value *specs,
                                  size_t num_specs, char *reason,
                                  size_t reason_size) {
  (void)self;
  aotrun_error_clear(&g_error);
  aotrun_status st =
      aotrun_cuda_can_run(host, processed, size, specs, num_specs, &g_error);
  if (reason != NULL && reason_size > 0) {
    size_t n = strlen(g_error.message);
    if (n >= reason_size) n = reason_size - 1;
    memcpy(reason, g_error.message, n);
    reason[n] = '\0';
  }
  return st;
}

static const aotrun_backend_api kApi = {
    .abi_version = AOTRUN_ABI_VERSION,
    .struct_size = sizeof(aotrun_backend_api),
    .get_name = cuda_name,
    .is_available = cuda_is_available,
    .init = cuda_init,
    .execute = aotrun_cuda_method_execute,
    .destroy = aotrun_cuda_method_destroy,
    .set_option = cuda_set_option,
    .get_option = cuda_get_option,
    .get_num_io = aotrun_cuda_method_num_io,
    .get_io_info = aotrun_cuda_method_io_info,
    .last_error = cuda_last_error,
    /* ABI 1.1: context, identity, devices, can_run */
    .backend_data = &g_backend,
    .is_available_ex = cuda_is_available_ex,
    .init_ex = cuda_init_ex,
    .set_backend_option = cuda_set_backend_option,
    .get_backend_option = cuda_get_backend_option,
    .get_info = cuda_get_info,
    .get_device_count = cuda_get_device_count,
    .get_device_info = cuda_get_device_info,
    .can_run = cuda_can_run,
    /* 1.1: caller streams, async, backend-allocated outputs. */
    .execute_ex = aotrun_cuda_method_execute_ex,
    .synchronize = aotrun_cuda_method_synchronize,
    .deinit = aotrun_cuda_deinit,
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  aotrun_cuda_backend_acquire(); /* balanced by deinit */
  return AOTRUN_OK;
}
