/*
 * method_runner.c: load one method of a program and run it (see
 * method_runner.h). Sections: dtypes, device strings, create/destroy, io
 * info, input checks, input handles, output copies, the whole call.
 */
#include "aot_loader/method_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/constant_target.h"
#include "aot_loader/method_weights.h"
#include "aot_loader/model_library.h"
#include "aot_loader/program.h"
#include "aot_loader/safetensors.h"
#include "aot_loader/scalar_type.h"
#include "aot_loader/tensor_views.h"

#define LAYOUT_STRIDED 0   /* DESIGN.md §2.3 */
#define SHIM_DEVICE_CPU 0
#define SHIM_DEVICE_CUDA 1
#define DEVICE_STR_MAX 32

struct aotrun_method_runner {
  const aotrun_host_api *host;
  char *method;
  char device_str[DEVICE_STR_MAX];
  DLDevice device;
  aotrun_runner_device_ops ops;
  aotrun_program *program;
  const aotrun_program_method *pm; /* points into program */
  aotrun_model_library *lib;
  aotrun_weight_cache *private_cache;
  aotrun_weight_cache *cache; /* private_cache or the shared one */
  aotrun_method_weights *weights;
  aotrun_io_info *io[2]; /* [AOTRUN_IO_INPUT], [AOTRUN_IO_OUTPUT] */
  size_t num_io[2];
};

/* ---- dtypes ------------------------------------------------------------- */

typedef struct dl_map {
  int32_t scalar;
  uint8_t code;
  uint8_t bits;
} dl_map;

static const dl_map kDlTypes[] = {
    {0, kDLUInt, 8},      {1, kDLInt, 8},       {2, kDLInt, 16},
    {3, kDLInt, 32},      {4, kDLInt, 64},      {5, kDLFloat, 16},
    {6, kDLFloat, 32},    {7, kDLFloat, 64},    {8, kDLComplex, 32},
    {9, kDLComplex, 64},  {10, kDLComplex, 128}, {11, AOTRUN_DL_CODE_BOOL, 8},
    {15, kDLBfloat, 16},  {23, AOTRUN_DL_CODE_FLOAT8_E5M2, 8},
    {24, AOTRUN_DL_CODE_FLOAT8_E4M3FN, 8},
    {25, AOTRUN_DL_CODE_FLOAT8_E5M2FNUZ, 8},
    {26, AOTRUN_DL_CODE_FLOAT8_E4M3FNUZ, 8},
    {27, kDLUInt, 16},    {28, kDLUInt, 32},    {29, kDLUInt, 64},
};
#define NUM_DL_TYPES (sizeof kDlTypes / sizeof kDlTypes[0])

int aotrun_dl_dtype_from_scalar_type(int32_t scalar_type, DLDataType *out) {
  for (size_t i = 0; i < NUM_DL_TYPES; i++)
    if (kDlTypes[i].scalar == scalar_type) {
      out->code = kDlTypes[i].code;
      out->bits = kDlTypes[i].bits;
      out->lanes = 1;
      return 1;
    }
  return 0;
}

int32_t aotrun_dl_dtype_to_scalar_type(DLDataType dtype) {
  if (dtype.lanes != 1) return -1;
  for (size_t i = 0; i < NUM_DL_TYPES; i++)
    if (kDlTypes[i].code == dtype.code && kDlTypes[i].bits == dtype.bits)
      return kDlTypes[i].scalar;
  return -1;
}

static const char *scalar_name(int32_t scalar) {
  switch (scalar) {
    case 8: return "complex32";
    case 10: return "complex128";
    case 25: return "float8_e5m2fnuz";
    case 26: return "float8_e4m3fnuz";
    default: break;
  }
  const aotrun_scalar_type *t = aotrun_scalar_type_from_code(scalar);
  return t != NULL ? t->name : NULL;
}

const char *aotrun_dl_dtype_describe(DLDataType dtype, char *buf,
                                     size_t size) {
  const char *name = scalar_name(aotrun_dl_dtype_to_scalar_type(dtype));
  if (name != NULL)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "DLDataType{code %u, bits %u, lanes %u}",
             (unsigned)dtype.code, (unsigned)dtype.bits,
             (unsigned)dtype.lanes);
  return buf;
}

static int same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

static size_t itemsize_of(DLDataType t) {
  return ((size_t)t.bits * t.lanes + 7) / 8;
}

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

static int is_cuda(const aotrun_method_runner *r) {
  return r->device.device_type == kDLCUDA;
}

static int host_memory(DLDeviceType t) {
  return t == kDLCPU || t == kDLCUDAHost;
}

static const char *device_type_name(DLDeviceType t) {
  switch (t) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "an unsupported device type";
  }
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
  free_io(r);
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
  if (st != AOTRUN_OK)
    return aotrun_error_set(err, st,
                            "method %s: the host has no named data '%s' (%s)",
                            r->method, key, aotrun_status_string(st));
  return AOTRUN_OK;
}

static aotrun_status load_library(aotrun_method_runner *r, aotrun_error *err) {
  const void *bytes;
  size_t size;
  void *token;
  aotrun_status st = fetch(r, r->pm->library, &bytes, &size, &token, err);
  if (st != AOTRUN_OK) return st;
  st = aotrun_model_library_load(bytes, size, r->device_str, &r->lib, err);
  r->host->release_named_data(r->host->ctx, token); /* now in a temp file */
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
  if (is_cuda(r)) return AOTRUN_OK;
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

/* Binds with the weights file mapped only for the duration of the call. */
static aotrun_status bind_weights(aotrun_method_runner *r,
                                  aotrun_weight_cache *cache,
                                  aotrun_error *err) {
  const void *bytes = NULL;
  size_t size = 0;
  void *token = NULL;
  aotrun_safetensors *st_view = NULL;
  aotrun_status st = AOTRUN_OK;
  int fetched = 0;
  if (r->pm->num_constants > 0) {
    if (r->program->weights == NULL)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "malformed manifest: method %s has %zu "
                              "constants but the program names no weights "
                              "file",
                              r->method, r->pm->num_constants);
    st = fetch(r, r->program->weights, &bytes, &size, &token, err);
    if (st != AOTRUN_OK) return st;
    fetched = 1;
    st = aotrun_safetensors_parse(bytes, size, r->program->weights, &st_view,
                                  err);
  }
  if (st == AOTRUN_OK) {
    aotrun_constant_target target = aotrun_constant_target_of_library(r->lib);
    st = aotrun_method_weights_bind(&target, r->pm, st_view, cache,
                                    aotrun_shim_tensor_view_ops(),
                                    r->device.device_id, &r->weights, err);
  }
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
  r->host = c->host;
  r->device = device;
  snprintf(r->device_str, sizeof r->device_str, "%s", c->device);
  r->ops = c->ops;
  st = create_steps(r, c, err);
  if (st != AOTRUN_OK) {
    aotrun_method_runner_destroy(r);
    return st;
  }
  *out = r;
  return AOTRUN_OK;
}

/* ---- accessors and io info ---------------------------------------------- */

size_t aotrun_method_runner_weight_copies(const aotrun_method_runner *r) {
  return r != NULL && r->cache != NULL ? aotrun_weight_cache_num_copies(r->cache)
                                       : 0;
}

const char *aotrun_method_runner_method(const aotrun_method_runner *r) {
  return r ? r->method : "";
}

DLDevice aotrun_method_runner_device(const aotrun_method_runner *r) {
  return r ? r->device : (DLDevice){kDLCPU, 0};
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
  /* Fill only what the caller's (possibly older, smaller) struct holds. */
  aotrun_io_info info = r->io[kind][index];
  uint32_t caller_size = out->struct_size;
  size_t n = caller_size < sizeof info ? caller_size : sizeof info;
  info.struct_size = caller_size;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

/* ---- input checks ------------------------------------------------------- */

/* One symbol bound by an input dim. */
typedef struct binding {
  const char *symbol;
  int64_t size;
  size_t input;
  int32_t dim;
} binding;

static const binding *find_binding(const binding *b, size_t n,
                                   const char *symbol) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(b[i].symbol, symbol) == 0) return &b[i];
  return NULL;
}

/* Row-major strides for shape, or 1 when strides is NULL / compact (size-1
 * dims may have any stride). */
static int is_compact(int32_t ndim, const int64_t *shape,
                      const int64_t *strides) {
  if (strides == NULL) return 1;
  int64_t expect = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (shape[d] != 1 && strides[d] != expect) return 0;
    expect *= shape[d];
  }
  return 1;
}

static aotrun_status check_device(const aotrun_method_runner *r,
                                  const char *what, size_t i,
                                  const char *name, DLDevice dev,
                                  aotrun_error *err) {
  if (host_memory(dev.device_type)) return AOTRUN_OK;
  if (is_cuda(r) && dev.device_type == kDLCUDA &&
      dev.device_id == r->device.device_id)
    return AOTRUN_OK;
  if (is_cuda(r))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s %zu (%s) is on %s:%d; method %s takes host "
                            "memory or %s",
                            what, i, name, device_type_name(dev.device_type),
                            (int)dev.device_id, r->method, r->device_str);
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s %zu (%s) is on %s:%d; method %s runs on the cpu "
                          "and takes host memory",
                          what, i, name, device_type_name(dev.device_type),
                          (int)dev.device_id, r->method);
}

static aotrun_status check_dims(const aotrun_method_runner *r, size_t i,
                                const DLTensor *t, binding *b, size_t *nb,
                                aotrun_error *err) {
  const aotrun_program_io *decl = &r->pm->inputs[i];
  for (int32_t d = 0; d < decl->ndim; d++) {
    int64_t got = t->shape[d];
    if (got < 0)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu (%s) has size %lld in dim %d, which "
                              "is negative",
                              i, decl->name, (long long)got, (int)d);
    if (decl->dims[d] >= 0) {
      if (got != decl->dims[d])
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "input %zu (%s) has size %lld in dim %d, "
                                "expected %lld",
                                i, decl->name, (long long)got, (int)d,
                                (long long)decl->dims[d]);
      continue;
    }
    const binding *prev = find_binding(b, *nb, decl->symbols[d]);
    if (prev != NULL && prev->size != got)
      return aotrun_error_set(
          err, AOTRUN_ERR_INVALID_ARGUMENT,
          "input %zu (%s) has size %lld in dim %d, expected %lld (symbol %s, "
          "as input %zu (%s) dim %d)",
          i, decl->name, (long long)got, (int)d, (long long)prev->size,
          decl->symbols[d], prev->input, r->pm->inputs[prev->input].name,
          (int)prev->dim);
    if (prev == NULL) b[(*nb)++] = (binding){decl->symbols[d], got, i, d};
  }
  return AOTRUN_OK;
}

static size_t numel(int32_t ndim, const int64_t *shape) {
  size_t n = 1;
  for (int32_t d = 0; d < ndim; d++) n *= (size_t)shape[d];
  return n;
}

static aotrun_status check_one_input(const aotrun_method_runner *r, size_t i,
                                     const DLTensor *t, binding *b,
                                     size_t *nb, aotrun_error *err) {
  const aotrun_io_info *decl = &r->io[0][i];
  char got[64], want[64];
  if (!same_dtype(t->dtype, decl->dtype))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has dtype %s, expected %s", i,
                            decl->name,
                            aotrun_dl_dtype_describe(t->dtype, got, sizeof got),
                            aotrun_dl_dtype_describe(decl->dtype, want,
                                                     sizeof want));
  if (t->ndim != decl->ndim)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has %d dims, expected %d", i,
                            decl->name, (int)t->ndim, (int)decl->ndim);
  if (t->ndim > 0 && t->shape == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has %d dims but no shape array",
                            i, decl->name, (int)t->ndim);
  aotrun_status st = check_dims(r, i, t, b, nb, err);
  if (st != AOTRUN_OK) return st;
  if (!is_compact(t->ndim, t->shape, t->strides))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "input %zu (%s) is not contiguous (row-major "
                            "strides are required)",
                            i, decl->name);
  if (t->data == NULL && numel(t->ndim, t->shape) > 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has no data", i, decl->name);
  return check_device(r, "input", i, decl->name, t->device, err);
}

aotrun_status aotrun_method_runner_check_inputs(const aotrun_method_runner *r,
                                                const DLTensor *inputs,
                                                size_t num_inputs,
                                                aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (num_inputs != r->num_io[0])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s takes %zu inputs, got %zu", r->method,
                            r->num_io[0], num_inputs);
  if (num_inputs > 0 && inputs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the inputs array is NULL", r->method);
  size_t max = 0;
  for (size_t i = 0; i < num_inputs; i++) max += (size_t)r->io[0][i].ndim;
  binding *b = calloc(max + 1, sizeof *b);
  if (b == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory checking the inputs of %s",
                            r->method);
  size_t nb = 0;
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < num_inputs && st == AOTRUN_OK; i++)
    st = check_one_input(r, i, &inputs[i], b, &nb, err);
  free(b);
  return st;
}

/* ---- input handles ------------------------------------------------------ */

static aotrun_status shim_failed(aotrun_error *err, aotrun_status code,
                                 const char *what, size_t i) {
  return aotrun_error_set(err, code, "%s for input/output %zu failed: %s",
                          what, i, aotrun_shim_last_error());
}

static void *data_of(const DLTensor *t) {
  return t->data == NULL ? NULL : (char *)t->data + t->byte_offset;
}

static void contiguous_strides(int32_t ndim, const int64_t *shape,
                               int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d] > 1 ? shape[d] : 1;
  }
}

static int32_t shim_device_type(DLDeviceType t) {
  return host_memory(t) ? SHIM_DEVICE_CPU : SHIM_DEVICE_CUDA;
}

/* A non-owning handle over t's memory, contiguous. */
static aotrun_status view_of(const DLTensor *t, size_t i,
                             AtenTensorHandle *out, aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_create_tensor_from_blob_v2(
      data_of(t), t->ndim, t->shape, strides, 0,
      aotrun_dl_dtype_to_scalar_type(t->dtype),
      shim_device_type(t->device.device_type),
      host_memory(t->device.device_type) ? 0 : t->device.device_id, out,
      LAYOUT_STRIDED, NULL, 0);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return shim_failed(err, AOTRUN_ERR_INTERNAL,
                       "aoti_torch_create_tensor_from_blob_v2", i);
  }
  return AOTRUN_OK;
}

static aotrun_status copy_bytes(aotrun_method_runner *r, void *dst,
                                const void *src, size_t bytes,
                                aotrun_copy_kind kind, void *stream,
                                aotrun_error *err) {
  if (bytes == 0) return AOTRUN_OK;
  if (r->ops.copy != NULL)
    return r->ops.copy(r->ops.ctx, dst, src, bytes, kind, stream, err);
  if (kind != AOTRUN_COPY_HOST_TO_HOST)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "method %s: no device copy for copy kind %d",
                            r->method, (int)kind);
  memcpy(dst, src, bytes);
  return AOTRUN_OK;
}

/* A device copy of host input t, in a fresh tensor the model will own. */
static aotrun_status staged_input(aotrun_method_runner *r, const DLTensor *t,
                                  size_t i, void *stream,
                                  AtenTensorHandle *out, aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_empty_strided(
      t->ndim, t->shape, strides, aotrun_dl_dtype_to_scalar_type(t->dtype),
      SHIM_DEVICE_CUDA, r->device.device_id, out);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return shim_failed(err, AOTRUN_ERR_OUT_OF_MEMORY,
                       "staging (aoti_torch_empty_strided)", i);
  }
  void *dst = NULL;
  (void)aoti_torch_get_data_ptr(*out, &dst);
  size_t bytes = numel(t->ndim, t->shape) * itemsize_of(t->dtype);
  aotrun_status st = copy_bytes(r, dst, data_of(t), bytes,
                                AOTRUN_COPY_HOST_TO_DEVICE, stream, err);
  if (st != AOTRUN_OK) {
    aoti_torch_delete_tensor_object(*out);
    *out = NULL;
    return aotrun_error_prefix(err, "staging input %zu: ", i);
  }
  return AOTRUN_OK;
}

void aotrun_method_runner_delete_handles(AtenTensorHandle *handles,
                                         size_t n) {
  if (handles == NULL) return;
  for (size_t i = 0; i < n; i++) {
    if (handles[i] != NULL) aoti_torch_delete_tensor_object(handles[i]);
    handles[i] = NULL;
  }
}

/* Fresh handles for one call: views of model-device memory, staged copies
 * of host memory on a cuda runner. */
static aotrun_status input_handles(aotrun_method_runner *r,
                                   const DLTensor *inputs, size_t n,
                                   void *stream, int allow_staging,
                                   AtenTensorHandle *h, aotrun_error *err) {
  for (size_t i = 0; i < n; i++) {
    const DLTensor *t = &inputs[i];
    aotrun_status st;
    if (is_cuda(r) && host_memory(t->device.device_type)) {
      if (!allow_staging)
        st = aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu is in host memory; run_handles "
                              "takes %s memory",
                              i, r->device_str);
      else
        st = staged_input(r, t, i, stream, &h[i], err);
    } else {
      st = view_of(t, i, &h[i], err);
    }
    if (st != AOTRUN_OK) {
      aotrun_method_runner_delete_handles(h, i);
      return st;
    }
  }
  return AOTRUN_OK;
}

/* The shim's current stream for staging and strided copies (cuda only). */
static aotrun_status open_guard(aotrun_method_runner *r, void *stream,
                                CUDAStreamGuardHandle *g, aotrun_error *err) {
  *g = NULL;
  if (!is_cuda(r)) return AOTRUN_OK;
  if (aoti_torch_create_cuda_stream_guard(stream, r->device.device_id, g) !=
      AOTI_TORCH_SUCCESS) {
    *g = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "method %s: cannot make %s's stream current: %s",
                            r->method, r->device_str,
                            aotrun_shim_last_error());
  }
  return AOTRUN_OK;
}

static void close_guard(CUDAStreamGuardHandle g) {
  if (g != NULL) (void)aoti_torch_delete_cuda_stream_guard(g);
}

static aotrun_status run_model(aotrun_method_runner *r, AtenTensorHandle *in,
                               size_t n_in, AtenTensorHandle *out,
                               size_t n_out, void *stream,
                               aotrun_error *err) {
  /* The model steals `in`, even when it fails. */
  aotrun_status st =
      aotrun_model_library_run(r->lib, in, n_in, out, n_out, stream, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

static aotrun_status check_handle_args(const aotrun_method_runner *r,
                                       size_t n_in, size_t n_out,
                                       aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (n_in != r->num_io[0] || n_out != r->num_io[1])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s takes %zu inputs and %zu outputs, got "
                            "%zu and %zu",
                            r->method, r->num_io[0], r->num_io[1], n_in,
                            n_out);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_run_handles(aotrun_method_runner *r,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               AtenTensorHandle *outputs,
                                               size_t num_outputs,
                                               void *stream,
                                               aotrun_error *err) {
  aotrun_status st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  AtenTensorHandle *h = calloc(num_inputs + 1, sizeof *h);
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory running %s", r->method);
  st = input_handles(r, inputs, num_inputs, stream, 0, h, err);
  if (st == AOTRUN_OK)
    st = run_model(r, h, num_inputs, outputs, num_outputs, stream, err);
  free(h);
  return st;
}

/* ---- output copies ------------------------------------------------------ */

/* What the shim says about one model output. */
typedef struct out_desc {
  int32_t dtype;
  int64_t ndim;
  int64_t *sizes;
  int64_t *strides;
  void *data;
  int32_t device_type;
} out_desc;

static aotrun_status describe_output(AtenTensorHandle h, size_t i,
                                     out_desc *o, aotrun_error *err) {
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "output %zu: the model returned no tensor", i);
  if (aoti_torch_get_dtype(h, &o->dtype) || aoti_torch_get_dim(h, &o->ndim) ||
      aoti_torch_get_sizes(h, &o->sizes) ||
      aoti_torch_get_strides(h, &o->strides) ||
      aoti_torch_get_data_ptr(h, &o->data) ||
      aoti_torch_get_device_type(h, &o->device_type))
    return shim_failed(err, AOTRUN_ERR_INTERNAL,
                       "reading the model's output tensor", i);
  return AOTRUN_OK;
}

static aotrun_status check_output_fits(const aotrun_method_runner *r,
                                       size_t i, const out_desc *o,
                                       const DLTensor *dst,
                                       aotrun_error *err) {
  const aotrun_io_info *decl = &r->io[1][i];
  char want[64];
  DLDataType src_dtype;
  if (!aotrun_dl_dtype_from_scalar_type(o->dtype, &src_dtype) ||
      !same_dtype(src_dtype, dst->dtype))
    return aotrun_error_set(
        err, AOTRUN_ERR_INVALID_ARGUMENT,
        "output %zu (%s) has dtype %s, the caller's tensor has %s", i,
        decl->name,
        scalar_name(o->dtype) ? scalar_name(o->dtype) : "unknown",
        aotrun_dl_dtype_describe(dst->dtype, want, sizeof want));
  if (o->ndim != dst->ndim)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has %lld dims, the caller's "
                            "tensor has %d",
                            i, decl->name, (long long)o->ndim,
                            (int)dst->ndim);
  if (dst->ndim > 0 && dst->shape == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has no shape array", i,
                            decl->name);
  for (int32_t d = 0; d < dst->ndim; d++) {
    int dynamic = d < decl->ndim && decl->shape[d] == AOTRUN_DYNAMIC_DIM;
    int64_t real = o->sizes[d], room = dst->shape[d];
    if (dynamic ? real > room : real != room)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "output %zu (%s) has size %lld in dim %d, the "
                              "caller's tensor has %s%lld",
                              i, decl->name, (long long)real, (int)d,
                              dynamic ? "room for " : "", (long long)room);
  }
  if (!is_compact(dst->ndim, dst->shape, dst->strides))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "output %zu (%s) is not contiguous (row-major "
                            "strides are required)",
                            i, decl->name);
  if (dst->data == NULL && numel(dst->ndim, o->sizes) > 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has no data", i, decl->name);
  return check_device(r, "output", i, decl->name, dst->device, err);
}

static aotrun_copy_kind kind_of(int32_t src_shim_device, DLDeviceType dst) {
  int src_host = src_shim_device == SHIM_DEVICE_CPU;
  int dst_host = host_memory(dst);
  if (src_host && dst_host) return AOTRUN_COPY_HOST_TO_HOST;
  if (src_host) return AOTRUN_COPY_HOST_TO_DEVICE;
  if (dst_host) return AOTRUN_COPY_DEVICE_TO_HOST;
  return AOTRUN_COPY_DEVICE_TO_DEVICE;
}

/* Copies one output (checked) and writes its real sizes. */
static aotrun_status copy_one_output(aotrun_method_runner *r, size_t i,
                                     AtenTensorHandle src, const out_desc *o,
                                     DLTensor *dst, void *stream,
                                     aotrun_error *err) {
  int32_t ndim = (int32_t)o->ndim;
  aotrun_status st = AOTRUN_OK;
  for (int32_t d = 0; d < ndim; d++) dst->shape[d] = o->sizes[d];
  size_t n = numel(ndim, o->sizes);
  if (n == 0) return AOTRUN_OK;
  if (is_compact(ndim, o->sizes, o->strides)) {
    st = copy_bytes(r, data_of(dst), o->data, n * itemsize_of(dst->dtype),
                    kind_of(o->device_type, dst->device.device_type), stream,
                    err);
  } else {
    /* Strided source: the shim's copy_ handles any strides and devices. */
    AtenTensorHandle view = NULL;
    st = view_of(dst, i, &view, err);
    if (st == AOTRUN_OK && aoti_torch_copy_(view, src, 0) != AOTI_TORCH_SUCCESS)
      st = shim_failed(err, AOTRUN_ERR_INTERNAL, "aoti_torch_copy_", i);
    if (view != NULL) aoti_torch_delete_tensor_object(view);
  }
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "output %zu (%s): ", i,
                               r->io[1][i].name);
  return AOTRUN_OK;
}

static aotrun_status synchronize(aotrun_method_runner *r, void *stream,
                                 aotrun_error *err) {
  if (r->ops.synchronize == NULL) return AOTRUN_OK;
  aotrun_status st = r->ops.synchronize(r->ops.ctx, stream, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_copy_outputs(aotrun_method_runner *r,
                                                AtenTensorHandle *sources,
                                                DLTensor *outputs,
                                                size_t num_outputs,
                                                void *stream,
                                                aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (num_outputs != r->num_io[1])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s returns %zu outputs, got %zu",
                            r->method, r->num_io[1], num_outputs);
  aotrun_status st = AOTRUN_OK;
  if (num_outputs > 0 && (outputs == NULL || sources == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  out_desc *d = calloc(num_outputs + 1, sizeof *d);
  if (d == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory copying the outputs of %s",
                            r->method);
  /* Every output is checked before the first byte is written. */
  for (size_t i = 0; i < num_outputs && st == AOTRUN_OK; i++) {
    st = describe_output(sources[i], i, &d[i], err);
    if (st == AOTRUN_OK) st = check_output_fits(r, i, &d[i], &outputs[i], err);
  }
  CUDAStreamGuardHandle guard = NULL;
  if (st == AOTRUN_OK) st = open_guard(r, stream, &guard, err);
  for (size_t i = 0; i < num_outputs && st == AOTRUN_OK; i++)
    st = copy_one_output(r, i, sources[i], &d[i], &outputs[i], stream, err);
  close_guard(guard);
  free(d);
  if (st != AOTRUN_OK) return st;
  return synchronize(r, stream, err);
}

/* ---- the whole call ----------------------------------------------------- */

aotrun_status aotrun_method_runner_run(aotrun_method_runner *r,
                                       const DLTensor *inputs,
                                       size_t num_inputs, DLTensor *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err) {
  aotrun_status st = aotrun_method_runner_check_inputs(r, inputs, num_inputs,
                                                       err);
  if (st != AOTRUN_OK) return st;
  st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  if (num_outputs > 0 && outputs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  AtenTensorHandle *in = calloc(num_inputs + 1, sizeof *in);
  AtenTensorHandle *out = calloc(num_outputs + 1, sizeof *out);
  CUDAStreamGuardHandle guard = NULL;
  if (in == NULL || out == NULL)
    st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory running %s", r->method);
  if (st == AOTRUN_OK) st = open_guard(r, stream, &guard, err);
  if (st == AOTRUN_OK)
    st = input_handles(r, inputs, num_inputs, stream, 1, in, err);
  close_guard(guard);
  if (st == AOTRUN_OK)
    st = run_model(r, in, num_inputs, out, num_outputs, stream, err);
  if (st == AOTRUN_OK)
    st = aotrun_method_runner_copy_outputs(r, out, outputs, num_outputs,
                                           stream, err);
  aotrun_method_runner_delete_handles(out, num_outputs);
  free(in);
  free(out);
  return st;
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
