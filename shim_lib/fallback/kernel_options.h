/*
 * kernel_options.h: which implementation a fallback op runs where two
 * exist. The shim reads the choice from the environment once, at the
 * first op that asks (no lookup per call); aotrun_shim_read_kernel_options
 * (aotrun_shim.h) reads it again after a process changed the variables.
 *
 *   AOTRUN_ATTN_TC=narrow   float16/bfloat16 attention on the 64-query
 *                           kernel (attention_kernels.cu); default (unset
 *                           or any other value): the wide 128-query kernel
 *                           (attention_wide.cu) for head dims <= 128
 *   AOTRUN_ATTN_F32=simt    float32 attention on the SIMT kernel
 *                           (attention_kernels.cu); default: the
 *                           register-tiled one (attention_f32.cu)
 *   AOTRUN_CONV_API=legacy  convolutions on cuDNN's legacy API only;
 *                           default: the graph (backend) API, legacy where
 *                           it has no plan (conv_graph.h)
 *   AOTRUN_GEMM_LT=1        opt-in: plain float GEMMs through cuBLASLt
 *                           (gemm_lt.h); default: cublasGemmEx
 *   AOTRUN_BADDBMM_BIAS=copy  baddbmm's row bias (beta 1) copied into the
 *                           result before a strided-batched GEMM, as
 *                           ATen; default: the bias in cuBLASLt's BIAS
 *                           epilogue, one launch
 *   AOTRUN_CONV_LOG=1       a stderr line per convolution algorithm or
 *                           plan chosen (any value but empty or "0")
 *   AOTRUN_CONV_TF32=0      (or false, off, no) float32 convolutions in
 *                           full float32 (FMA
 *                           math, no tensor-core engine), as torch with
 *                           torch.backends.cudnn.allow_tf32 = False;
 *                           default since 2026-12-08: they may run on
 *                           TF32 tensor cores (engines and algorithms
 *                           cuDNN marks so), as torch 2.11 does by
 *                           default (allow_tf32 True, cudnn.conv
 *                           fp32_precision "tf32"). MobileNetV3's graph:
 *                           327 us of GPU time against 473 (H100,
 *                           docs/benchmarks.md).
 *
 * The attention, convolution and baddbmm defaults were faster in every
 * case measured (docs/gpu-results.md, 2026-12-06: baddbmm bf16 4x4096^3
 * 760.8 us with the epilogue, 1179.8 copying, ATen 840.7); the older
 * paths stay for comparison and as a way out. AOTRUN_GEMM_LT stays
 * opt-in: the MLP of the overhead benchmark was slower with it (40.1 us
 * per call against 32.9, H100, no graph).
 */
#ifndef AOTRUN_KERNEL_OPTIONS_H
#define AOTRUN_KERNEL_OPTIONS_H

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

AOTRUN_FB_HIDDEN int aotrun_fb_attn_tc_wide_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_attn_f32_tiled_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_conv_graph_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_plain_lt_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_baddbmm_bias_epilogue_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_conv_log_enabled(void);
AOTRUN_FB_HIDDEN int aotrun_fb_conv_tf32_enabled(void);

#ifdef __cplusplus
}
#endif

#endif
