/* item.c: aoti_torch_item_*: one element read back to the host and
 * converted like libtorch's Scalar::to<T>() (a value that does not fit the
 * requested type is an error, not a wrap). */
#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shim_lib/cuda_context.h"
#include "shim_lib/dtype.h"
#include "shim_lib/scalar_convert.h"
#include "shim_lib/tensor.h"

/* The element's bytes on the host; a CUDA read waits for the current
 * stream (the kernels that wrote it) and cannot run inside a capture. */
static AOTITorchError read_element(const char *fn, AtenTensorHandle h,
                                   unsigned char buf[16], int32_t *dtype) {
  aotrun_tensor_impl *t;
  if (aotrun_tensor_get(fn, "tensor", h, &t)) return AOTI_TORCH_FAILURE;
  int64_t n = aotrun_tensor_numel(t);
  if (n != 1)
    return aotrun_shim_fail("%s: a tensor with %lld elements cannot be converted to a scalar",
                            fn, (long long)n);
  size_t item = aotrun_dtype_size(t->dtype);
  *dtype = t->dtype;
  if (t->device_type == AOTRUN_DEV_CPU) {
    memcpy(buf, aotrun_tensor_data(t), item);
    return AOTI_TORCH_SUCCESS;
  }
  if (t->device_type != AOTRUN_DEV_CUDA)
    return aotrun_shim_fail("%s: device type %s is not supported", fn,
                            aotrun_device_name(t->device_type));
  if (aotrun_shim_refuse_if_capturing(fn)) return AOTI_TORCH_FAILURE;
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, t->device_index, &scope)) return AOTI_TORCH_FAILURE;
  cudaStream_t stream = (cudaStream_t)aotrun_cuda_stream_for(t->device_index);
  cudaError_t e = cudaMemcpyAsync(buf, aotrun_tensor_data(t), item,
                                  cudaMemcpyDeviceToHost, stream);
  const char *what = "cudaMemcpyAsync (device to host)";
  if (e == cudaSuccess) {
    e = cudaStreamSynchronize(stream);
    what = "cudaStreamSynchronize";
  }
  aotrun_cuda_device_exit(&scope);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS : aotrun_cuda_fail(fn, what, e);
}

/* The element as a real value plus an imaginary part (0 for real dtypes). */
static AOTITorchError read_value(const char *fn, AtenTensorHandle h,
                                 aotrun_value *v, double *imag) {
  unsigned char buf[16];
  int32_t dt = 0;
  if (read_element(fn, h, buf, &dt)) return AOTI_TORCH_FAILURE;
  *imag = 0.0;
  if (aotrun_dtype_is_real(dt)) {
    *v = aotrun_load(buf, dt);
    return AOTI_TORCH_SUCCESS;
  }
  v->is_float = 1;
  v->is_unsigned = 0;
  v->i = 0;
  if (dt == AOTRUN_DT_COMPLEX64) {
    float c[2];
    memcpy(c, buf, sizeof c);
    v->f = c[0];
    *imag = c[1];
  } else if (dt == AOTRUN_DT_COMPLEX128) {
    double c[2];
    memcpy(c, buf, sizeof c);
    v->f = c[0];
    *imag = c[1];
  } else {
    return aotrun_shim_fail("%s: reading a %s element is not supported", fn,
                            aotrun_dtype_name(dt));
  }
  return AOTI_TORCH_SUCCESS;
}

static void describe(aotrun_value v, char *out, size_t n) {
  if (v.is_float) snprintf(out, n, "%.17g", v.f);
  else if (v.is_unsigned) snprintf(out, n, "%llu", (unsigned long long)(uint64_t)v.i);
  else snprintf(out, n, "%lld", (long long)v.i);
}

static AOTITorchError overflow(const char *fn, aotrun_value v, const char *type) {
  char s[64];
  describe(v, s, sizeof s);
  return aotrun_shim_fail("%s: value %s cannot be converted to %s without overflow",
                          fn, s, type);
}

/* Reads a real value (imaginary part must be 0). */
static AOTITorchError read_real(const char *fn, AtenTensorHandle h, aotrun_value *v,
                                const char *type) {
  double imag;
  if (read_value(fn, h, v, &imag)) return AOTI_TORCH_FAILURE;
  if (imag != 0.0)
    return aotrun_shim_fail("%s: complex value (%g, %g) cannot be converted to %s",
                            fn, v->f, imag, type);
  return AOTI_TORCH_SUCCESS;
}

/* An integer target in [lo, hi]; floats truncate toward zero. */
static AOTITorchError read_int(const char *fn, AtenTensorHandle h, __int128 lo,
                               __int128 hi, const char *type, __int128 *out) {
  aotrun_value v;
  if (read_real(fn, h, &v, type)) return AOTI_TORCH_FAILURE;
  __int128 x;
  if (v.is_float) {
    if (isnan(v.f) || fabs(v.f) >= 1e30) return overflow(fn, v, type);
    x = (__int128)v.f;
  } else {
    x = v.is_unsigned ? (__int128)(uint64_t)v.i : (__int128)v.i;
  }
  if (x < lo || x > hi) return overflow(fn, v, type);
  *out = x;
  return AOTI_TORCH_SUCCESS;
}

/* A floating target: finite values beyond max overflow (inf/nan pass). */
static AOTITorchError read_float(const char *fn, AtenTensorHandle h, double max,
                                 const char *type, double *out) {
  aotrun_value v;
  if (read_real(fn, h, &v, type)) return AOTI_TORCH_FAILURE;
  double f = aotrun_value_as_double(v);
  if (isfinite(f) && fabs(f) > max) return overflow(fn, v, type);
  *out = f;
  return AOTI_TORCH_SUCCESS;
}

#define CHECK_OUT(fn, ret) \
  if (!(ret)) return aotrun_shim_fail("%s: ret_value is NULL", fn)

#define ITEM_INT(name, ctype, lo, hi)                                       \
  AOTITorchError aoti_torch_item_##name(AtenTensorHandle t, ctype *ret) {   \
    static const char fn[] = "aoti_torch_item_" #name;                      \
    CHECK_OUT(fn, ret);                                                     \
    __int128 x = 0;                                                         \
    if (read_int(fn, t, (lo), (hi), #name, &x)) return AOTI_TORCH_FAILURE;  \
    *ret = (ctype)x;                                                        \
    return AOTI_TORCH_SUCCESS;                                              \
  }

ITEM_INT(uint8, uint8_t, 0, UINT8_MAX)
ITEM_INT(uint16, uint16_t, 0, UINT16_MAX)
ITEM_INT(uint32, uint32_t, 0, UINT32_MAX)
ITEM_INT(uint64, uint64_t, 0, (__int128)UINT64_MAX)
ITEM_INT(int8, int8_t, INT8_MIN, INT8_MAX)
ITEM_INT(int16, int16_t, INT16_MIN, INT16_MAX)
ITEM_INT(int32, int32_t, INT32_MIN, INT32_MAX)
ITEM_INT(int64, int64_t, INT64_MIN, INT64_MAX)

AOTITorchError aoti_torch_item_float64(AtenTensorHandle t, double *ret) {
  static const char fn[] = "aoti_torch_item_float64";
  CHECK_OUT(fn, ret);
  return read_float(fn, t, DBL_MAX, "float64", ret);
}

AOTITorchError aoti_torch_item_float32(AtenTensorHandle t, float *ret) {
  static const char fn[] = "aoti_torch_item_float32";
  CHECK_OUT(fn, ret);
  double f = 0;
  if (read_float(fn, t, FLT_MAX, "float32", &f)) return AOTI_TORCH_FAILURE;
  *ret = (float)f;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_item_float16(AtenTensorHandle t, aotrun_half_bits *ret) {
  static const char fn[] = "aoti_torch_item_float16";
  CHECK_OUT(fn, ret);
  double f = 0;
  if (read_float(fn, t, 65504.0, "float16", &f)) return AOTI_TORCH_FAILURE;
  *ret = aotrun_float_to_half((float)f);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle t, aotrun_bfloat16_bits *ret) {
  static const char fn[] = "aoti_torch_item_bfloat16";
  CHECK_OUT(fn, ret);
  double f = 0;
  if (read_float(fn, t, 3.3895313892515355e38, "bfloat16", &f)) return AOTI_TORCH_FAILURE;
  *ret = aotrun_float_to_bf16((float)f);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_item_bool(AtenTensorHandle t, AOTRUN_SHIM_BOOL *ret) {
  static const char fn[] = "aoti_torch_item_bool";
  CHECK_OUT(fn, ret);
  aotrun_value v;
  double imag;
  if (read_value(fn, t, &v, &imag)) return AOTI_TORCH_FAILURE;
  *ret = aotrun_value_nonzero(v) || imag != 0.0;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_item_complex64(AtenTensorHandle t, aotrun_complex64 *ret) {
  static const char fn[] = "aoti_torch_item_complex64";
  CHECK_OUT(fn, ret);
  aotrun_value v;
  double imag;
  if (read_value(fn, t, &v, &imag)) return AOTI_TORCH_FAILURE;
  ret->real = (float)aotrun_value_as_double(v);
  ret->imag = (float)imag;
  return AOTI_TORCH_SUCCESS;
}
