/*
 * cuda_plugin.c: the CUDA backend plugin's entry symbol and function table
 * (name "cuda"), and the backend-wide options that method handles created
 * afterwards start from.
 */
#include <pthread.h>
#include <string.h>

#include "backend_cuda/cuda_availability.h"
#include "backend_cuda/cuda_method.h"
#include "backend_cuda/cuda_options.h"
#include "plugin_api/aotrun_plugin.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static aotrun_cuda_options g_defaults;
static int g_defaults_ready;
/* Backend-wide get_option strings: valid until the next backend-wide set. */
static aotrun_cuda_options g_read_copy;

/* Failed init and backend-wide option calls of this thread. */
static _Thread_local aotrun_error g_error;

static void defaults_locked(void) {
  if (!g_defaults_ready) aotrun_cuda_options_default(&g_defaults);
  g_defaults_ready = 1;
}

static const char *cuda_name(void) { return "cuda"; }

static int32_t cuda_is_available(char *reason, size_t reason_size) {
  return aotrun_cuda_available(reason, reason_size);
}

static aotrun_status cuda_init(const aotrun_host_api *host,
                               const void *processed, size_t processed_size,
                               const aotrun_key_value *specs, size_t num_specs,
                               aotrun_method **out) {
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
  pthread_mutex_lock(&g_mu);
  defaults_locked();
  opts = g_defaults;
  pthread_mutex_unlock(&g_mu);
  return aotrun_cuda_method_create(host, processed, processed_size, specs,
                                   num_specs, &opts, out, &g_error);
}

static aotrun_status backend_set(const aotrun_option *opt) {
  aotrun_error_clear(&g_error);
  if (opt == NULL)
    return aotrun_error_set(&g_error, AOTRUN_ERR_INVALID_ARGUMENT,
                            "set_option: option is NULL");
  aotrun_cuda_option_id id;
  aotrun_status st =
      aotrun_cuda_option_find(opt->key, opt->type, 1, 0, &id, &g_error);
  if (st != AOTRUN_OK) return st;
  pthread_mutex_lock(&g_mu);
  defaults_locked();
  st = aotrun_cuda_options_store(&g_defaults, id, opt, &g_error);
  pthread_mutex_unlock(&g_mu);
  return st;
}

static aotrun_status backend_get(const char *key, aotrun_option *out) {
  aotrun_error_clear(&g_error);
  if (out == NULL)
    return aotrun_error_set(&g_error, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option: out is NULL");
  aotrun_cuda_option_id id;
  aotrun_status st = aotrun_cuda_option_find(key, 0, 0, 0, &id, &g_error);
  if (st != AOTRUN_OK) return st;
  pthread_mutex_lock(&g_mu);
  defaults_locked();
  g_read_copy = g_defaults;
  aotrun_cuda_options_read(&g_read_copy, id, out);
  pthread_mutex_unlock(&g_mu);
  return AOTRUN_OK;
}

static aotrun_status cuda_set_option(aotrun_method *m,
                                     const aotrun_option *opt) {
  return m == NULL ? backend_set(opt) : aotrun_cuda_method_set_option(m, opt);
}

static aotrun_status cuda_get_option(aotrun_method *m, const char *key,
                                     aotrun_option *out) {
  return m == NULL ? backend_get(key, out)
                   : aotrun_cuda_method_get_option(m, key, out);
}

static const char *cuda_last_error(const aotrun_method *m) {
  return m == NULL ? g_error.message : aotrun_cuda_method_last_error(m);
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
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  return AOTRUN_OK;
}
