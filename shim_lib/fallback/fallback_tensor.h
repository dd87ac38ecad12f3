/*
 * fallback_tensor.h: a snapshot of one tensor argument of a fallback op, read
 * through the public aoti_torch_* getters, plus the argument checks every op
 * shares. Nothing here touches CUDA, so argument errors are reported on
 * machines without a GPU too.
 */
#ifndef AOTRUN_FALLBACK_TENSOR_H
#define AOTRUN_FALLBACK_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ScalarType codes (DESIGN.md §2.3) the fallback ops name. */
enum {
  AOTRUN_FB_UINT8 = 0,
  AOTRUN_FB_INT32 = 3,
  AOTRUN_FB_INT64 = 4,
  AOTRUN_FB_FLOAT16 = 5,
  AOTRUN_FB_FLOAT32 = 6,
  AOTRUN_FB_FLOAT64 = 7,
  AOTRUN_FB_BOOL = 11,
  AOTRUN_FB_BFLOAT16 = 15,
};
#define AOTRUN_FB_DEVICE_CPU 0
#define AOTRUN_FB_DEVICE_CUDA 1

typedef struct aotrun_fb_tensor {
  const char *name; /* argument name used in messages, e.g. "mat2" */
  AtenTensorHandle handle;
  char *data;       /* first element (storage base + offset) */
  int64_t ndim;
  const int64_t *sizes;
  const int64_t *strides;
  int32_t dtype;
  int32_t device_type;
  int32_t device_index;
  size_t elem_size; /* 0 for a dtype the fallback ops cannot copy */
} aotrun_fb_tensor;

/* Reads handle h (argument `name` of op `op`) into *t. Fails with a message
 * when h is NULL, a getter fails or the tensor has too many dims. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_tensor_read(const char *op,
                                                      const char *name,
                                                      AtenTensorHandle h,
                                                      aotrun_fb_tensor *t);

/* "float32", "bfloat16", ... ("dtype 42" style text for unknown codes is
 * written into buf, which must hold 24 bytes). */
AOTRUN_FB_HIDDEN const char *aotrun_fb_dtype_name(int32_t dtype, char *buf);
/* Bytes per element, 0 when unknown. */
AOTRUN_FB_HIDDEN size_t aotrun_fb_dtype_size(int32_t dtype);

/* Fails unless t is a CUDA tensor; when `device` >= 0 it must also be on
 * cuda:<device> (the device of argument `ref_name`). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_require_cuda(
    const char *op, const aotrun_fb_tensor *t, int32_t device,
    const char *ref_name);
/* Fails unless t has exactly `ndim` dims. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_require_ndim(
    const char *op, const aotrun_fb_tensor *t, int64_t ndim);
/* Fails unless t has the same dtype as ref. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_require_same_dtype(
    const char *op, const aotrun_fb_tensor *t, const aotrun_fb_tensor *ref);

/* Writes "[2, 3]" into buf (cap bytes; truncates with "...]"). */
AOTRUN_FB_HIDDEN const char *aotrun_fb_shape_str(const int64_t *sizes,
                                                 int64_t ndim, char *buf,
                                                 size_t cap);

/* Product of sizes[0..n); sets *overflow when it does not fit int64. */
AOTRUN_FB_HIDDEN int64_t aotrun_fb_numel(const int64_t *sizes, int64_t n,
                                         int *overflow);

/* True when the tensor is row-major dense (C-contiguous; size-1 dims may have
 * any stride). */
AOTRUN_FB_HIDDEN int aotrun_fb_is_contiguous(const int64_t *sizes,
                                             const int64_t *strides,
                                             int64_t ndim);

/* Row-major dense strides for sizes (size-0/1 dims count as 1). */
AOTRUN_FB_HIDDEN void aotrun_fb_contiguous_strides(const int64_t *sizes,
                                                   int64_t ndim,
                                                   int64_t *strides);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_TENSOR_H */
