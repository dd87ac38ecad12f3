/*
 * gemm.h: one (batched) GEMM problem of the GEMM family (mm, mm_dtype,
 * addmm, _addmm_activation, addmv, bmm, baddbmm), built and checked by
 * gemm_args.c without touching CUDA, then run by gemm_run.c with cuBLAS
 * (cuBLASLt when there is an activation epilogue):
 *   out[b] = act(alpha * a[b] @ b[b] + beta * bias[b])
 * bias (addmm's / baddbmm's / addmv's `self`) broadcasts to out's shape;
 * beta == 0 ignores it, NaN included. out may have another dtype than the
 * operands (mm_dtype: float16/bfloat16 -> float32).
 */
#ifndef AOTRUN_FALLBACK_GEMM_H
#define AOTRUN_FALLBACK_GEMM_H

#include "shim_lib/fallback/fallback_tensor.h"

/* A batch of matrices in memory; strides in elements. */
typedef struct aotrun_fb_matrix {
  char *data;
  int64_t rows, cols;
  int64_t batch_stride, row_stride, col_stride;
} aotrun_fb_matrix;

/* The epilogue applied to the result (_addmm_activation). */
typedef enum aotrun_fb_gemm_act {
  AOTRUN_FB_ACT_NONE = 0,
  AOTRUN_FB_ACT_RELU = 1,
  AOTRUN_FB_ACT_GELU_TANH = 2, /* gelu(x, approximate="tanh"), as ATen */
} aotrun_fb_gemm_act;

typedef struct aotrun_fb_gemm {
  const char *op;
  int32_t dtype; /* of a and b */
  int32_t device;
  size_t elem_size;
  int32_t out_dtype; /* of out (and bias) */
  size_t out_elem_size;
  aotrun_fb_gemm_act act;
  int64_t batch, m, n, k;
  aotrun_fb_matrix a, b, out;
  /* The bias, expanded to [batch, m, n]: stride 0 on broadcast dims. */
  int has_bias;
  const char *bias_data;
  int64_t bias_batch_stride, bias_row_stride, bias_col_stride;
  /* The bias as given: its dims, and whether it is contiguous with its last
   * size equal to n and one non-unit dim (ATen's "fusable" bias). They
   * decide, as in ATen's addmm_out_cuda_impl, whether _addmm_activation
   * fuses the activation into cuBLASLt or applies it after a plain GEMM. */
  int64_t bias_ndim;
  int bias_fusable;
  double alpha, beta;
} aotrun_fb_gemm;

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_mm_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, aotrun_fb_gemm *g);
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_addmm_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat1, AtenTensorHandle mat2, double beta, double alpha,
    aotrun_fb_gemm *g);
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_bmm_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, aotrun_fb_gemm *g);

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_baddbmm_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
    double alpha, aotrun_fb_gemm *g);
/* mm with out's dtype out_dtype: the operands' dtype, or float32 for
 * float16/bfloat16 operands. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_mm_dtype_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, int32_t out_dtype, aotrun_fb_gemm *g);

/* The ops returning a new tensor: checks the inputs and computes the
 * result's shape (*out_ndim dims in out_sizes, contiguous, the operands'
 * dtype); then, once `out` is allocated, *_args fills g. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_addmv_check(
    const char *op, AtenTensorHandle self, AtenTensorHandle mat,
    AtenTensorHandle vec, int64_t *out_sizes, int32_t *dtype,
    int32_t *device);
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_addmv_args(
    const char *op, AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat, AtenTensorHandle vec, double beta, double alpha,
    aotrun_fb_gemm *g);
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_addmm_act_check(
    const char *op, AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, int64_t *out_sizes, int32_t *dtype,
    int32_t *device);

/* How cuBLAS reads one input operand (gemm_run.c prepares it). */
typedef struct aotrun_fb_operand {
  const char *data;
  int64_t ld, batch_stride;
  int32_t op; /* cublasOperation_t: CUBLAS_OP_N row-major, _T col-major */
} aotrun_fb_operand;

/* Queues the GEMM on the calling thread's current stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_run(aotrun_fb_gemm *g);

#endif /* AOTRUN_FALLBACK_GEMM_H */
