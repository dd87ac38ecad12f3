/* print_tensor.c: aoti_torch_print_tensor_handle (Inductor's debug printer):
 * metadata, plus the first values of a CPU tensor of a real dtype. */
#include <stdio.h>

#include "shim_lib/dtype.h"
#include "shim_lib/scalar_convert.h"
#include "shim_lib/tensor.h"

#define PRINT_MAX_VALUES 16

static void print_dims(const char *label, const int64_t *v, int64_t n) {
  fprintf(stderr, " %s=[", label);
  for (int64_t i = 0; i < n; i++) fprintf(stderr, "%s%lld", i ? ", " : "", (long long)v[i]);
  fprintf(stderr, "]");
}

/* Values in row-major index order, up to PRINT_MAX_VALUES. */
static void print_values(const aotrun_tensor_impl *t) {
  int64_t n = aotrun_tensor_numel(t), idx[AOTRUN_SHIM_MAX_DIMS] = {0};
  size_t item = aotrun_dtype_size(t->dtype);
  const char *base = aotrun_tensor_data(t);
  fprintf(stderr, " values=[");
  for (int64_t k = 0; k < n && k < PRINT_MAX_VALUES; k++) {
    int64_t off = 0;
    for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    aotrun_value v = aotrun_load(base + off * (int64_t)item, t->dtype);
    fprintf(stderr, "%s%g", k ? ", " : "", aotrun_value_as_double(v));
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->sizes[d]) break;
      idx[d] = 0;
    }
  }
  fprintf(stderr, "%s]", n > PRINT_MAX_VALUES ? ", ..." : "");
}

void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char *msg) {
  const char *label = msg ? msg : "tensor";
  if (!self || !self->impl->storage) {
    fprintf(stderr, "aotrun: %s: %s tensor\n", label, self ? "undefined" : "NULL");
    return;
  }
  const aotrun_tensor_impl *t = self->impl;
  fprintf(stderr, "aotrun: %s: dtype=%s device=%s:%d", label,
          aotrun_dtype_name(t->dtype), aotrun_device_name(t->device_type),
          (int)t->device_index);
  print_dims("sizes", t->sizes, t->ndim);
  print_dims("strides", t->strides, t->ndim);
  fprintf(stderr, " storage_offset=%lld", (long long)t->storage_offset);
  if (t->device_type == AOTRUN_DEV_CPU && aotrun_dtype_is_real(t->dtype) &&
      aotrun_tensor_data(t))
    print_values(t);
  fprintf(stderr, "\n");
}
