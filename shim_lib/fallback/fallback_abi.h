/*
 * fallback_abi.h: the CUDA fallback ops this package exports (signatures of
 * torch 2.11's aoti_torch/generated/c_shim_cuda.h, our own declarations).
 *
 * Everything else (types, tensor getters, empty_strided, delete, the
 * aotrun_shim_* hooks) comes from shim_lib/aotrun_shim.h: the fallback ops
 * call the shim only through its public functions.
 */
#ifndef AOTRUN_FALLBACK_ABI_H
#define AOTRUN_FALLBACK_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = self @ mat2 (2-D). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out,
                                                      AtenTensorHandle self,
                                                      AtenTensorHandle mat2);
/* out = beta * self + alpha * (mat1 @ mat2); self broadcasts to out's shape;
 * beta == 0 ignores self (NaN included). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmm_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, double beta, double alpha);
/* out[b] = self[b] @ mat2[b] (3-D). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out,
                                                       AtenTensorHandle self,
                                                       AtenTensorHandle mat2);
/* out = beta * self + alpha * (batch1 @ batch2) (3-D); self broadcasts to
 * out's shape; beta == 0 ignores self (NaN included). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_baddbmm_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
    AtenTensorHandle batch2, double beta, double alpha);
/* out = self @ mat2 with out of dtype out_dtype: the inputs' dtype, or
 * float32 for float16 / bfloat16 inputs (fp32 accumulation, one rounding). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_dtype_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
    int32_t out_dtype);
/* *ret0 = beta * self + alpha * (mat @ vec), a new contiguous 1-D tensor;
 * self broadcasts to [mat.size(0)]. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmv(
    AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec,
    double beta, double alpha, AtenTensorHandle *ret0);
/* *ret0 = act(beta * self + alpha * (mat1 @ mat2)), a new contiguous
 * tensor; act is relu, or gelu with the tanh approximation when use_gelu
 * (as ATen's CUDA kernel); cuBLASLt epilogue. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__addmm_activation(
    AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
    double beta, double alpha, int32_t use_gelu, AtenTensorHandle *ret0);
/* *ret0 = convolution of input with weight (+ bias[c] per output channel;
 * bias points at a handle or is NULL) over 1, 2 or 3 spatial dims, or the
 * transposed convolution (weight [in, out/groups, k...], output_padding).
 * stride / padding / dilation / output_padding: 1 value or one per spatial
 * dim. float32 (TF32 allowed as in torch; AOTRUN_CONV_TF32=0: none),
 * float16, bfloat16, float64, on cuDNN 9 opened at
 * the first call (conv.h). The result is channels-last when the input or
 * the weight is (ATen's cudnn_conv_suggest_memory_format). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle *bias,
    const int64_t *stride, int64_t stride_len_, const int64_t *padding,
    int64_t padding_len_, const int64_t *dilation, int64_t dilation_len_,
    int32_t transposed, const int64_t *output_padding,
    int64_t output_padding_len_, int64_t groups, AtenTensorHandle *ret0);
/* *ret0 = self[indices] (new reference), strides as torch's meta function
 * gives them (index_tensor.h). indices[i] points at a handle or is NULL
 * for None (Tensor?[]). Refuses a bool mask inside a graph capture. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_Tensor(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle *ret0);


/* ---- index family (index_tensor.c, index_put*.c, nonzero.c, masked*.c) ---
 * Out-of-range integer indices (and a True count that does not match the
 * values) are reported through the device error slot
 * (aotrun_shim_take_device_error) and never read or written. */

/* *ret0 = index_put(self, indices, values, accumulate): a new tensor (self
 * is not modified). indices as in index_Tensor. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_put(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle values, int32_t accumulate,
    AtenTensorHandle *ret0);
/* out = self with out[indices] = values (or += with accumulate). out may be
 * self. indices[i] is a handle or NULL for None (shim.h's generic op, CUDA
 * tensors only here). Without accumulate, repeated indices: the last in
 * index order wins. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_index_put_out(
    AtenTensorHandle out, AtenTensorHandle self,
    const AtenTensorHandle *indices, const uint32_t num_indices,
    const AtenTensorHandle values, bool accumulate);
/* *ret0 = the indices of self's non-zero elements, int64 [count, ndim] with
 * strides (1, count) as ATen's CUDA kernel returns them. Reads the count back:
 * refuses to run inside a capture. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_nonzero(AtenTensorHandle self,
                                                       AtenTensorHandle *ret0);
/* *ret0 = self[mask] after broadcasting self and mask (1-D, contiguous).
 * Refuses to run inside a capture. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_masked_select(
    AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle *ret0);
/* *ret0 = self with the True positions of mask (broadcast with self; the
 * result is contiguous) filled from source's elements in order. No host
 * synchronisation. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_masked_scatter(
    AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
    AtenTensorHandle *ret0);

/* ---- scatter family (scatter*.c): no host synchronisation, usable inside
 * a captured CUDA graph. out may be self. Deterministic. ---- */

/* out = self; out[..., index[p], ...] = src[p] along dim (last write in
 * index order wins). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_src_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src);
/* The same with one value for every position. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_value_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, double value);
/* reduce: "sum", "prod", "mean", "amax", "amin". */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_reduce_two_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src, const char *reduce,
    int32_t include_self);
/* shim.h's generic variants (CUDA tensors only here). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_scatter_out(AtenTensorHandle out,
                                                      AtenTensorHandle self,
                                                      int64_t dim,
                                                      AtenTensorHandle index,
                                                      AtenTensorHandle src);
AOTRUN_SHIM_API AOTITorchError aoti_torch_scatter_reduce_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src, const char *reduce,
    int32_t include_self);

/* ---- sort family (sort.c, topk.c) on the radix_sort.h helper ---- */

/* (values, indices) of self sorted along dim; strides follow self's when
 * self is dense, else dense strides in self's stride order (ATen's rule).
 * NaN sorts as ATen's CUDA sort orders it. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_sort(AtenTensorHandle self,
                                                    int64_t dim,
                                                    int32_t descending,
                                                    AtenTensorHandle *ret0,
                                                    AtenTensorHandle *ret1);
/* stable: NULL (None) or a pointer to 0/1; the sort is always stable. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_sort_stable(
    AtenTensorHandle self, int32_t *stable, int64_t dim, int32_t descending,
    AtenTensorHandle *ret0, AtenTensorHandle *ret1);
/* The k largest (or smallest) along dim, contiguous outputs. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_topk(
    AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
    int32_t sorted, AtenTensorHandle *ret0, AtenTensorHandle *ret1);

/* ---- random ops (rand.c, randint.c, randperm.c, uniform.c, normal.c,
 * bernoulli.c; docs/random.md). One Philox generator per device (seeded
 * from the OS, AOTRUN_SEED or aotrun_shim_random_set_seed); no host
 * synchronisation, so they capture into CUDA graphs, whose replays draw new
 * numbers. `generator` (Generator?): NULL, or a pointer to a NULL handle,
 * means the default generator; a torch Generator is refused. dtype/layout/
 * device/pin_memory: NULL for the default, else float dtypes (integer ones
 * too for randint/randperm), strided, cuda, false. ---- */
struct AtenGeneratorOpaque;
typedef struct AtenGeneratorOpaque *AtenGeneratorHandle;

/* *ret0 = uniform numbers in [0, 1) of shape size (default float32). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_rand(
    const int64_t *size, int64_t size_len_, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_rand_generator(
    const int64_t *size, int64_t size_len_, AtenGeneratorHandle *generator,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0);
/* *ret0 = standard normal numbers (default float32). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randn(
    const int64_t *size, int64_t size_len_, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randn_generator(
    const int64_t *size, int64_t size_len_, AtenGeneratorHandle *generator,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0);
/* *ret0 = integers uniform in [0, high) / [low, high) (default int64). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint(
    int64_t high, const int64_t *size, int64_t size_len_, int32_t *dtype,
    int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_generator(
    int64_t high, const int64_t *size, int64_t size_len_,
    AtenGeneratorHandle *generator, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0);
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_low(
    int64_t low, int64_t high, const int64_t *size, int64_t size_len_,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0);
/* out (any strides, sizes equal to size) = integers in [low, high).
 * AOTInductor calls it for the seeds of its Philox kernels. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_low_out(
    AtenTensorHandle out, int64_t low, int64_t high, const int64_t *size,
    int64_t size_len_);
/* *ret0 = a random permutation of 0..n-1 (default int64). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randperm(
    int64_t n, int32_t *dtype, int32_t *layout, int32_t *device,
    int32_t device_index_, int32_t *pin_memory, AtenTensorHandle *ret0);
/* *ret0 = a new tensor like self (empty_like strides) of uniform numbers
 * in [from, to). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_uniform(
    AtenTensorHandle self, double from, double to,
    AtenGeneratorHandle *generator, AtenTensorHandle *ret0);
/* *ret0 = a new tensor like self of normal numbers (mean, std >= 0). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_normal_functional(
    AtenTensorHandle self, double mean, double std,
    AtenGeneratorHandle *generator, AtenTensorHandle *ret0);
/* self (in place, any strides) = 1 with probability p, else 0. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bernoulli__float(
    AtenTensorHandle self, double p, AtenGeneratorHandle *generator);
/* The same with a float p tensor broadcast to self; a p outside [0, 1]
 * writes 0 and is reported through the device error slot. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bernoulli__Tensor(
    AtenTensorHandle self, AtenTensorHandle p,
    AtenGeneratorHandle *generator);


/* ---- fused attention (attention.c, attention_kernels.cu; docs/fallback-
 * ops.md "Attention"). float16 / bfloat16 on tensor cores, float32 in float
 * math; head dims 1..256; Hq a multiple of Hkv; dropout_p 0 only. No host
 * synchronisation. ---- */

/* query/key/value [B, H, L|S, D]. Returns out (empty_like(query)), lse
 * float32 [B, H, L], undefined cum_seq_q/k, max_q/max_k, rng_state uint64
 * [2], unused uint64 [], an empty debug mask. is_causal aligns bottom-right
 * (ATen's flash kernel). */
AOTRUN_SHIM_API AOTITorchError
aoti_torch_cuda__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    double dropout_p, int32_t is_causal, int32_t return_debug_mask,
    double *scale, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5, AtenTensorHandle *ret6, AtenTensorHandle *ret7,
    AtenTensorHandle *ret8);
/* The same on [B, L|S, H, D] inputs (dense form: cum_seq_q/k, seqused_k,
 * alibi_slopes NULL, no window). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__flash_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *cum_seq_q, AtenTensorHandle *cum_seq_k, int64_t max_q,
    int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double *scale, int64_t *window_size_left,
    int64_t *window_size_right, AtenTensorHandle *seqused_k,
    AtenTensorHandle *alibi_slopes, AtenTensorHandle *ret0,
    AtenTensorHandle *ret1, AtenTensorHandle *ret2, AtenTensorHandle *ret3,
    AtenTensorHandle *ret4);
/* query/key/value [B, H, L|S, D], attn_bias NULL or broadcastable to
 * [B, H, L, S] (query's dtype, any strides). Returns out [B, H, L, D] with
 * [B, L, H, D] storage, lse float32 [B, H, ceil(L/32)*32] (+inf past L) or
 * [B, H, 0], philox seed/offset int64 [] on the CPU. is_causal aligns
 * top-left. */
AOTRUN_SHIM_API AOTITorchError
aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *attn_bias, int32_t compute_log_sumexp,
    double dropout_p, int32_t is_causal, double *scale,
    AtenTensorHandle *ret0, AtenTensorHandle *ret1, AtenTensorHandle *ret2,
    AtenTensorHandle *ret3);
/* The same on [B, L|S, H, D] inputs, out [B, L, H, D] contiguous;
 * custom_mask_type 0 none, 1 causal top-left, 2 causal bottom-right (dense
 * form: cu_seqlens_q/k, seqlen_k NULL, no window). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__efficient_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
    AtenTensorHandle *bias, AtenTensorHandle *cu_seqlens_q,
    AtenTensorHandle *cu_seqlens_k, int64_t *max_seqlen_q,
    int64_t *max_seqlen_k, double dropout_p, int64_t custom_mask_type,
    int32_t compute_log_sumexp, double *scale, AtenTensorHandle *seqlen_k,
    int64_t *window_size, AtenTensorHandle *ret0, AtenTensorHandle *ret1,
    AtenTensorHandle *ret2, AtenTensorHandle *ret3, int64_t *ret4,
    int64_t *ret5);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_ABI_H */
