/*
 * fallback_test_util.h: helpers for the GPU tests and the benchmark of the
 * CUDA fallback ops: dtype conversions done on the host (float16/bfloat16
 * with round-to-nearest-even), a seeded generator, and device tensors with
 * a host mirror of their whole strided storage.
 */
#ifndef AOTRUN_TESTING_FALLBACK_TEST_UTIL_H
#define AOTRUN_TESTING_FALLBACK_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

#define FB_MAX_DIMS 8

/* ScalarType codes (DESIGN.md §2.3). */
enum {
  FB_UINT8 = 0,
  FB_INT32 = 3,
  FB_INT64 = 4,
  FB_F16 = 5,
  FB_F32 = 6,
  FB_F64 = 7,
  FB_BOOL = 11,
  FB_BF16 = 15,
};

float fb_half_to_float(uint16_t h);
uint16_t fb_float_to_half(float f);
float fb_bf16_to_float(uint16_t b);
uint16_t fb_float_to_bf16(float f);

size_t fb_dtype_size(int32_t dtype);
const char *fb_dtype_str(int32_t dtype);
/* Element i of a host buffer of `dtype`, as a double, and the reverse. */
double fb_load(int32_t dtype, const void *base, int64_t i);
void fb_store(int32_t dtype, void *base, int64_t i, double v);

/* Deterministic uniform doubles in [-1, 1). */
double fb_uniform(uint64_t *state);

/* 1 when a CUDA device can run kernels; otherwise 0 and the reason. */
int fb_gpu_available(char *why, size_t cap);

/* A CUDA tensor made by aoti_torch_empty_strided and a host copy of its
 * whole storage (span elements, padding included). */
typedef struct fb_tensor {
  int32_t dtype;
  size_t esize;
  int64_t ndim;
  int64_t sizes[FB_MAX_DIMS];
  int64_t strides[FB_MAX_DIMS];
  int64_t span;
  void *host;
  AtenTensorHandle handle;
  void *dev;
} fb_tensor;

/* strides NULL: contiguous. Returns 0 on success. Host storage starts as
 * NaN (float dtypes) or 0x5a bytes, so reads of padding show up. */
int fb_tensor_new(fb_tensor *t, int32_t dtype, int64_t ndim,
                  const int64_t *sizes, const int64_t *strides);
/* Random values at every logical element (rounded to the dtype). */
void fb_tensor_fill_random(fb_tensor *t, uint64_t *state);
/* Sets every storage element (padding included) to v. */
void fb_tensor_fill_all(fb_tensor *t, double v);
int fb_tensor_upload(fb_tensor *t);
int fb_tensor_download(fb_tensor *t);
/* Storage index of a logical index (idx has ndim entries). */
int64_t fb_tensor_offset(const fb_tensor *t, const int64_t *idx);
double fb_tensor_get(const fb_tensor *t, const int64_t *idx);
void fb_tensor_set(fb_tensor *t, const int64_t *idx, double v);
void fb_tensor_free(fb_tensor *t);

#endif /* AOTRUN_TESTING_FALLBACK_TEST_UTIL_H */
