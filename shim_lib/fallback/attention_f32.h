/*
 * attention_f32.h: the register-tiled float32 fused attention forward
 * (attention_f32.cu). Same parameters, preconditions and results as
 * aotrun_fb_attention (attention_kernels.h) for float32; a second
 * implementation beside attention_kernels.cu's SIMT float32 kernel, which
 * stays the default until this one is measured on a GPU.
 *
 * Selection (aotrun_fb_attention's dispatch, attention_kernels.cu):
 * AOTRUN_ATTN_F32=tiled runs float32 attention on this kernel; unset or any
 * other value, on the default one. The variable is read at each call (a
 * getenv, negligible next to an attention), so one process can time both.
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
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_attention_f32_tiled(
    const aotrun_fb_attn_params *p, cudaStream_t stream);

/* 1 when AOTRUN_ATTN_F32 is exactly "tiled" (read now), else 0
 * (attention_f32_select.c). */
AOTRUN_FB_HIDDEN int aotrun_fb_attn_f32_tiled_enabled(void);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_ATTENTION_F32_H */
