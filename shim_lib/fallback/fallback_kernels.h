/*
 * fallback_kernels.h: C entry points of the nvcc-compiled kernels the
 * fallback ops launch. Each one queues work on `stream` (a cudaStream_t) and
 * returns the launch status; none of them synchronises.
 */
#ifndef AOTRUN_FALLBACK_KERNELS_H
#define AOTRUN_FALLBACK_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = src[i] for every index i of an n-d box, both sides strided (a
 * stride may be 0 on the source: that is how broadcasts are copied). */
typedef struct aotrun_fb_copy_desc {
  int32_t ndim;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t src_strides[AOTRUN_FB_MAX_DIMS];
  int64_t dst_strides[AOTRUN_FB_MAX_DIMS];
} aotrun_fb_copy_desc;

/* elem_size: 1, 2, 4, 8 or 16 bytes. Strides are in elements. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_strided_copy(
    void *dst, const void *src, const aotrun_fb_copy_desc *desc,
    size_t elem_size, cudaStream_t stream);

/* Index-gather: out (contiguous [lead..., count, rest...]) takes
 * self[lead, pick(sel[c]), rest], where pick unravels sel[c] over the picked
 * dims of self (a boolean mask's dims or the one integer-indexed dim). */
typedef struct aotrun_fb_gather_desc {
  int32_t lead_ndim, pick_ndim, rest_ndim;
  int64_t lead_sizes[AOTRUN_FB_MAX_DIMS], lead_strides[AOTRUN_FB_MAX_DIMS];
  int64_t pick_sizes[AOTRUN_FB_MAX_DIMS], pick_strides[AOTRUN_FB_MAX_DIMS];
  int64_t rest_sizes[AOTRUN_FB_MAX_DIMS], rest_strides[AOTRUN_FB_MAX_DIMS];
  int64_t lead_numel, count, rest_numel;
} aotrun_fb_gather_desc;

AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_index_gather(
    void *out, const void *self, const int64_t *sel,
    const aotrun_fb_gather_desc *desc, size_t elem_size, cudaStream_t stream);

/* CUB DeviceSelect::Flagged over 0..n-1: writes the positions whose flag is
 * non-zero to sel (in increasing order) and their count to *num_sel (device
 * memory). With temp == NULL only sets *temp_bytes. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_select_flagged(
    void *temp, size_t *temp_bytes, const uint8_t *flags, int64_t n,
    int64_t *sel, int64_t *num_sel, cudaStream_t stream);

/* sel[i] = idx[i] (+ dim_size when negative) for contiguous int32
 * (is_int32) or int64 indices. An index outside [-dim_size, dim_size) sets
 * bad[0] = 1 and bad[1] = that index (device memory, zeroed by the caller)
 * and maps to 0, so no read goes out of bounds. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_normalize_indices(
    const void *idx, int is_int32, int64_t n, int64_t dim_size, int64_t *sel,
    int64_t *bad, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_KERNELS_H */
