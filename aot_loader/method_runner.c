/*
 * method_runner.c: create and destroy a method runner, its io info and
 * accessors (see method_runner.h). Input validation is in method_inputs.c,
 * the call itself in method_run.c.
 */
#include "aot_loader/method_runner_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/constant_target.h"
#include "aot_loader/safetensors.h"
#include "aot_loader/tensor_views.h"

/* ---- device strings ----------------------------------------------------- */

/* "cpu" -> {kDLCPU,0}; "cuda" -> {kDLCUDA,0}; "cuda:N" -> {kDLCUDA,N}. */
static int parse_device(const char *s, DLDevice *out) {
  if (strcmp(s, "cpu") == 0) {
    *out = (DLDevice){kDLCPU, 0};
    return 1;
  }
  if (strncmp(s, "cuda", 4) != 0) return 0;
  if (s[4] == '\0') {
    *out = (DLDevice){kDLCUDA, 0};
    return 1;
  }
  if (s[4] != ':') return 0;
  const char *p = s + 5;
  size_t digits = strspn(p, "0123456789");
  if (digits == 0 || digits > 6 || p[digits] != '\0') return 0;
  *out = (DLDevice){kDLCUDA, atoi(p)};
  return 1;
}

/* ---- create / destroy --------------------------------------------------- */

static void free_io(aotrun_method_runner *r) {
  free(r->io[0]);
  free(r->io[1]);
}

void aotrun_method_runner_destroy(aotrun_method_runner *r) {
  if (r == NULL) return;
  /* The container aliases cache memory: delete it before the references. */
  aotrun_model_library_destroy(r->lib);
  aotrun_method_weights_release(r->weights);
  aotrun_weight_cache_destroy(r->private_cache);
  aotrun_program_destroy(r->program);
  aotrun_output_placement_free(r->placement);
  free_io(r);
  free(r->report_json);
  free(atomic_load(&r->report_after_run));
  free(r->method);
  free(r);
}

/* Fetches named data `key`; *token is what release_named_data takes. */
static aotrun_status fetch(const aotrun_method_runner *r, const char *key,
                           const void **data, size_t *size, void **token,
                           aotrun_error *err) {
  *data = NULL;
  *size = 0;
  *token = NULL;
  aotrun_status st =
      r->host->get_named_data(r->host->ctx, key, data, size, token);
  if (st != AOTRUN_OK) {
    /* A code the ABI does not know is reported as INTERNAL. */
    aotrun_status code = st > AOTRUN_OK && st <= AOTRUN_ERR_VERSION_MISMATCH
                             ? st
                             : AOTRUN_ERR_INTERNAL;
    return aotrun_error_set(err, code,
                            "the host has no named data '%s' (%s)", key,
                            aotrun_status_string(st));
  }
  if (*data == NULL && *size > 0) {
    r->host->release_named_data(r->host->ctx, *token);
    *token = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "the host's get_named_data('%s') returned OK "
                            "with NULL data of %zu bytes",
                            key, *size);
  }
  return AOTRUN_OK;
}

static aotrun_status load_library(aotrun_method_runner *r, aotrun_error *err) {
  const void *bytes;
  size_t size;
  void *token;
  aotrun_model_library_config lc = {.device = r->device_str,
                                    .name = r->pm->library,
                                    .temp_file = r->library_temp_file,
                                    .report = &r->report};
  aotrun_status st = aotrun_runner_gpu_arch(r, &lc.gpu_arch, err);
  if (st == AOTRUN_OK)
    st = aotrun_runner_driver_version(r, &lc.driver_version, err);
  if (st != AOTRUN_OK) return st;
  st = fetch(r, r->pm->library, &bytes, &size, &token, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  st = aotrun_model_library_load_with(bytes, size, &lc, &r->lib, err);
  r->host->release_named_data(r->host->ctx, token); /* now in its image */
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: loading '%s': ", r->method,
                               r->pm->library);
  size_t ni = aotrun_model_library_num_inputs(r->lib);
  size_t no = aotrun_model_library_num_outputs(r->lib);
  if (ni != r->pm->num_inputs || no != r->pm->num_outputs)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "malformed manifest: method %s declares %zu "
                            "inputs and %zu outputs, its library '%s' takes "
                            "%zu and returns %zu",
                            r->method, r->pm->num_inputs, r->pm->num_outputs,
                            r->pm->library, ni, no);
  return AOTRUN_OK;
}

/* A cpu runner has nowhere to put a cuda constant. */
static aotrun_status check_constant_devices(const aotrun_method_runner *r,
                                            aotrun_error *err) {
  if (runner_is_cuda(r)) return AOTRUN_OK;
  for (size_t i = 0; i < r->pm->num_constants; i++)
    if (r->pm->constants[i].device_type != AOTRUN_DEVICE_TYPE_CPU)
      return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                              "method %s: constant '%s' is on %s; a cpu "
                              "backend runs only programs whose constants "
                              "are on cpu",
                              r->method, r->pm->constants[i].name,
                              aotrun_program_device_type_name(
                                  r->pm->constants[i].device_type));
  return AOTRUN_OK;
}

static aotrun_status make_cache(aotrun_method_runner *r,
                                aotrun_weight_cache *shared,
                                aotrun_weight_cache **cache,
                                aotrun_error *err) {
  *cache = shared;
  if (shared != NULL) return AOTRUN_OK;
  const aotrun_device_ops *mem =
      r->ops.memory != NULL ? r->ops.memory : aotrun_host_device_ops();
  aotrun_status st = aotrun_weight_cache_create(
      mem, NULL, r->host->log, r->host->ctx, &r->private_cache, err);
  *cache = r->private_cache;
  return st;
}

/* Fetches and parses the weights file (the weight_read phase). */
static aotrun_status read_weights(aotrun_method_runner *r, const void **bytes,
                                  void **token, int *fetched,
                                  aotrun_safetensors **view,
                                  aotrun_error *err) {
  size_t size = 0;
  if (r->program->weights == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "malformed manifest: method %s has %zu "
                            "constants but the program names no weights "
                            "file",
                            r->method, r->pm->num_constants);
  int64_t t = aotrun_load_clock_ns();
  aotrun_status st = fetch(r, r->program->weights, bytes, &size, token, err);
  if (st == AOTRUN_OK) {
    *fetched = 1;
    r->report.weights_file_bytes = size;
    st = aotrun_safetensors_parse(*bytes, size, r->program->weights, view,
                                  err);
  }
  aotrun_load_report_add(&r->report, AOTRUN_LOAD_WEIGHT_READ, t);
  return st;
}

/* Checks the device has room, then binds (the weight_upload phase). */
static aotrun_status upload_weights(aotrun_method_runner *r,
                                    aotrun_weight_cache *cache,
                                    const aotrun_safetensors *view,
                                    aotrun_error *err) {
  aotrun_status st = aotrun_runner_check_weight_memory(r, cache, err);
  if (st != AOTRUN_OK) return st;
  aotrun_runner_bytes before = aotrun_runner_cache_bytes(cache);
  int64_t t = aotrun_load_clock_ns();
  aotrun_constant_target target = aotrun_constant_target_of_library(r->lib);
  st = aotrun_method_weights_bind(&target, r->pm, view, cache,
                                  aotrun_shim_tensor_view_ops(),
                                  r->device.device_id, &r->weights, err);
  aotrun_load_report_add(&r->report, AOTRUN_LOAD_WEIGHT_UPLOAD, t);
  if (st == AOTRUN_OK) aotrun_runner_note_weight_bytes(r, cache, before);
  return st;
}

/* Binds with the weights file mapped only for the duration of the call. */
static aotrun_status bind_weights(aotrun_method_runner *r,
                                  aotrun_weight_cache *cache,
                                  aotrun_error *err) {
  const void *bytes = NULL;
  void *token = NULL;
  aotrun_safetensors *st_view = NULL;
  aotrun_status st = AOTRUN_OK;
  int fetched = 0;
  if (r->pm->num_constants > 0)
    st = read_weights(r, &bytes, &token, &fetched, &st_view, err);
  if (st == AOTRUN_OK) st = upload_weights(r, cache, st_view, err);
  aotrun_safetensors_destroy(st_view);
  if (fetched) r->host->release_named_data(r->host->ctx, token);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

static aotrun_status fill_io(aotrun_io_info *out, const aotrun_program_io *in,
                             aotrun_error *err) {
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  out->ndim = in->ndim;
  out->name = in->name;
  if (!aotrun_dl_dtype_from_scalar_type(in->dtype, &out->dtype))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "%s has ScalarType %d, which DLPack cannot "
                            "express",
                            in->name, (int)in->dtype);
  for (int32_t d = 0; d < in->ndim; d++)
    out->shape[d] = in->dims[d] < 0 ? AOTRUN_DYNAMIC_DIM : in->dims[d];
  return AOTRUN_OK;
}

static aotrun_status make_io_info(aotrun_method_runner *r, aotrun_error *err) {
  const aotrun_program_io *src[2] = {r->pm->inputs, r->pm->outputs};
  r->num_io[0] = r->pm->num_inputs;
  r->num_io[1] = r->pm->num_outputs;
  for (int k = 0; k < 2; k++) {
    r->io[k] = calloc(r->num_io[k] + 1, sizeof(aotrun_io_info));
    if (r->io[k] == NULL)
      return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                              "out of memory for the io info of method %s",
                              r->method);
    for (size_t i = 0; i < r->num_io[k]; i++) {
      aotrun_status st = fill_io(&r->io[k][i], &src[k][i], err);
      if (st != AOTRUN_OK)
        return aotrun_error_prefix(err, "method %s %s %zu: ", r->method,
                                   k ? "output" : "input", i);
    }
  }
  return AOTRUN_OK;
}

static aotrun_status check_config(const aotrun_method_runner_config *c,
                                  aotrun_error *err) {
  if (c == NULL || c->host == NULL || c->method == NULL || c->device == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: config, host, method or device "
                            "is NULL");
  if (AOTRUN_VERSION_MAJOR(c->host->abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return aotrun_error_set(err, AOTRUN_ERR_VERSION_MISMATCH,
                            "method runner: the host api has ABI %u.%u, this "
                            "plugin has %u.%u",
                            AOTRUN_VERSION_MAJOR(c->host->abi_version),
                            AOTRUN_VERSION_MINOR(c->host->abi_version),
                            AOTRUN_ABI_VERSION_MAJOR, AOTRUN_ABI_VERSION_MINOR);
  /* Every member of 1.0 must be inside the host's struct_size. */
  if (!AOTRUN_TABLE_HAS(c->host, aotrun_host_api, free))
    return aotrun_error_set(err, AOTRUN_ERR_VERSION_MISMATCH,
                            "method runner: the host api is %u bytes, ABI "
                            "1.0 needs at least %zu",
                            (unsigned)c->host->struct_size,
                            offsetof(aotrun_host_api, free) + sizeof(void *));
  if (c->host->get_named_data == NULL || c->host->release_named_data == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: the host api lacks "
                            "get_named_data or release_named_data");
  if (c->manifest == NULL || c->manifest_size == 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: the manifest is empty");
  if (c->method[0] == '\0')
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: the method name is empty");
  return AOTRUN_OK;
}

static aotrun_status new_placement(aotrun_method_runner *r,
                                   aotrun_error *err) {
  return aotrun_output_placement_new(
      r->num_io[AOTRUN_IO_OUTPUT], r->device, r->method,
      r->host != NULL ? r->host->log : NULL,
      r->host != NULL ? r->host->ctx : NULL, &r->placement, err);
}

static aotrun_status create_steps(aotrun_method_runner *r,
                                  const aotrun_method_runner_config *c,
                                  aotrun_error *err) {
  aotrun_status st = aotrun_program_parse(c->manifest, c->manifest_size,
                                          &r->program, err);
  if (st == AOTRUN_OK)
    st = aotrun_program_find_method(r->program, r->method, &r->pm, err);
  if (st == AOTRUN_OK) st = make_io_info(r, err);
  if (st == AOTRUN_OK) st = check_constant_devices(r, err);
  if (st == AOTRUN_OK) st = load_library(r, err);
  aotrun_weight_cache *cache = NULL;
  if (st == AOTRUN_OK) st = make_cache(r, c->weight_cache, &cache, err);
  r->cache = cache;
  if (st == AOTRUN_OK) st = bind_weights(r, cache, err);
  if (st == AOTRUN_OK && aotrun_output_placement_wanted())
    st = new_placement(r, err);
  return st;
}

aotrun_status aotrun_method_runner_create(const aotrun_method_runner_config *c,
                                          aotrun_method_runner **out,
                                          aotrun_error *err) {
  if (out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: out is NULL");
  *out = NULL;
  aotrun_status st = check_config(c, err);
  if (st != AOTRUN_OK) return st;
  DLDevice device;
  if (strlen(c->device) >= DEVICE_STR_MAX || !parse_device(c->device, &device))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method runner: device \"%.32s\" is not \"cpu\", "
                            "\"cuda\" or \"cuda:N\"",
                            c->device);
  aotrun_method_runner *r = calloc(1, sizeof *r);
  size_t n = strlen(c->method) + 1;
  if (r != NULL) r->method = malloc(n);
  if (r == NULL || r->method == NULL) {
    free(r);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory creating method %s", c->method);
  }
  memcpy(r->method, c->method, n);
  int64_t start = aotrun_load_clock_ns();
  aotrun_load_report_init(&r->report);
  r->library_temp_file = c->library_temp_file;
  r->host = c->host;
  r->device = device;
  snprintf(r->device_str, sizeof r->device_str, "%s", c->device);
  r->ops = c->ops;
  st = create_steps(r, c, err);
  if (st != AOTRUN_OK) {
    aotrun_method_runner_destroy(r);
    return st;
  }
  aotrun_runner_finish_report(r, start);
  *out = r;
  return AOTRUN_OK;
}

/* ---- accessors and io info ---------------------------------------------- */

size_t aotrun_method_runner_placed_outputs(const aotrun_method_runner *r) {
  return r != NULL ? aotrun_output_placement_last_placed(r->placement) : 0;
}

int aotrun_method_runner_places_outputs(const aotrun_method_runner *r) {
  return r != NULL && aotrun_output_placement_enabled(r->placement);
}

aotrun_status aotrun_method_runner_set_output_placement(
    aotrun_method_runner *r, int on, aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output placement: runner is NULL");
  if (on && aotrun_output_placement_enabled(r->placement)) return AOTRUN_OK;
  /* Off, or on again after a call turned it off: a fresh state, which
   * learns the outputs' allocations anew. */
  aotrun_output_placement_free(r->placement);
  r->placement = NULL;
  return on ? new_placement(r, err) : AOTRUN_OK;
}

size_t aotrun_method_runner_weight_copies(const aotrun_method_runner *r) {
  return r != NULL && r->cache != NULL ? aotrun_weight_cache_num_copies(r->cache)
                                       : 0;
}

/* With first_run_ns known, the report is made again at its first read
 * (once; reads are serialised with execute per handle, the exchange keeps
 * a racing reader from leaking one). Out of memory: the load's report. */
const char *aotrun_method_runner_load_report(const aotrun_method_runner *r) {
  if (r == NULL) return "";
  aotrun_method_runner *w = (aotrun_method_runner *)r; /* a cache */
  char *after = atomic_load(&w->report_after_run);
  if (after == NULL && r->report.phase_ns[AOTRUN_LOAD_FIRST_RUN] >= 0) {
    char *made = aotrun_load_report_json(&r->report);
    char *none = NULL;
    if (made != NULL &&
        !atomic_compare_exchange_strong(&w->report_after_run, &none, made)) {
      free(made);
      made = none;
    }
    after = made;
  }
  if (after != NULL) return after;
  return r->report_json != NULL ? r->report_json : "";
}

const char *aotrun_method_runner_method(const aotrun_method_runner *r) {
  return r ? r->method : "";
}

DLDevice aotrun_method_runner_device(const aotrun_method_runner *r) {
  return r ? r->device : (DLDevice){kDLCPU, 0};
}

const aotrun_program_method *aotrun_method_runner_program_method(
    const aotrun_method_runner *r) {
  return r ? r->pm : NULL;
}

int aotrun_method_runner_has_run_single_threaded(
    const aotrun_method_runner *r) {
  return r != NULL && aotrun_model_library_has_run_single_threaded(r->lib);
}

size_t aotrun_method_runner_num_host_constants(const aotrun_method_runner *r) {
  return r ? aotrun_method_weights_num_host_constants(r->weights) : 0;
}

const char *aotrun_method_runner_host_constant(const aotrun_method_runner *r,
                                               size_t index) {
  return r ? aotrun_method_weights_host_constant(r->weights, index) : NULL;
}

int aotrun_method_runner_constants_unlisted(const aotrun_method_runner *r) {
  return r != NULL && aotrun_method_weights_constants_unlisted(r->weights);
}

static aotrun_status check_kind(const aotrun_method_runner *r, int32_t kind,
                                aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (kind != AOTRUN_IO_INPUT && kind != AOTRUN_IO_OUTPUT)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "io kind %d is neither AOTRUN_IO_INPUT (0) nor "
                            "AOTRUN_IO_OUTPUT (1)",
                            (int)kind);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_num_io(const aotrun_method_runner *r,
                                          int32_t kind, size_t *count,
                                          aotrun_error *err) {
  aotrun_status st = check_kind(r, kind, err);
  if (st != AOTRUN_OK) return st;
  if (count == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_num_io: count is NULL");
  *count = r->num_io[kind];
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_io_info(const aotrun_method_runner *r,
                                           int32_t kind, size_t index,
                                           aotrun_io_info *out,
                                           aotrun_error *err) {
  aotrun_status st = check_kind(r, kind, err);
  if (st != AOTRUN_OK) return st;
  if (out == NULL || out->struct_size < sizeof(uint32_t))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_io_info: out is NULL or its struct_size is "
                            "not set");
  if (index >= r->num_io[kind])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s has %zu %ss, index %zu is out of range",
                            r->method, r->num_io[kind],
                            kind ? "output" : "input", index);
  /* Fill only what the caller's (possibly older, smaller) struct holds and
   * report that size: min(caller's, ours) (ABI 1.1). */
  aotrun_io_info info = r->io[kind][index];
  uint32_t caller_size = out->struct_size;
  size_t n = caller_size < sizeof info ? caller_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

/* ---- compile specs ------------------------------------------------------ */

aotrun_status aotrun_method_runner_spec_method(const aotrun_key_value *specs,
                                               size_t num_specs,
                                               const char **method,
                                               aotrun_error *err) {
  *method = "forward";
  if (num_specs > 0 && specs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "init: %zu compile specs but the array is NULL",
                            num_specs);
  for (size_t i = 0; i < num_specs; i++) {
    if (specs[i].key == NULL || strcmp(specs[i].key, "method") != 0) continue;
    if (specs[i].value == NULL || specs[i].value[0] == '\0')
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "init: compile spec \"method\" is empty");
    *method = specs[i].value;
  }
  return AOTRUN_OK;
}
