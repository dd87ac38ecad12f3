/*
 * attention_kernels.h: the fused attention forward kernel (attention_kernels.cu)
 * behind _scaled_dot_product_{flash,efficient}_attention and
 * _{flash,efficient}_attention_forward (attention.c).
 *
 * out[b, h, i, :] = softmax_j(scale * q[b, h, i, :] . k[b, hk, j, :]
 *                             + bias[b, h, i, j]) @ v[b, hk, j, :]
 * with hk = h / (Hq / Hkv) (grouped-query attention), keys j >= S and keys
 * the causal mask removes at minus infinity. A row without any key left
 * (every score -inf) gives 0 and lse = empty_lse.
 *
 * float16 / bfloat16: a FlashAttention-2 style kernel (64 queries per block,
 * one warp per 16 rows, K/V tiles in shared memory through cp.async double
 * buffering, QK^T and PV on mma.sync m16n8k16 with float accumulation,
 * online softmax in float). float32: a SIMT kernel with float math.
 */
#ifndef AOTRUN_ATTENTION_KERNELS_H
#define AOTRUN_ATTENTION_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Causal alignments. */
enum {
  AOTRUN_FB_ATTN_NONE = 0,
  AOTRUN_FB_ATTN_UPPER_LEFT = 1,   /* key j <= query i (efficient, math) */
  AOTRUN_FB_ATTN_BOTTOM_RIGHT = 2, /* key j <= i + S - L (flash) */
};

/* Largest head dim the kernels take. */
#define AOTRUN_FB_ATTN_MAX_D 256

typedef struct aotrun_fb_attn_params {
  const void *q, *k, *v; /* first elements; the last dim is contiguous */
  void *out;             /* same dtype as q, last dim contiguous */
  float *lse;            /* [B, Hq, >= lse_pad] rows of stride 1, or NULL */
  const void *bias;      /* same dtype as q, or NULL */
  /* Strides in elements of the batch, head and sequence dims. */
  int64_t q_sb, q_sh, q_sl;
  int64_t k_sb, k_sh, k_sl;
  int64_t v_sb, v_sh, v_sl;
  int64_t o_sb, o_sh, o_sl;
  int64_t b_sb, b_sh, b_sl, b_ss; /* bias (0 on broadcast dims) */
  int64_t lse_sb, lse_sh;
  int32_t B, Hq, Hkv, L, S, D;
  int32_t lse_pad; /* lse rows [L, lse_pad) are set to +inf (efficient) */
  int32_t causal;  /* AOTRUN_FB_ATTN_* */
  int32_t dtype;   /* 5 float16, 15 bfloat16, 6 float32 */
  float scale;
  float empty_lse; /* lse of a row without keys: +inf (flash), -inf */
} aotrun_fb_attn_params;

/* Queues the forward on stream. Requires 1 <= D <= AOTRUN_FB_ATTN_MAX_D,
 * Hq % Hkv == 0, L <= 65535 * 64. B * Hq * L == 0 launches nothing. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_attention(
    const aotrun_fb_attn_params *p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_ATTENTION_KERNELS_H */
