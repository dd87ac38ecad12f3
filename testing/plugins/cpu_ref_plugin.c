/*
 * cpu_ref_plugin.c: the CPU reference backend plugin ("cpu_ref"): a thin
 * plugin over aot_loader/method_runner with device "cpu". It runs programs
 * whose model libraries were built for the CPU (the C fixture model in CI),
 * through the same ABI and loading path as the CUDA backend, so a host can
 * swap one for the other. Its one option is the read-only method option
 * load_report (a JSON string, docs/loading.md).
 */
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner.h"
#include "plugin_api/aotrun_plugin.h"

struct aotrun_method {
  aotrun_method_runner *runner;
  aotrun_error err; /* last failed call on this handle */
};

/* The message of the last failed init on this thread. */
static _Thread_local aotrun_error g_init_error;

static const char *cpu_ref_name(void) { return "cpu_ref"; }

static int32_t cpu_ref_is_available(char *reason, size_t reason_size) {
  if (reason != NULL && reason_size > 0) reason[0] = '\0';
  return 1;
}

static aotrun_status cpu_ref_init(const aotrun_host_api *host,
                                  const void *processed, size_t processed_size,
                                  const aotrun_key_value *specs,
                                  size_t num_specs, aotrun_method **out) {
  aotrun_error *err = &g_init_error;
  aotrun_error_clear(err);
  if (out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "init: out is NULL");
  *out = NULL;
  const char *method = NULL;
  aotrun_status st =
      aotrun_method_runner_spec_method(specs, num_specs, &method, err);
  if (st != AOTRUN_OK) return st;
  aotrun_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "init: out of memory");
  aotrun_method_runner_config config = {
      .host = host,
      .manifest = processed,
      .manifest_size = processed_size,
      .method = method,
      .device = "cpu",
  };
  st = aotrun_method_runner_create(&config, &m->runner, err);
  if (st != AOTRUN_OK) {
    free(m);
    return st;
  }
  *out = m;
  return AOTRUN_OK;
}

static aotrun_status cpu_ref_execute(aotrun_method *m, const DLTensor *inputs,
                                     size_t num_inputs, DLTensor *outputs,
                                     size_t num_outputs) {
  if (m == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  aotrun_error_clear(&m->err);
  return aotrun_method_runner_run(m->runner, inputs, num_inputs, outputs,
                                  num_outputs, NULL, &m->err);
}

static void cpu_ref_destroy(aotrun_method *m) {
  if (m == NULL) return;
  aotrun_method_runner_destroy(m->runner);
  free(m);
}

#define LOAD_REPORT "load_report"

static aotrun_status no_such_option(aotrun_method *m, const char *key) {
  /* Backend-wide (m == NULL): reported like a failed init. */
  aotrun_error *err = m != NULL ? &m->err : &g_init_error;
  return aotrun_error_set(err, AOTRUN_ERR_NOT_FOUND,
                          "backend cpu_ref has no option '%s' (its only "
                          "option is the read-only method option "
                          "load_report)",
                          key != NULL ? key : "(null)");
}

static aotrun_status cpu_ref_set_option(aotrun_method *m,
                                        const aotrun_option *option) {
  const char *key = option != NULL ? option->key : NULL;
  if (key != NULL && strcmp(key, LOAD_REPORT) == 0)
    return aotrun_error_set(m != NULL ? &m->err : &g_init_error,
                            AOTRUN_ERR_NOT_SUPPORTED,
                            "option 'load_report' is read-only");
  return no_such_option(m, key);
}

static aotrun_status cpu_ref_get_option(aotrun_method *m, const char *key,
                                        aotrun_option *out) {
  if (key == NULL || strcmp(key, LOAD_REPORT) != 0)
    return no_such_option(m, key);
  if (m == NULL)
    return aotrun_error_set(&g_init_error, AOTRUN_ERR_NOT_SUPPORTED,
                            "option 'load_report' can only be read on a "
                            "method handle");
  if (out == NULL)
    return aotrun_error_set(&m->err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option: out is NULL");
  memset(out, 0, sizeof *out);
  out->key = LOAD_REPORT;
  out->type = AOTRUN_OPTION_STRING;
  out->string_value = aotrun_method_runner_load_report(m->runner);
  return AOTRUN_OK;
}

static aotrun_status cpu_ref_get_num_io(const aotrun_method *m, int32_t kind,
                                        size_t *count) {
  if (m == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  return aotrun_method_runner_num_io(m->runner, kind, count,
                                     (aotrun_error *)&m->err);
}

static aotrun_status cpu_ref_get_io_info(const aotrun_method *m, int32_t kind,
                                         size_t index, aotrun_io_info *out) {
  if (m == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  return aotrun_method_runner_io_info(m->runner, kind, index, out,
                                      (aotrun_error *)&m->err);
}

static const char *cpu_ref_last_error(const aotrun_method *m) {
  return m != NULL ? m->err.message : g_init_error.message;
}

static const aotrun_backend_api kApi = {
    .abi_version = AOTRUN_ABI_VERSION,
    .struct_size = sizeof(aotrun_backend_api),
    .get_name = cpu_ref_name,
    .is_available = cpu_ref_is_available,
    .init = cpu_ref_init,
    .execute = cpu_ref_execute,
    .destroy = cpu_ref_destroy,
    .set_option = cpu_ref_set_option,
    .get_option = cpu_ref_get_option,
    .get_num_io = cpu_ref_get_num_io,
    .get_io_info = cpu_ref_get_io_info,
    .last_error = cpu_ref_last_error,
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  return AOTRUN_OK;
}
