/*
 * masked_write.h: writes the k-th True position of a mask from values[k]
 * without knowing the True count on the host (masked_scatter and the
 * boolean-mask index_put): the ranks come from an exclusive scan of the
 * flags (mask_kernels.h), so nothing synchronises and it captures.
 */
#ifndef AOTRUN_FALLBACK_MASKED_WRITE_H
#define AOTRUN_FALLBACK_MASKED_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/device_error.h"
#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A box of `ndim` dims walked row-major; per dim the strides of out, self
 * (when has_self), values (the non-mask dims; 0 where values broadcast) and
 * of the flags / ranks arrays (contiguous over the mask's dims, 0 on the
 * others). */
typedef struct aotrun_fb_masked_write {
  int32_t ndim;
  int32_t has_self;   /* out = self where the mask is False */
  int32_t accumulate; /* out = base + value where True */
  int32_t acc_kind;   /* AOTRUN_FB_ACC_* (index_kernels.h) */
  int64_t numel;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t out[AOTRUN_FB_MAX_DIMS];
  int64_t self[AOTRUN_FB_MAX_DIMS];
  int64_t values[AOTRUN_FB_MAX_DIMS];
  int64_t flags[AOTRUN_FB_MAX_DIMS];
  int64_t rank_stride; /* values stride per rank (0: one value for all) */
  int64_t rank_limit;  /* ranks >= this have no value: left as they are */
} aotrun_fb_masked_write;

/* For each element: if flags != 0 and rank < rank_limit, out = value (or
 * base + value with accumulate, base = self or out); else with has_self,
 * out = self. ranks: int32 (rank_bytes 4) or int64. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_masked_write_run(
    void *out, const void *self, const void *values, const uint8_t *flags,
    const void *ranks, int rank_bytes, size_t elem_size,
    const aotrun_fb_masked_write *d, cudaStream_t stream);

/* Reports (AOTRUN_DEVERR_COUNT_MISMATCH, dim `dim`, value = the True count,
 * bound = `expected`) when the True count of the n flags is != expected
 * (exact) or > expected (!exact). n may be 0. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_mask_count_check(
    const uint8_t *flags, const void *ranks, int rank_bytes, int64_t n,
    int64_t expected, int exact, aotrun_device_error *err, uint64_t op,
    uint64_t arg, int32_t dim, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_MASKED_WRITE_H */
