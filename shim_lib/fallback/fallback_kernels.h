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

/* gemm_act.cu: y = act(y) in place on a rows x cols matrix (row stride ld
 * elements, unit column stride); gelu != 0: ATen's gelu(x, "tanh"), else
 * relu. Math in float (double for float64). dtype: ScalarType code. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_gemm_activation(
    void *y, int32_t dtype, int64_t rows, int64_t cols, int64_t ld, int gelu,
    cudaStream_t stream);

/* conv_bias.cu: y[n, c, ...] += bias[c] for a dense y of numel elements
 * with `channels` channels and `inner` elements per (n, c) plane, NCHW or
 * channels-last; float16 / bfloat16 / float32 add in float, float64 in
 * double, one rounding (as ATen's add_). dtype: ScalarType code. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_conv_add_bias(
    void *y, const void *bias, int32_t dtype, int64_t numel, int64_t channels,
    int64_t inner, int channels_last, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_KERNELS_H */
