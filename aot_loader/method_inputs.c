/*
 * method_inputs.c: the checks every input passes before anything runs:
 * dtype, rank, static dims, symbolic dims (one symbol, one size), layout,
 * data and device, then the dynamic-dim ranges (dim_ranges.h; see
 * method_runner.h).
 */
#include "aot_loader/method_runner_internal.h"

#include "aot_loader/dim_ranges.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *device_type_name(DLDeviceType t) {
  switch (t) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "an unsupported device type";
  }
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

aotrun_status aotrun_runner_check_device(const aotrun_method_runner *r,
                                         const char *what, size_t i,
                                         const char *name, DLDevice dev,
                                         aotrun_error *err) {
  if (runner_host_memory(dev.device_type)) return AOTRUN_OK;
  if (runner_is_cuda(r) && dev.device_type == kDLCUDA &&
      dev.device_id == r->device.device_id)
    return AOTRUN_OK;
  if (runner_is_cuda(r))
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

static aotrun_status check_one_input(const aotrun_method_runner *r, size_t i,
                                     const DLTensor *t, binding *b,
                                     size_t *nb, aotrun_error *err) {
  const aotrun_io_info *decl = &r->io[0][i];
  char got[64], want[64];
  if (!aotrun_dl_same_dtype(t->dtype, decl->dtype))
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
  /* Symbolic dims take any size: their product (and the byte size the run
   * copies) must not overflow, or a huge shape would wrap to a small or
   * zero size (and NULL data would pass). */
  size_t bytes = 0;
  if (!runner_checked_nbytes(t->ndim, t->shape, aotrun_dl_itemsize(t->dtype),
                             &bytes))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) is too large: its byte size "
                            "overflows a 64-bit count",
                            i, decl->name);
  if (!runner_is_compact(t->ndim, t->shape, t->strides))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "input %zu (%s) is not contiguous (row-major "
                            "strides are required)",
                            i, decl->name);
  if (t->data == NULL && bytes > 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) has no data", i, decl->name);
  /* Kernels (and C models) load whole elements: a misaligned start is
   * undefined behaviour there, so it is refused here. */
  size_t item = aotrun_dl_itemsize(t->dtype);
  uintptr_t start = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  if (t->data != NULL && bytes > 0 && item > 1 && item <= 16 &&
      start % item != 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "input %zu (%s) starts at an address that is not "
                            "a multiple of its %zu-byte element size (data "
                            "%p + byte_offset %llu)",
                            i, decl->name, item, t->data,
                            (unsigned long long)t->byte_offset);
  return aotrun_runner_check_device(r, "input", i, decl->name, t->device,
                                    err);
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
  /* On the stack for the usual few dims: no heap work per execute. */
  binding stack[64];
  binding *b = max < 64 ? stack : calloc(max + 1, sizeof *b);
  if (b == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory checking the inputs of %s",
                            r->method);
  size_t nb = 0;
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < num_inputs && st == AOTRUN_OK; i++)
    st = check_one_input(r, i, &inputs[i], b, &nb, err);
  if (b != stack) free(b);
  /* Ranges and relations last: every input has its rank and sizes >= 0. */
  if (st == AOTRUN_OK)
    st = aotrun_dim_ranges_check(r->pm, inputs, num_inputs, err);
  return st;
}
