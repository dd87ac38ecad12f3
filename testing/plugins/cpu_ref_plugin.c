/*
 * cpu_ref_plugin.c: the CPU reference backend plugin ("cpu_ref"): a thin
 * plugin over aot_loader/method_runner with device "cpu". It runs programs
 * whose model libraries were built for the CPU (the C fixture model in CI),
 * through the same ABI and loading path as the CUDA backend, so a host can
 * swap one for the other. Its one option is the read-only method option
 * load_report (a JSON string, docs/loading.md). ABI 1.1 execute_ex
 * (backend-allocated outputs, the too-small report) is in
 * cpu_ref_execute_ex.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/global_symbols.h"
#include "aot_loader/load_report.h"
#include "aot_loader/query_error.h"
#include "testing/plugins/cpu_ref_identity.h"
#include "testing/plugins/cpu_ref_plugin.h"

/* The message of the last failed init on this thread. */
static _Thread_local aotrun_error g_init_error;

aotrun_error *cpu_ref_thread_error(void) { return &g_init_error; }

aotrun_status cpu_ref_null_handle(const char *call) {
  return aotrun_error_set(&g_init_error, AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s: the method handle is NULL", call);
}

/* The const queries keep their failures apart from the handle
 * (aot_loader/query_error.h). */
void cpu_ref_forget_query_error(const aotrun_method *m) {
  aotrun_query_error_forget(m->serial);
}

/* The backend object (backend_data): what the backend is, read through
 * `self`; cpu_ref has no backend-wide state that changes. */
typedef struct cpu_ref_backend {
  const char *name;
} cpu_ref_backend;
static const cpu_ref_backend kBackend = {"cpu_ref"};

static const char *cpu_ref_name(void) { return kBackend.name; }

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
  m->serial = aotrun_query_serial_next();
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
  if (m == NULL) return cpu_ref_null_handle("execute");
  int64_t start = aotrun_load_clock_ns();
  aotrun_error_clear(&m->err);
  cpu_ref_forget_query_error(m);
  aotrun_status st = aotrun_method_runner_run(
      m->runner, inputs, num_inputs, outputs, num_outputs, NULL, &m->err);
  if (st == AOTRUN_OK) aotrun_method_runner_note_call(m->runner, start);
  return st;
}

static void cpu_ref_destroy(aotrun_method *m) {
  if (m == NULL) return;
  cpu_ref_forget_query_error(m);
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
  if (m != NULL) cpu_ref_forget_query_error(m);
  const char *key = option != NULL ? option->key : NULL;
  if (key != NULL && strcmp(key, LOAD_REPORT) == 0)
    return aotrun_error_set(m != NULL ? &m->err : &g_init_error,
                            AOTRUN_ERR_NOT_SUPPORTED,
                            "option 'load_report' is read-only");
  return no_such_option(m, key);
}

static aotrun_status cpu_ref_get_option(aotrun_method *m, const char *key,
                                        aotrun_option *out) {
  if (m != NULL) cpu_ref_forget_query_error(m);
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
  if (m == NULL) return cpu_ref_null_handle("get_num_io");
  aotrun_error e = {0};
  return aotrun_query_error_keep(
      m->serial, aotrun_method_runner_num_io(m->runner, kind, count, &e), &e);
}

static aotrun_status cpu_ref_get_io_info(const aotrun_method *m, int32_t kind,
                                         size_t index, aotrun_io_info *out) {
  if (m == NULL) return cpu_ref_null_handle("get_io_info");
  aotrun_error e = {0};
  return aotrun_query_error_keep(
      m->serial,
      aotrun_method_runner_io_info(m->runner, kind, index, out, &e), &e);
}

static const char *cpu_ref_last_error(const aotrun_method *m) {
  if (m == NULL) return g_init_error.message;
  const char *kept = aotrun_query_error_message(m->serial);
  return kept != NULL ? kept : m->err.message;
}

/* ---- ABI 1.1 context members ---- */

static int32_t cpu_ref_is_available_ex(const aotrun_backend_api *self,
                                       char *reason, size_t reason_size) {
  (void)self;
  return cpu_ref_is_available(reason, reason_size);
}

static aotrun_status cpu_ref_init_ex(const aotrun_backend_api *self,
                                     const aotrun_host_api *host,
                                     const void *processed, size_t size,
                                     const aotrun_key_value *specs,
                                     size_t num_specs, aotrun_method **out) {
  (void)self;
  return cpu_ref_init(host, processed, size, specs, num_specs, out);
}

/* cpu_ref has no backend-wide options: the 1.0 answers, per key. */
static aotrun_status cpu_ref_set_backend_option(const aotrun_backend_api *self,
                                                const aotrun_option *option) {
  (void)self;
  return cpu_ref_set_option(NULL, option);
}

static aotrun_status cpu_ref_get_backend_option(const aotrun_backend_api *self,
                                                const char *key,
                                                aotrun_option *out, char *buf,
                                                size_t buf_size) {
  (void)self;
  (void)buf;
  (void)buf_size;
  return cpu_ref_get_option(NULL, key, out);
}

/* Entry-symbol calls not yet balanced by deinit (ABI 1.1). */
static pthread_mutex_t g_users_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_users;

/* The last deinit drops the loader's handles on the global symbol scope
 * (taken when a model loaded): then nothing holds or points into this
 * library, which has no other process-wide state. */
static void cpu_ref_deinit(const aotrun_backend_api *self) {
  (void)self;
  pthread_mutex_lock(&g_users_mu);
  if (g_users > 0 && --g_users == 0) aotrun_global_symbols_release();
  pthread_mutex_unlock(&g_users_mu);
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
    /* ABI 1.1: context, identity, devices, can_run */
    .backend_data = (void *)&kBackend,
    .is_available_ex = cpu_ref_is_available_ex,
    .init_ex = cpu_ref_init_ex,
    .set_backend_option = cpu_ref_set_backend_option,
    .get_backend_option = cpu_ref_get_backend_option,
    .get_info = cpu_ref_get_info,
    .get_device_count = cpu_ref_get_device_count,
    .get_device_info = cpu_ref_get_device_info,
    .can_run = cpu_ref_can_run,
    /* -- execution, ABI 1.1 -- */
    .execute_ex = aotrun_cpu_ref_execute_ex,
    .synchronize = aotrun_cpu_ref_synchronize,
    /* -- unload, ABI 1.1 -- */
    .deinit = cpu_ref_deinit,
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  pthread_mutex_lock(&g_users_mu);
  g_users++; /* balanced by deinit */
  pthread_mutex_unlock(&g_users_mu);
  return AOTRUN_OK;
}
