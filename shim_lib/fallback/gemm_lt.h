/*
 * gemm_lt.h: one (strided-batched) GEMM through cublasLtMatmul, as
 * gemm_run.c lays it out for cuBLAS (column-major: C^T = B^T A^T, so the
 * row-major problem's B is the first operand).
 *
 * The descriptors are initialised on the stack (cublasLt*Init: no
 * allocation, no create/destroy calls) and the heuristic's answer for the
 * problem is cached (gemm_algo_cache.h), "no algorithm" included, so a
 * steady call is one cublasLtMatmul. Used for ATen's epilogue cases
 * (_addmm_activation, addmm with a vector bias: RELU / GELU / BIAS) and,
 * where aotrun_fb_plain_lt_enabled(), for plain float GEMMs too: cuBLAS's
 * cublasGemmEx chooses its algorithm again on every call (about 16 us per
 * call measured on the H200 for a small MLP).
 */
#ifndef AOTRUN_FALLBACK_GEMM_LT_H
#define AOTRUN_FALLBACK_GEMM_LT_H

#include <cuda_runtime_api.h>
#include <library_types.h>

#include "shim_lib/fallback/gemm.h"
#include "shim_lib/fallback/kernel_options.h"

/* The CUDA data type of a ScalarType of the GEMM family (float64, float32,
 * float16, bfloat16; anything else is float32). */
AOTRUN_FB_HIDDEN cudaDataType_t aotrun_fb_cuda_type(int32_t dtype);

/* Whether a plain GEMM may go to cuBLASLt: the option is on, the operands
 * are float32/float16/bfloat16 (float64 stays on cublasGemmEx, as ATen),
 * and, for a batch, no operand broadcasts (batch stride 0). */
AOTRUN_FB_HIDDEN int aotrun_fb_plain_lt_ok(const aotrun_fb_gemm *g,
                                           const aotrun_fb_operand *a,
                                           const aotrun_fb_operand *b,
                                           int64_t c_batch_stride);

/* Queues D = act(alpha * op(B) op(A) + beta * C [+ bias]) with C == D on
 * `stream` (g->batch matrices, each operand's batch_stride apart; c's
 * batch_stride for the result). bias_vec: NULL, or n contiguous values for
 * the BIAS epilogues, shared by every matrix of a batch (bias batch stride
 * 0: baddbmm's row bias). When cuBLASLt has no algorithm for
 * the problem: with may_fall_back set, *ran = 0 and success (the caller
 * runs cublasGemmEx); otherwise a failure naming the epilogue and sizes.
 * *ran = 1 when the product was queued. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_lt(
    const aotrun_fb_gemm *g, cudaStream_t stream, const aotrun_fb_operand *a,
    const aotrun_fb_operand *b, const aotrun_fb_matrix *c, int64_t ldc,
    double beta, const void *bias_vec, int may_fall_back, int *ran);

#endif /* AOTRUN_FALLBACK_GEMM_LT_H */
