/* gemm_run.c: runs an aotrun_fb_gemm with cuBLAS on the current stream
 * (where ATen uses cuBLASLt -- _addmm_activation, and addmm with a bias that
 * is one contiguous row -- cuBLASLt with the RELU / GELU(tanh) / BIAS
 * epilogue, its heuristic's answer cached per problem (gemm_algo_cache.h);
 * elsewhere a plain GEMM and then the activation kernel, as ATen).
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
#include "shim_lib/fallback/gemm_algo_cache.h"

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

/* How cuBLAS reads one input operand. */
typedef struct operand {
  const char *data;
  int64_t ld, batch_stride;
  cublasOperation_t op; /* CUBLAS_OP_N: row-major; CUBLAS_OP_T: col-major */
} operand;

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

static cudaDataType_t cuda_type(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT64: return CUDA_R_64F;
    case AOTRUN_FB_FLOAT16: return CUDA_R_16F;
    case AOTRUN_FB_BFLOAT16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

/* Column-major C^T (n x m) = op(B)^T-ish (n x k) * op(A) (k x m). */
static AOTITorchError call_cublas(const aotrun_fb_gemm *g, cublasHandle_t h,
                                  const operand *a, const operand *b,
                                  const aotrun_fb_matrix *c, int64_t ldc,
                                  double beta) {
  cudaDataType_t t = cuda_type(g->dtype);
  cudaDataType_t tc = cuda_type(g->out_dtype);
  int dbl = g->dtype == AOTRUN_FB_FLOAT64;
  float alpha_f = (float)g->alpha, beta_f = (float)beta;
  const void *alpha = dbl ? (const void *)&g->alpha : (const void *)&alpha_f;
  const void *betap = dbl ? (const void *)&beta : (const void *)&beta_f;
  /* Full fp32 accumulation for every float type (no TF32), like eager. */
  cublasComputeType_t ct = dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  cublasStatus_t st;
  if (g->batch == 1)
    st = cublasGemmEx_64(h, b->op, a->op, g->n, g->m, g->k, alpha, b->data, t,
                         b->ld, a->data, t, a->ld, betap, c->data, tc, ldc, ct,
                         CUBLAS_GEMM_DEFAULT);
  else
    st = cublasGemmStridedBatchedEx_64(
        h, b->op, a->op, g->n, g->m, g->k, alpha, b->data, t, b->ld,
        b->batch_stride, a->data, t, a->ld, a->batch_stride, betap, c->data, tc,
        ldc, c->batch_stride, g->batch, ct, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    return aotrun_shim_fail(
        "%s: cuBLAS GEMM failed (m=%lld n=%lld k=%lld batch=%lld): %s", g->op,
        (long long)g->m, (long long)g->n, (long long)g->k,
        (long long)g->batch, cublasGetStatusString(st));
  return AOTI_TORCH_SUCCESS;
}

/* Largest power of two (at most 256) dividing the address: the alignment
 * cuBLASLt's heuristic must assume (its default is 256). */
static uint32_t alignment_of(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint32_t al = 1;
  while (al < 256 && (a & ((uintptr_t)al * 2 - 1)) == 0) al *= 2;
  return al;
}

#define LT_CHECK(call, what)                                              \
  do {                                                                    \
    cublasStatus_t st_ = (call);                                          \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                   \
      err = aotrun_shim_fail("%s: cuBLASLt %s failed (m=%lld n=%lld "      \
                             "k=%lld): %s",                               \
                             g->op, what, (long long)g->m,                \
                             (long long)g->n, (long long)g->k,            \
                             cublasGetStatusString(st_));                 \
      goto done;                                                          \
    }                                                                     \
  } while (0)

/* The same column-major product as call_cublas (batch 1) through
 * cublasLtMatmul with an epilogue: D = act(alpha * op(B) op(A) + beta * C
 * [+ bias]), C == D. bias_vec: NULL, or n contiguous values (one per
 * column of the row-major result) for the BIAS epilogues. */
static AOTITorchError call_cublaslt(const aotrun_fb_gemm *g,
                                    cudaStream_t stream, const operand *a,
                                    const operand *b,
                                    const aotrun_fb_matrix *c, int64_t ldc,
                                    double beta, const void *bias_vec) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  cublasLtHandle_t lt = NULL;
  void *ws = NULL;
  size_t ws_bytes = 0;
  err = aotrun_fb_cublaslt_acquire(g->op, g->device, stream, &lt, &ws,
                                   &ws_bytes);
  if (err) return err;
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cudaDataType_t t = cuda_type(g->dtype);
  cudaDataType_t tc = cuda_type(g->out_dtype);
  int dbl = g->dtype == AOTRUN_FB_FLOAT64;
  float alpha_f = (float)g->alpha, beta_f = (float)beta;
  const void *alpha = dbl ? (const void *)&g->alpha : (const void *)&alpha_f;
  const void *betap = dbl ? (const void *)&beta : (const void *)&beta_f;
  LT_CHECK(cublasLtMatmulDescCreate(&desc,
                                    dbl ? CUBLAS_COMPUTE_64F
                                        : CUBLAS_COMPUTE_32F,
                                    dbl ? CUDA_R_64F : CUDA_R_32F),
           "descriptor");
  cublasOperation_t ta = b->op, tb = a->op;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                          &ta, sizeof ta),
           "TRANSA");
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                          &tb, sizeof tb),
           "TRANSB");
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  if (g->act == AOTRUN_FB_ACT_RELU)
    epi = bias_vec ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (g->act == AOTRUN_FB_ACT_GELU_TANH)
    epi = bias_vec ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (bias_vec)
    epi = CUBLASLT_EPILOGUE_BIAS;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                          &epi, sizeof epi),
           "EPILOGUE");
  if (bias_vec)
    LT_CHECK(cublasLtMatmulDescSetAttribute(
                 desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_vec,
                 sizeof bias_vec),
             "BIAS_POINTER");
  /* Stored shapes (column-major): first operand B' is n x k (op N) or
   * k x n (op T), second A' is k x m or m x k, C is n x m. */
  uint64_t ar = b->op == CUBLAS_OP_N ? g->n : g->k;
  uint64_t ac = b->op == CUBLAS_OP_N ? g->k : g->n;
  uint64_t br = a->op == CUBLAS_OP_N ? g->k : g->m;
  uint64_t bc = a->op == CUBLAS_OP_N ? g->m : g->k;
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, t, ar, ac, b->ld), "layout A");
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, t, br, bc, a->ld), "layout B");
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, tc, (uint64_t)g->n,
                                      (uint64_t)g->m, ldc),
           "layout C");
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref), "preference");
  uint64_t wsb = ws_bytes;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
               sizeof wsb),
           "workspace preference");
  uint32_t al_a = alignment_of(b->data), al_b = alignment_of(a->data),
           al_c = alignment_of(c->data);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
               sizeof al_a),
           "alignment A");
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
               sizeof al_b),
           "alignment B");
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c,
               sizeof al_c),
           "alignment C");
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c,
               sizeof al_c),
           "alignment D");
  aotrun_fb_algo_key key;
  memset(&key, 0, sizeof key);
  key.device = g->device;
  key.dtype = g->dtype;
  key.out_dtype = g->out_dtype;
  key.trans_a = (int32_t)ta;
  key.trans_b = (int32_t)tb;
  key.epilogue = (int32_t)epi;
  key.m = g->m;
  key.n = g->n;
  key.k = g->k;
  key.lda = b->ld;
  key.ldb = a->ld;
  key.ldc = ldc;
  key.align_a = al_a;
  key.align_b = al_b;
  key.align_c = al_c;
  key.has_bias = bias_vec != NULL;
  key.workspace_bytes = ws_bytes;
  cublasLtMatmulAlgo_t algo;
  if (!aotrun_fb_algo_cache_find(&key, &algo)) {
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    memset(&heur, 0, sizeof heur);
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1,
                                            &heur, &found),
             "heuristic query");
    if (found < 1) {
      err = aotrun_shim_fail(
          "%s: cuBLASLt has no algorithm for this GEMM with epilogue %d "
          "(m=%lld n=%lld k=%lld)",
          g->op, (int)epi, (long long)g->m, (long long)g->n, (long long)g->k);
      goto done;
    }
    algo = heur.algo;
    aotrun_fb_algo_cache_put(&key, &algo);
  }
  LT_CHECK(cublasLtMatmul(lt, desc, alpha, b->data, la, a->data, lb, betap,
                          c->data, lc, c->data, lc, &algo, ws, ws_bytes,
                          stream),
           "matmul");
done:
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (lc) cublasLtMatrixLayoutDestroy(lc);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (desc) cublasLtMatmulDescDestroy(desc);
  return err;
}
#undef LT_CHECK

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

/* The bias as the cuBLASLt BIAS epilogue's vector: a fused activation
 * (beta == 1, batch 1), a row-major target, and a bias that is one
 * contiguous row (n values) shared by every row. NULL when it does not
 * apply. */
static const void *bias_vector(const aotrun_fb_gemm *g, int transposed) {
  if (!lt_compliant(g) || transposed) return NULL;
  if (g->bias_row_stride != 0 || (g->n > 1 && g->bias_col_stride != 1))
    return NULL;
  return g->bias_data;
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
    aotrun_fb_matrix bias = {(char *)g->bias_data, g->m, g->n,
                             g->bias_batch_stride, g->bias_row_stride,
                             g->bias_col_stride};
    err = copy_matrix(g, temps, "the bias ('self') into 'out'", &target,
                      &bias, stream);
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

  int use_lt = lt_compliant(g) &&
               (g->act != AOTRUN_FB_ACT_NONE || bias_vec != NULL);
  if (use_lt) {
    err = call_cublaslt(&p, stream, &a, &b, &target, ldc, beta, bias_vec);
  } else {
    cublasHandle_t h = NULL;
    err = aotrun_fb_cublas_acquire(g->op, g->device, stream, &h);
    if (!err) err = call_cublas(&p, h, &a, &b, &target, ldc, beta);
    if (!err && g->act != AOTRUN_FB_ACT_NONE) {
      /* batch 1 here: ATen's separate relu_ / gelu_(x, "tanh"). */
      cudaError_t e = aotrun_fb_gemm_activation(
          target.data, g->out_dtype, p.m, p.n, ldc,
          g->act == AOTRUN_FB_ACT_GELU_TANH, stream);
      if (e != cudaSuccess)
        err = aotrun_shim_fail("%s: the %s kernel failed to launch: %s", g->op,
                               g->act == AOTRUN_FB_ACT_GELU_TANH ? "gelu"
                                                                 : "relu",
                               cudaGetErrorString(e));
    }
  }
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
