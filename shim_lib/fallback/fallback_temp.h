/*
 * fallback_temp.h: scratch tensors of one fallback op call. They come from
 * aoti_torch_empty_strided on the op's CUDA device, so they use the shim's
 * allocator (stream-ordered, and the graph pool while capturing) and are
 * released stream-ordered with aoti_torch_delete_tensor_object.
 */
#ifndef AOTRUN_FALLBACK_TEMP_H
#define AOTRUN_FALLBACK_TEMP_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_tensor.h"
#include "shim_lib/fallback/radix_sort.h"

#define AOTRUN_FB_MAX_TEMPS 16

typedef struct aotrun_fb_temps {
  const char *op;
  int32_t device;
  int count;
  AtenTensorHandle handles[AOTRUN_FB_MAX_TEMPS];
} aotrun_fb_temps;

AOTRUN_FB_HIDDEN void aotrun_fb_temps_init(aotrun_fb_temps *t, const char *op,
                                           int32_t device);
/* A contiguous scratch tensor; *data points at its first element. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_temp_alloc(aotrun_fb_temps *t,
                                                     int32_t dtype,
                                                     int64_t ndim,
                                                     const int64_t *sizes,
                                                     void **data);
/* `bytes` bytes of scratch (at least 1). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_temp_bytes(aotrun_fb_temps *t,
                                                     size_t bytes,
                                                     void **data);
AOTRUN_FB_HIDDEN void aotrun_fb_temps_release(aotrun_fb_temps *t);

/* Queues dst <- src for a box `sizes` (ndim dims; strides in elements) on
 * stream and reports a launch failure as an error of t->op naming `what`. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_copy(
    const aotrun_fb_temps *t, const char *what, void *dst,
    const int64_t *dst_strides, const void *src, const int64_t *src_strides,
    const int64_t *sizes, int64_t ndim, size_t elem_size, cudaStream_t stream);

/* Makes a contiguous copy of a strided box in a new scratch tensor. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_contiguous_copy(
    aotrun_fb_temps *t, const char *what, const void *src,
    const int64_t *src_strides, const int64_t *sizes, int64_t ndim,
    int32_t dtype, size_t elem_size, cudaStream_t stream, void **data);

/* Runs the radix sort of radix_sort.h with scratch memory from t (sizing
 * query, allocation, sort); a failure is an error of t->op naming `what`. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_sort(aotrun_fb_temps *t,
                                               const char *what,
                                               const aotrun_fb_sort_pairs_args *a,
                                               cudaStream_t stream);

#endif /* AOTRUN_FALLBACK_TEMP_H */
