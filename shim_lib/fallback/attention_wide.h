/*
 * attention_wide.h: the "wide" tensor-core attention forward
 * (attention_wide.cu), the default for float16 / bfloat16 and head dims
 * <= 128 (AOTRUN_ATTN_TC=narrow selects the 64-query kernel of
 * attention_kernels.cu instead; kernel_options.h). Same contract as
 * aotrun_fb_attention (attention_kernels.h), whose dispatch calls it.
 *
 * Design: 128 queries per block of 4 warps, each warp 32 query rows (two
 * m16 row groups sharing every K/V fragment it reads from shared memory);
 * K, V (and a bias tile) double buffered, with K's and V's cp.async groups
 * issued and waited for separately so that V's load overlaps Q K^T and the
 * next K's load overlaps P V.
 */
#ifndef AOTRUN_ATTENTION_WIDE_H
#define AOTRUN_ATTENTION_WIDE_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/attention_kernels.h"
#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest head dim the wide kernel takes; larger ones run on the 64-query
 * kernel. */
#define AOTRUN_FB_ATTN_WIDE_MAX_D 128

/* 1 when the current device gives a block the shared memory the wide
 * kernel's tiles for p take (up to 102 KiB: every sm_80 / sm_90 part; not
 * sm_86 / sm_89, whose limit is 99 KiB, for head dims over 64); else 0 and
 * the 64-query kernel runs. The limit is asked once per device. */
AOTRUN_FB_HIDDEN int aotrun_fb_attention_wide_fits(
    const aotrun_fb_attn_params *p);

/* Queues the forward on stream: float16 / bfloat16 (p->dtype 5 / 15) and
 * 1 <= D <= AOTRUN_FB_ATTN_WIDE_MAX_D, else cudaErrorInvalidValue. The
 * caller (aotrun_fb_attention) has checked the rest of p. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_attention_wide(
    const aotrun_fb_attn_params *p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_ATTENTION_WIDE_H */
