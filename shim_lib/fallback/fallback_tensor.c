/* fallback_tensor.c: reading and checking the tensor arguments of fallback
 * ops (see fallback_tensor.h). No CUDA calls. */
#include "shim_lib/fallback/fallback_tensor.h"

#include <stdio.h>
#include <string.h>

AOTITorchError aotrun_fb_tensor_read(const char *op, const char *name,
                                     AtenTensorHandle h, aotrun_fb_tensor *t) {
  memset(t, 0, sizeof *t);
  t->name = name;
  t->handle = h;
  if (h == NULL) return aotrun_shim_fail("%s: argument '%s' is NULL", op, name);
  void *data = NULL;
  int64_t *sizes = NULL;
  int64_t *strides = NULL;
  if (aoti_torch_get_dim(h, &t->ndim) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_sizes(h, &sizes) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_strides(h, &strides) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_dtype(h, &t->dtype) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_device_type(h, &t->device_type) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_device_index(h, &t->device_index) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_data_ptr(h, &data) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot read the attributes of '%s': %s", op,
                            name, aotrun_shim_last_error());
  if (t->ndim < 0 || t->ndim > AOTRUN_FB_MAX_DIMS)
    return aotrun_shim_fail("%s: '%s' has %lld dims; at most %d are supported",
                            op, name, (long long)t->ndim, AOTRUN_FB_MAX_DIMS);
  if (t->ndim > 0 && (sizes == NULL || strides == NULL))
    return aotrun_shim_fail("%s: '%s' has no sizes or strides", op, name);
  for (int64_t d = 0; d < t->ndim; d++)
    if (sizes[d] < 0)
      return aotrun_shim_fail("%s: '%s' has negative size %lld in dim %lld", op,
                              name, (long long)sizes[d], (long long)d);
  t->sizes = sizes;
  t->strides = strides;
  t->data = (char *)data;
  t->elem_size = aotrun_fb_dtype_size(t->dtype);
  return AOTI_TORCH_SUCCESS;
}

const char *aotrun_fb_dtype_name(int32_t dtype, char *buf) {
  switch (dtype) {
    case 0: return "uint8";
    case 1: return "int8";
    case 2: return "int16";
    case 3: return "int32";
    case 4: return "int64";
    case 5: return "float16";
    case 6: return "float32";
    case 7: return "float64";
    case 8: return "complex32";
    case 9: return "complex64";
    case 10: return "complex128";
    case 11: return "bool";
    case 15: return "bfloat16";
    case 23: return "float8_e5m2";
    case 24: return "float8_e4m3fn";
    case 25: return "float8_e5m2fnuz";
    case 26: return "float8_e4m3fnuz";
    case 27: return "uint16";
    case 28: return "uint32";
    case 29: return "uint64";
    default: snprintf(buf, 24, "dtype %d", (int)dtype); return buf;
  }
}

size_t aotrun_fb_dtype_size(int32_t dtype) {
  switch (dtype) {
    case 0: case 1: case 11: case 23: case 24: case 25: case 26: return 1;
    case 2: case 5: case 15: case 27: return 2;
    case 3: case 6: case 8: case 28: return 4;
    case 4: case 7: case 9: case 29: return 8;
    case 10: return 16;
    default: return 0;
  }
}

AOTITorchError aotrun_fb_require_cuda(const char *op, const aotrun_fb_tensor *t,
                                      int32_t device, const char *ref_name) {
  if (t->device_type != AOTRUN_FB_DEVICE_CUDA)
    return aotrun_shim_fail(
        "%s: '%s' is on device type %d (%s), expected a CUDA tensor", op,
        t->name, (int)t->device_type,
        t->device_type == AOTRUN_FB_DEVICE_CPU ? "cpu" : "not cuda");
  if (device >= 0 && t->device_index != device)
    return aotrun_shim_fail("%s: '%s' is on cuda:%d but '%s' is on cuda:%d",
                            op, t->name, (int)t->device_index, ref_name,
                            (int)device);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_require_ndim(const char *op, const aotrun_fb_tensor *t,
                                      int64_t ndim) {
  if (t->ndim == ndim) return AOTI_TORCH_SUCCESS;
  char shape[128];
  return aotrun_shim_fail("%s: '%s' must be %lld-D, got %lld-D tensor %s", op,
                          t->name, (long long)ndim, (long long)t->ndim,
                          aotrun_fb_shape_str(t->sizes, t->ndim, shape,
                                              sizeof shape));
}

AOTITorchError aotrun_fb_require_same_dtype(const char *op,
                                            const aotrun_fb_tensor *t,
                                            const aotrun_fb_tensor *ref) {
  if (t->dtype == ref->dtype) return AOTI_TORCH_SUCCESS;
  char a[24], b[24];
  return aotrun_shim_fail("%s: '%s' has dtype %s but '%s' has dtype %s", op,
                          t->name, aotrun_fb_dtype_name(t->dtype, a), ref->name,
                          aotrun_fb_dtype_name(ref->dtype, b));
}

const char *aotrun_fb_shape_str(const int64_t *sizes, int64_t ndim, char *buf,
                                size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf, cap, "[");
  for (int64_t d = 0; d < ndim && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, d ? ", %lld" : "%lld",
                          (long long)sizes[d]);
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "]");
  if (n >= cap && cap >= 5) memcpy(buf + cap - 5, "...]", 5);
  return buf;
}

int64_t aotrun_fb_numel(const int64_t *sizes, int64_t n, int *overflow) {
  int64_t p = 1;
  *overflow = 0;
  for (int64_t d = 0; d < n; d++) {
    if (sizes[d] == 0) return 0;
  }
  for (int64_t d = 0; d < n; d++) {
    if (__builtin_mul_overflow(p, sizes[d], &p)) {
      *overflow = 1;
      return 0;
    }
  }
  return p;
}

int aotrun_fb_is_contiguous(const int64_t *sizes, const int64_t *strides,
                            int64_t ndim) {
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    if (sizes[d] == 0) return 1;
    if (sizes[d] != 1 && strides[d] != expected) return 0;
    expected *= sizes[d];
  }
  return 1;
}

void aotrun_fb_contiguous_strides(const int64_t *sizes, int64_t ndim,
                                  int64_t *strides) {
  int64_t s = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
}
