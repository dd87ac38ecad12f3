/*
 * empty_like_strides.h: the strides torch.empty_like(self) gives a new
 * tensor of self's sizes (memory_format=preserve), i.e. what torch 2.11's
 * meta functions that call empty_like (sort's values and indices, ...)
 * promise the compiled model. No CUDA calls.
 */
#ifndef AOTRUN_FALLBACK_EMPTY_LIKE_STRIDES_H
#define AOTRUN_FALLBACK_EMPTY_LIKE_STRIDES_H

#include <stdint.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* c10's is_non_overlapping_and_dense (a tensor without elements counts as
 * contiguous, hence dense). */
AOTRUN_FB_HIDDEN int aotrun_fb_is_non_overlapping_and_dense(
    const int64_t *sizes, const int64_t *strides, int64_t ndim);

/* ATen's infer_dense_strides: dense strides that keep self's stride order
 * (stride-0 dims stay where they are, equal strides put the smaller size
 * inner). */
AOTRUN_FB_HIDDEN void aotrun_fb_infer_dense_strides(const int64_t *sizes,
                                                    const int64_t *strides,
                                                    int64_t ndim,
                                                    int64_t *out);

/* empty_like's rule: self's strides when self is non-overlapping and dense,
 * else infer_dense_strides. ndim <= AOTRUN_FB_MAX_DIMS. */
AOTRUN_FB_HIDDEN void aotrun_fb_empty_like_strides(const int64_t *sizes,
                                                   const int64_t *strides,
                                                   int64_t ndim, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_EMPTY_LIKE_STRIDES_H */
