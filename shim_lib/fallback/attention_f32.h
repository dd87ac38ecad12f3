/*
 * attention_f32.h: the register-tiled float32 fused attention forward
 * (attention_f32.cu). Same parameters, preconditions and results as
 * aotrun_fb_attention (attention_kernels.h) for float32, and the default
 * float32 kernel: 0.82-0.99x ATen's time where attention_kernels.cu's SIMT
 * kernel took 5.9-9.4x (H100, docs/gpu-results.md). AOTRUN_ATTN_F32=simt
 * selects the SIMT kernel instead (kernel_options.h).
 */
#ifndef AOTRUN_ATTENTION_F32_H
#define AOTRUN_ATTENTION_F32_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/attention_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Queues the float32 forward (p->dtype 6) on stream. Requires what
 * aotrun_fb_attention requires (cudaErrorInvalidValue otherwise, before
 * any CUDA call); B * Hq * L == 0 launches nothing. */
/* 1 when the current device gives a block the shared memory the tiles
 * for p's head dim take (65 / 113 / 137 KiB for D <= 64 / 128 / 256:
 * sm_80 and sm_90 parts; sm_86 / sm_89 (99 KiB) only D <= 64); else 0
 * and the SIMT kernel runs. */
AOTRUN_FB_HIDDEN int aotrun_fb_attention_f32_tiled_fits(
    const aotrun_fb_attn_params *p);

AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_attention_f32_tiled(
    const aotrun_fb_attn_params *p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_ATTENTION_F32_H */
