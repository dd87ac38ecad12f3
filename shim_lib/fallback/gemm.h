/*
 * gemm.h: one (batched) GEMM problem of mm / addmm / bmm, built and checked
 * by gemm_args.c without touching CUDA, then run by gemm_run.c with cuBLAS:
 *   out[b] = alpha * a[b] @ b[b] + beta * bias      (bias: addmm only)
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

typedef struct aotrun_fb_gemm {
  const char *op;
  int32_t dtype;
  int32_t device;
  size_t elem_size;
  int64_t batch, m, n, k;
  aotrun_fb_matrix a, b, out;
  /* addmm's bias, expanded to [m, n]: stride 0 on broadcast dims. */
  int has_bias;
  const char *bias_data;
  int64_t bias_row_stride, bias_col_stride;
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

/* Queues the GEMM on the calling thread's current stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_gemm_run(aotrun_fb_gemm *g);

#endif /* AOTRUN_FALLBACK_GEMM_H */
