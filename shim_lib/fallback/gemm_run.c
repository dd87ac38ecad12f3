/* gemm_run.c: runs an aotrun_fb_gemm with cuBLAS on the current stream
 * (where ATen uses cuBLASLt -- _addmm_activation, and addmm with a bias that
 * is one contiguous row -- cuBLASLt with the RELU / GELU(tanh) / BIAS
 * epilogue (gemm_lt.c); elsewhere a plain GEMM -- cublasGemmEx, or
 * cuBLASLt without an epilogue where AOTRUN_GEMM_LT=1 -- and then the
 * activation kernel, as ATen; a batch whose bias is one row, beta 1, takes
 * it in the BIAS epilogue too, unless AOTRUN_BADDBMM_BIAS=copy).
 *
 * cuBLAS is column-major; a row-major C = A @ B is the column-major
 * C^T = B^T @ A^T, so B goes first. Each operand is used in place when it is
 * row- or column-contiguous (a transpose flag covers the second case);
 * anything else (padding-free gathers, broadcast zero strides) is copied to a
 * contiguous scratch tensor first. An `out` that cuBLAS cannot write is
 * computed into scratch and copied back. */
#include <stdint.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_kernels.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/gemm.h"
#include "shim_lib/fallback/gemm_lt.h"
#include "shim_lib/fallback/kernel_options.h"
#include "shim_lib/fallback/sanitizer_marks.h"

static aotrun_fb_matrix transposed(const aotrun_fb_matrix *x) {
  aotrun_fb_matrix t = *x;
  t.rows = x->cols;
  t.cols = x->rows;
  t.row_stride = x->col_stride;
  t.col_stride = x->row_stride;
  return t;
}

/* Row-major with unit column stride and rows that do not overlap; *ld is
 * the leading dimension cuBLAS gets (>= cols >= 1). */
static int row_major_ld(const aotrun_fb_matrix *x, int64_t *ld) {
  if (x->cols > 1 && x->col_stride != 1) return 0;
  if (x->rows > 1 && x->row_stride < x->cols) return 0;
  *ld = x->rows > 1 ? x->row_stride : x->cols;
  return 1;
}

static int col_major_ld(const aotrun_fb_matrix *x, int64_t *ld) {
  aotrun_fb_matrix t = transposed(x);
  return row_major_ld(&t, ld);
}

typedef aotrun_fb_operand operand;

static int operand_in_place(const aotrun_fb_matrix *x, operand *o) {
  if (x->batch_stride < 0) return 0;
  o->data = x->data;
  o->batch_stride = x->batch_stride;
  if (row_major_ld(x, &o->ld)) {
    o->op = CUBLAS_OP_N;
    return 1;
  }
  if (col_major_ld(x, &o->ld)) {
    o->op = CUBLAS_OP_T;
    return 1;
  }
  return 0;
}

static void matrix_box(const aotrun_fb_gemm *g, const aotrun_fb_matrix *x,
                       int64_t sizes[3], int64_t strides[3]) {
  sizes[0] = g->batch;
  sizes[1] = x->rows;
  sizes[2] = x->cols;
  strides[0] = x->batch_stride;
  strides[1] = x->row_stride;
  strides[2] = x->col_stride;
}

/* Operand x in place, or a contiguous copy of it in scratch. */
static AOTITorchError prepare_operand(const aotrun_fb_gemm *g,
                                      aotrun_fb_temps *temps, const char *what,
                                      const aotrun_fb_matrix *x,
                                      cudaStream_t stream, operand *o) {
  if (operand_in_place(x, o)) return AOTI_TORCH_SUCCESS;
  int64_t sizes[3], strides[3];
  matrix_box(g, x, sizes, strides);
  void *copy = NULL;
  AOTITorchError err = aotrun_fb_contiguous_copy(
      temps, what, x->data, strides, sizes, 3, g->dtype, g->elem_size, stream,
      &copy);
  if (err) return err;
  o->data = copy;
  o->ld = x->cols;
  o->batch_stride = x->rows * x->cols;
  o->op = CUBLAS_OP_N;
  return AOTI_TORCH_SUCCESS;
}

/* K == 0: torch gives beta * bias (or zeros); a zero K = 1 product keeps the
 * single cuBLAS path with the same beta handling. */
static AOTITorchError zero_operands(aotrun_fb_gemm *g, aotrun_fb_temps *temps,
                                    cudaStream_t stream) {
  int64_t na = g->m, nb = g->n;
  void *a = NULL, *b = NULL;
  AOTITorchError err = aotrun_fb_temp_alloc(temps, g->dtype, 1, &na, &a);
  if (!err) err = aotrun_fb_temp_alloc(temps, g->dtype, 1, &nb, &b);
  if (err) return err;
  cudaError_t e = cudaMemsetAsync(a, 0, (size_t)na * g->elem_size, stream);
  if (e == cudaSuccess)
    e = cudaMemsetAsync(b, 0, (size_t)nb * g->elem_size, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: cudaMemsetAsync failed: %s", g->op,
                            cudaGetErrorString(e));
  g->k = 1;
  g->a = (aotrun_fb_matrix){(char *)a, g->m, 1, 0, 1, 1};
  g->b = (aotrun_fb_matrix){(char *)b, 1, g->n, 0, g->n, 1};
  return AOTI_TORCH_SUCCESS;
}

/* Where cuBLAS writes the result: out itself, or (flag *copy_back) a
 * contiguous scratch [batch, m, n]. */
static AOTITorchError prepare_target(const aotrun_fb_gemm *g,
                                     aotrun_fb_temps *temps,
                                     aotrun_fb_matrix *target, int *copy_back) {
  int64_t ld = 0;
  const aotrun_fb_matrix *o = &g->out;
  *copy_back = 0;
  *target = *o;
  if (o->batch_stride >= 0 || g->batch <= 1) {
    if (row_major_ld(o, &ld) &&
        (g->batch <= 1 || o->batch_stride >= o->rows * ld))
      return AOTI_TORCH_SUCCESS;
    if (col_major_ld(o, &ld) &&
        (g->batch <= 1 || o->batch_stride >= o->cols * ld))
      return AOTI_TORCH_SUCCESS;
  }
  int64_t sizes[3] = {g->batch, g->m, g->n};
  void *data = NULL;
  AOTITorchError err =
      aotrun_fb_temp_alloc(temps, g->out_dtype, 3, sizes, &data);
  if (err) return err;
  *target = (aotrun_fb_matrix){(char *)data, g->m, g->n, g->m * g->n, g->n, 1};
  *copy_back = 1;
  return AOTI_TORCH_SUCCESS;
}

/* Copies between two matrices of out's dtype (bias, target, out). */
static AOTITorchError copy_matrix(const aotrun_fb_gemm *g,
                                  const aotrun_fb_temps *temps,
                                  const char *what, aotrun_fb_matrix *dst,
                                  const aotrun_fb_matrix *src,
                                  cudaStream_t stream) {
  int64_t sizes[3], ds[3], ss[3];
  matrix_box(g, dst, sizes, ds);
  matrix_box(g, src, sizes, ss);
  return aotrun_fb_copy(temps, what, dst->data, ds, src->data, ss, sizes, 3,
                        g->out_elem_size, stream);
}

/* Column-major C^T (n x m) = op(B)^T-ish (n x k) * op(A) (k x m). */
static AOTITorchError call_cublas(const aotrun_fb_gemm *g,
                                  const aotrun_fb_cublas_api *blas,
                                  cublasHandle_t h,
                                  const operand *a, const operand *b,
                                  const aotrun_fb_matrix *c, int64_t ldc,
                                  double beta) {
  cudaDataType_t t = aotrun_fb_cuda_type(g->dtype);
  cudaDataType_t tc = aotrun_fb_cuda_type(g->out_dtype);
  int dbl = g->dtype == AOTRUN_FB_FLOAT64;
  float alpha_f = (float)g->alpha, beta_f = (float)beta;
  const void *alpha = dbl ? (const void *)&g->alpha : (const void *)&alpha_f;
  const void *betap = dbl ? (const void *)&beta : (const void *)&beta_f;
  /* Full fp32 accumulation for every float type (no TF32), like eager. */
  cublasComputeType_t ct = dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  cublasStatus_t st;
  if (g->batch == 1)
    st = blas->cublasGemmEx_64(h, (cublasOperation_t)b->op,
                               (cublasOperation_t)a->op, g->n, g->m, g->k,
                               alpha, b->data, t, b->ld, a->data, t, a->ld,
                               betap, c->data, tc, ldc, ct,
                               CUBLAS_GEMM_DEFAULT);
  else
    st = blas->cublasGemmStridedBatchedEx_64(
        h, (cublasOperation_t)b->op, (cublasOperation_t)a->op, g->n, g->m,
        g->k, alpha, b->data, t, b->ld,
        b->batch_stride, a->data, t, a->ld, a->batch_stride, betap, c->data, tc,
        ldc, c->batch_stride, g->batch, ct, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    return aotrun_shim_fail(
        "%s: cuBLAS GEMM failed (m=%lld n=%lld k=%lld batch=%lld): %s", g->op,
        (long long)g->m, (long long)g->n, (long long)g->k,
        (long long)g->batch, blas->cublasGetStatusString(st));
  return AOTI_TORCH_SUCCESS;
}


/* Whether ATen 2.11 runs this _addmm_activation through cuBLASLt with the
 * activation in the epilogue (isInputCompliesAddmmCudaLt for a new
 * contiguous result): beta == 1, m, k, n > 1, and a 2-D bias or a
 * contiguous one whose one non-unit dim is the last, of size n. Otherwise
 * ATen runs a plain GEMM and then relu_ / gelu_(x, "tanh") as a separate
 * elementwise op: cuBLASLt's GELU epilogue and ATen's gelu kernel round
 * differently (visible in float64), so the choice follows ATen's. Plain
 * addmm takes the same test (ATen's addmm_out_cuda_impl): a compliant
 * vector bias goes into the BIAS epilogue, one launch instead of a copy
 * of the bias into out and a GEMM. */
static int lt_compliant(const aotrun_fb_gemm *g) {
  if (g->batch != 1) return 0;
  if (g->beta != 1.0 || g->m <= 1 || g->k <= 1 || g->n <= 1) return 0;
  return g->has_bias && (g->bias_ndim == 2 || g->bias_fusable);
}

/* Whether a batch (baddbmm) takes its bias in cuBLASLt's BIAS epilogue
 * instead of a copy of the bias into out and a GEMM with beta 1 (as ATen):
 * unless AOTRUN_BADDBMM_BIAS=copy (kernel_options.h), beta == 1, float
 * operands, and one bias row shared by every matrix. The sums are ATen's:
 * alpha * (a @ b) + bias in float, one rounding. */
static int batched_bias_ok(const aotrun_fb_gemm *g) {
  return g->batch > 1 && g->batch <= INT32_MAX && g->has_bias &&
         g->beta == 1.0 && g->dtype != AOTRUN_FB_FLOAT64 &&
         g->bias_batch_stride == 0 &&
         aotrun_fb_baddbmm_bias_epilogue_enabled();
}

/* The bias as the cuBLASLt BIAS epilogue's vector: an addmm / fused
 * activation (lt_compliant) or a batch that qualifies, a row-major target,
 * and a bias that is one contiguous row (n values) shared by every row.
 * NULL when it does not apply. */
static const void *bias_vector(const aotrun_fb_gemm *g, int transposed) {
  if (transposed || !(lt_compliant(g) || batched_bias_ok(g))) return NULL;
  if (g->bias_row_stride != 0 || (g->n > 1 && g->bias_col_stride != 1))
    return NULL;
  return g->bias_data;
}

/* The bias ('self') expanded into the target, for a GEMM with beta. */
static AOTITorchError copy_bias(const aotrun_fb_gemm *g,
                                aotrun_fb_temps *temps,
                                aotrun_fb_matrix *target,
                                cudaStream_t stream) {
  aotrun_fb_matrix bias = {(char *)g->bias_data, g->m, g->n,
                           g->bias_batch_stride, g->bias_row_stride,
                           g->bias_col_stride};
  return copy_matrix(g, temps, "the bias ('self') into 'out'", target, &bias,
                     stream);
}

/* cublasGemmEx (strided-batched for a batch), then, for an activation
 * ATen does not fuse, its separate relu_ / gelu_(x, "tanh") (batch 1). */
static AOTITorchError plain_gemm(const aotrun_fb_gemm *g,
                                 const aotrun_fb_gemm *p, cudaStream_t stream,
                                 const operand *a, const operand *b,
                                 const aotrun_fb_matrix *target, int64_t ldc,
                                 double beta) {
  const aotrun_fb_cublas_api *blas = NULL;
  cublasHandle_t h = NULL;
  AOTITorchError err =
      aotrun_fb_cublas_acquire(g->op, g->device, stream, &blas, &h);
  if (!err) err = call_cublas(p, blas, h, a, b, target, ldc, beta);
  return err;
}

/* The activation ATen applies after a plain GEMM (batch 1). */
static AOTITorchError separate_activation(const aotrun_fb_gemm *g,
                                          const aotrun_fb_gemm *p,
                                          const aotrun_fb_matrix *target,
                                          int64_t ldc, cudaStream_t stream) {
  cudaError_t e = aotrun_fb_gemm_activation(
      target->data, g->out_dtype, p->m, p->n, ldc,
      g->act == AOTRUN_FB_ACT_GELU_TANH, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the %s kernel failed to launch: %s", g->op,
                            g->act == AOTRUN_FB_ACT_GELU_TANH ? "gelu" : "relu",
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

/* Everything after the early exits; scratch is owned by the caller. */
static AOTITorchError run_on_stream(aotrun_fb_gemm *g, aotrun_fb_temps *temps,
                                    cudaStream_t stream) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  /* K == 0: ATen returns beta * self without the activation (its
   * _addmm_activation short-circuits before the epilogue). */
  if (g->k == 0) g->act = AOTRUN_FB_ACT_NONE;
  if (g->k == 0) err = zero_operands(g, temps, stream);
  if (err) return err;

  aotrun_fb_matrix target;
  int copy_back = 0;
  err = prepare_target(g, temps, &target, &copy_back);
  if (err) return err;

  int64_t ldc = 0;
  int col_major_target = !row_major_ld(&target, &ldc);
  const void *bias_vec = bias_vector(g, col_major_target);

  /* beta == 0 means "ignore the bias", NaN included, as in torch. */
  double beta = g->has_bias ? g->beta : 0.0;
  if (bias_vec != NULL) {
    beta = 0.0; /* the epilogue adds it */
  } else if (beta != 0.0) {
    err = copy_bias(g, temps, &target, stream);
    if (err) return err;
  }

  /* A column-major target: solve the transposed problem, whose result is
   * row-major: C^T = B^T A^T. */
  aotrun_fb_gemm p = *g;
  if (col_major_target) {
    p.a = transposed(&g->b);
    p.b = transposed(&g->a);
    p.m = g->n;
    p.n = g->m;
    target = transposed(&target);
    row_major_ld(&target, &ldc);
  }
  operand a, b;
  err = prepare_operand(&p, temps, "a GEMM operand", &p.a, stream, &a);
  if (!err) err = prepare_operand(&p, temps, "a GEMM operand", &p.b, stream, &b);
  if (err) return err;

  int ran = 0;
  if (bias_vec != NULL && g->batch > 1) {
    /* baddbmm's row bias in the epilogue (operands that do not broadcast
     * over the batch, as for plain cuBLASLt GEMMs); otherwise, or without
     * an algorithm for it, the bias goes into the target and the plain
     * paths below run. */
    if (a.batch_stride > 0 && b.batch_stride > 0 && target.batch_stride > 0)
      err = aotrun_fb_gemm_lt(&p, stream, &a, &b, &target, ldc, 0.0,
                              bias_vec, 1, &ran);
    if (!err && !ran) {
      bias_vec = NULL;
      beta = g->beta;
      err = copy_bias(g, temps, &target, stream);
    }
    if (err) return err;
  }
  int fused = lt_compliant(g) &&
              (g->act != AOTRUN_FB_ACT_NONE || bias_vec != NULL);
  if (ran) {
    /* queued above */
  } else if (fused) {
    err = aotrun_fb_gemm_lt(&p, stream, &a, &b, &target, ldc, beta, bias_vec,
                            0, &ran);
  } else if (aotrun_fb_plain_lt_ok(&p, &a, &b, target.batch_stride)) {
    /* No epilogue: an unfused activation is ATen's separate kernel. */
    aotrun_fb_gemm q = p;
    q.act = AOTRUN_FB_ACT_NONE;
    err = aotrun_fb_gemm_lt(&q, stream, &a, &b, &target, ldc, beta, NULL, 1,
                            &ran);
  }
  if (!err && !ran) err = plain_gemm(g, &p, stream, &a, &b, &target, ldc, beta);
  /* cuBLAS's TMA stores are invisible to initcheck: say what it wrote. */
  if (!err)
    aotrun_fb_mark_written(stream, target.data, g->batch, p.m, p.n, ldc,
                           target.batch_stride, g->out_elem_size);
  if (!err && !fused && g->act != AOTRUN_FB_ACT_NONE)
    err = separate_activation(g, &p, &target, ldc, stream);
  if (err) return err;

  if (copy_back) {
    aotrun_fb_matrix out = g->out;
    aotrun_fb_matrix tmp = {target.data, g->m, g->n, g->m * g->n, g->n, 1};
    err = copy_matrix(g, temps, "the result into 'out'", &out, &tmp, stream);
  }
  return err;
}

AOTITorchError aotrun_fb_gemm_run(aotrun_fb_gemm *g) {
  if (g->batch == 0 || g->m == 0 || g->n == 0) return AOTI_TORCH_SUCCESS;
  aotrun_fb_device_scope scope;
  AOTITorchError err = aotrun_fb_device_enter(g->op, g->device, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, g->op, g->device);
  err = run_on_stream(g, &temps, stream);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}
