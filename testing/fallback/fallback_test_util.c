/* fallback_test_util.c: see fallback_test_util.h. */
#include "testing/fallback/fallback_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

float fb_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = ldexpf((float)man, -24); /* zero and subnormals */
  } else if (exp == 31) {
    f = man ? NAN : INFINITY;
  } else {
    f = ldexpf((float)(man | 0x400), (int)exp - 25);
  }
  return sign ? -f : f;
}

uint16_t fb_float_to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(f)) return 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00; /* rounds to infinity */
  if (a < ldexpf(1.0f, -14)) {             /* subnormal: units of 2^-24 */
    return sign | (uint16_t)lrintf(a * ldexpf(1.0f, 24));
  }
  int e;
  float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  /* 11 significant bits: scale to [1024, 2048) and round to even. */
  long r = lrintf(ldexpf(m, 11));
  if (r == 2048) {
    r = 1024;
    e++;
  }
  int he = e - 1 + 15;
  if (he >= 31) return sign | 0x7c00;
  return sign | (uint16_t)(he << 10) | (uint16_t)(r - 1024);
}

float fb_bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t fb_float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (isnan(f)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

size_t fb_dtype_size(int32_t dtype) {
  switch (dtype) {
    case FB_UINT8: case FB_BOOL: return 1;
    case FB_F16: case FB_BF16: return 2;
    case FB_INT32: case FB_F32: return 4;
    case FB_INT64: case FB_F64: return 8;
    default: return 0;
  }
}

const char *fb_dtype_str(int32_t dtype) {
  switch (dtype) {
    case FB_UINT8: return "uint8";
    case FB_BOOL: return "bool";
    case FB_F16: return "float16";
    case FB_BF16: return "bfloat16";
    case FB_INT32: return "int32";
    case FB_F32: return "float32";
    case FB_INT64: return "int64";
    case FB_F64: return "float64";
    default: return "?";
  }
}

double fb_load(int32_t dtype, const void *base, int64_t i) {
  switch (dtype) {
    case FB_UINT8: case FB_BOOL: return ((const uint8_t *)base)[i];
    case FB_F16: return fb_half_to_float(((const uint16_t *)base)[i]);
    case FB_BF16: return fb_bf16_to_float(((const uint16_t *)base)[i]);
    case FB_INT32: return ((const int32_t *)base)[i];
    case FB_F32: return ((const float *)base)[i];
    case FB_INT64: return (double)((const int64_t *)base)[i];
    case FB_F64: return ((const double *)base)[i];
    default: return NAN;
  }
}

void fb_store(int32_t dtype, void *base, int64_t i, double v) {
  switch (dtype) {
    case FB_UINT8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case FB_BOOL: ((uint8_t *)base)[i] = v != 0.0; break;
    case FB_F16: ((uint16_t *)base)[i] = fb_float_to_half((float)v); break;
    case FB_BF16: ((uint16_t *)base)[i] = fb_float_to_bf16((float)v); break;
    case FB_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case FB_F32: ((float *)base)[i] = (float)v; break;
    case FB_INT64: ((int64_t *)base)[i] = (int64_t)v; break;
    case FB_F64: ((double *)base)[i] = v; break;
    default: break;
  }
}

double fb_uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

int fb_gpu_available(char *why, size_t cap) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, cap, "no usable CUDA device: cudaGetDeviceCount: %s",
             cudaGetErrorString(e));
    (void)cudaGetLastError();
    return 0;
  }
  if (n == 0) {
    snprintf(why, cap, "no CUDA device");
    return 0;
  }
  why[0] = '\0';
  return 1;
}

static int is_float(int32_t dtype) {
  return dtype == FB_F16 || dtype == FB_BF16 || dtype == FB_F32 ||
         dtype == FB_F64;
}

int fb_tensor_new(fb_tensor *t, int32_t dtype, int64_t ndim,
                  const int64_t *sizes, const int64_t *strides) {
  memset(t, 0, sizeof *t);
  if (ndim > FB_MAX_DIMS) return -1;
  t->dtype = dtype;
  t->esize = fb_dtype_size(dtype);
  t->ndim = ndim;
  int64_t s = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    t->sizes[d] = sizes[d];
    t->strides[d] = strides ? strides[d] : s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
  t->span = 1;
  for (int64_t d = 0; d < ndim; d++) {
    if (sizes[d] == 0) t->span = 0;
    if (t->span) t->span += (sizes[d] - 1) * t->strides[d];
  }
  size_t bytes = (size_t)(t->span > 0 ? t->span : 1) * t->esize;
  t->host = malloc(bytes);
  if (t->host == NULL) return -1;
  if (is_float(dtype))
    fb_tensor_fill_all(t, NAN);
  else
    memset(t->host, 0x5a, bytes);
  if (aoti_torch_empty_strided(ndim, t->sizes, t->strides, dtype, 1, 0,
                               &t->handle) != AOTI_TORCH_SUCCESS ||
      aoti_torch_get_data_ptr(t->handle, &t->dev) != AOTI_TORCH_SUCCESS) {
    fprintf(stderr, "fb_tensor_new: %s\n", aotrun_shim_last_error());
    return -1;
  }
  return 0;
}

int64_t fb_tensor_offset(const fb_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
  return off;
}

double fb_tensor_get(const fb_tensor *t, const int64_t *idx) {
  return fb_load(t->dtype, t->host, fb_tensor_offset(t, idx));
}

void fb_tensor_set(fb_tensor *t, const int64_t *idx, double v) {
  fb_store(t->dtype, t->host, fb_tensor_offset(t, idx), v);
}

void fb_tensor_fill_random(fb_tensor *t, uint64_t *state) {
  int64_t n = 1;
  for (int64_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  int64_t idx[FB_MAX_DIMS];
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t r = lin;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
      idx[d] = r % t->sizes[d];
      r /= t->sizes[d];
    }
    double v = fb_uniform(state);
    if (!is_float(t->dtype)) v = floor((v + 1.0) * 50.0);
    fb_tensor_set(t, idx, v);
  }
}

void fb_tensor_fill_all(fb_tensor *t, double v) {
  for (int64_t i = 0; i < t->span; i++) fb_store(t->dtype, t->host, i, v);
}

/* The shim allocates and frees stream-ordered on the current stream, which
 * may be a non-blocking one: settle everything before a plain cudaMemcpy. */
int fb_tensor_upload(fb_tensor *t) {
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  if (t->span == 0) return 0;
  return cudaMemcpy(t->dev, t->host, (size_t)t->span * t->esize,
                    cudaMemcpyHostToDevice) == cudaSuccess
             ? 0
             : -1;
}

int fb_tensor_download(fb_tensor *t) {
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  if (t->span == 0) return 0;
  return cudaMemcpy(t->host, t->dev, (size_t)t->span * t->esize,
                    cudaMemcpyDeviceToHost) == cudaSuccess
             ? 0
             : -1;
}

void fb_tensor_free(fb_tensor *t) {
  aoti_torch_delete_tensor_object(t->handle);
  free(t->host);
  memset(t, 0, sizeof *t);
}
