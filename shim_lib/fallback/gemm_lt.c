/* gemm_lt.c: see gemm_lt.h. */
#include "shim_lib/fallback/gemm_lt.h"

#include <stdint.h>
#include <string.h>

#include <cublasLt.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/gemm_algo_cache.h"
#include "shim_lib/fallback/kernel_options.h"

cudaDataType_t aotrun_fb_cuda_type(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT64: return CUDA_R_64F;
    case AOTRUN_FB_FLOAT16: return CUDA_R_16F;
    case AOTRUN_FB_BFLOAT16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

int aotrun_fb_plain_lt_ok(const aotrun_fb_gemm *g, const aotrun_fb_operand *a,
                          const aotrun_fb_operand *b, int64_t c_batch_stride) {
  if (!aotrun_fb_plain_lt_enabled() || g->dtype == AOTRUN_FB_FLOAT64)
    return 0;
  if (g->batch == 1) return 1;
  return g->batch <= INT32_MAX && a->batch_stride > 0 &&
         b->batch_stride > 0 && c_batch_stride > 0;
}

/* Largest power of two (at most 256) dividing the address: the alignment
 * cuBLASLt's heuristic must assume (its default is 256). */
static uint32_t alignment_of(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint32_t al = 1;
  while (al < 256 && (a & ((uintptr_t)al * 2 - 1)) == 0) al *= 2;
  return al;
}

static cublasLtEpilogue_t epilogue_of(const aotrun_fb_gemm *g,
                                      const void *bias_vec) {
  if (g->act == AOTRUN_FB_ACT_RELU)
    return bias_vec ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  if (g->act == AOTRUN_FB_ACT_GELU_TANH)
    return bias_vec ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  return bias_vec ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

/* The descriptors of one call, on the caller's stack. */
typedef struct lt_call {
  cublasLtMatmulDescOpaque_t desc_s;
  cublasLtMatrixLayoutOpaque_t la_s, lb_s, lc_s;
  cublasLtMatmulPreferenceOpaque_t pref_s;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulPreference_t pref;
  aotrun_fb_algo_key key;
  const aotrun_fb_cublas_api *blas; /* from the handle's acquire */
} lt_call;

#define LT_CHECK(call, what)                                              \
  do {                                                                    \
    cublasStatus_t st_ = (call);                                          \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                     \
      return aotrun_shim_fail("%s: cuBLASLt %s failed (m=%lld n=%lld "     \
                              "k=%lld batch=%lld): %s",                   \
                              g->op, what, (long long)g->m,               \
                              (long long)g->n, (long long)g->k,           \
                              (long long)g->batch,                        \
                              blas->cublasGetStatusString(st_));          \
  } while (0)

/* One matrix layout, with the batch when there is one. */
static AOTITorchError layout(const aotrun_fb_gemm *g,
                             const aotrun_fb_cublas_api *blas,
                             cublasLtMatrixLayoutOpaque_t *storage,
                             cublasLtMatrixLayout_t *out, cudaDataType_t t,
                             uint64_t rows, uint64_t cols, int64_t ld,
                             int64_t batch_stride, const char *what) {
  *out = storage;
  LT_CHECK(blas->cublasLtMatrixLayoutInit_internal(*out, sizeof **out, t,
                                                   rows, cols, ld),
           what);
  if (g->batch > 1) {
    int32_t count = (int32_t)g->batch;
    LT_CHECK(blas->cublasLtMatrixLayoutSetAttribute(
                 *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                 sizeof count),
             what);
    LT_CHECK(blas->cublasLtMatrixLayoutSetAttribute(
                 *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                 &batch_stride, sizeof batch_stride),
             what);
  }
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError describe(const aotrun_fb_gemm *g, lt_call *c,
                               const aotrun_fb_operand *a,
                               const aotrun_fb_operand *b,
                               const aotrun_fb_matrix *out, int64_t ldc,
                               const void *bias_vec) {
  const aotrun_fb_cublas_api *blas = c->blas;
  int dbl = g->dtype == AOTRUN_FB_FLOAT64;
  c->desc = &c->desc_s;
  /* Full fp32 accumulation for every float type (no TF32), like eager. */
  LT_CHECK(blas->cublasLtMatmulDescInit_internal(
               c->desc, sizeof *c->desc,
               dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
               dbl ? CUDA_R_64F : CUDA_R_32F),
           "descriptor");
  cublasOperation_t ta = (cublasOperation_t)b->op;
  cublasOperation_t tb = (cublasOperation_t)a->op;
  LT_CHECK(blas->cublasLtMatmulDescSetAttribute(
               c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
           "TRANSA");
  LT_CHECK(blas->cublasLtMatmulDescSetAttribute(
               c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
           "TRANSB");
  cublasLtEpilogue_t epi = epilogue_of(g, bias_vec);
  LT_CHECK(blas->cublasLtMatmulDescSetAttribute(
               c->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
           "EPILOGUE");
  if (bias_vec)
    LT_CHECK(blas->cublasLtMatmulDescSetAttribute(
                 c->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_vec,
                 sizeof bias_vec),
             "BIAS_POINTER");
  if (bias_vec && g->batch > 1) {
    int64_t shared = 0; /* every matrix of the batch adds the same row */
    LT_CHECK(blas->cublasLtMatmulDescSetAttribute(
                 c->desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &shared,
                 sizeof shared),
             "BIAS_BATCH_STRIDE");
  }
  /* Stored shapes (column-major): the first operand B' is n x k (op N) or
   * k x n (op T), the second A' is k x m or m x k, C is n x m. */
  cudaDataType_t t = aotrun_fb_cuda_type(g->dtype);
  uint64_t ar = ta == CUBLAS_OP_N ? g->n : g->k;
  uint64_t ac = ta == CUBLAS_OP_N ? g->k : g->n;
  uint64_t br = tb == CUBLAS_OP_N ? g->k : g->m;
  uint64_t bc = tb == CUBLAS_OP_N ? g->m : g->k;
  AOTITorchError err = layout(g, blas, &c->la_s, &c->la, t, ar, ac, b->ld,
                              b->batch_stride, "layout A");
  if (!err)
    err = layout(g, blas, &c->lb_s, &c->lb, t, br, bc, a->ld,
                 a->batch_stride, "layout B");
  if (!err)
    err = layout(g, blas, &c->lc_s, &c->lc,
                 aotrun_fb_cuda_type(g->out_dtype), (uint64_t)g->n,
                 (uint64_t)g->m, ldc, out->batch_stride, "layout C");
  if (err) return err;
  aotrun_fb_algo_key *k = &c->key;
  memset(k, 0, sizeof *k);
  k->device = g->device;
  k->dtype = g->dtype;
  k->out_dtype = g->out_dtype;
  k->trans_a = (int32_t)ta;
  k->trans_b = (int32_t)tb;
  k->epilogue = (int32_t)epi;
  k->m = g->m;
  k->n = g->n;
  k->k = g->k;
  k->lda = b->ld;
  k->ldb = a->ld;
  k->ldc = ldc;
  k->batch = g->batch;
  if (g->batch > 1) {
    k->stride_a = b->batch_stride;
    k->stride_b = a->batch_stride;
    k->stride_c = out->batch_stride;
  }
  k->align_a = alignment_of(b->data);
  k->align_b = alignment_of(a->data);
  k->align_c = alignment_of(out->data);
  k->has_bias = bias_vec != NULL;
  return AOTI_TORCH_SUCCESS;
}

/* The heuristic's preference: the workspace and the operands' alignment. */
static AOTITorchError prefer(const aotrun_fb_gemm *g, lt_call *c) {
  const aotrun_fb_cublas_api *blas = c->blas;
  c->pref = &c->pref_s;
  LT_CHECK(blas->cublasLtMatmulPreferenceInit_internal(c->pref,
                                                       sizeof *c->pref),
           "preference");
  uint64_t wsb = c->key.workspace_bytes;
  LT_CHECK(blas->cublasLtMatmulPreferenceSetAttribute(
               c->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
               sizeof wsb),
           "workspace preference");
  const struct {
    cublasLtMatmulPreferenceAttributes_t attr;
    uint32_t value;
  } al[4] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, c->key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, c->key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c->key.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, c->key.align_c},
  };
  for (int i = 0; i < 4; i++)
    LT_CHECK(blas->cublasLtMatmulPreferenceSetAttribute(
                 c->pref, al[i].attr, &al[i].value, sizeof al[i].value),
             "alignment preference");
  return AOTI_TORCH_SUCCESS;
}

/* The algorithm for the problem: cached, or asked once and remembered. */
static AOTITorchError choose(const aotrun_fb_gemm *g, cublasLtHandle_t lt,
                             lt_call *c, cublasLtMatmulAlgo_t *algo,
                             int *found) {
  aotrun_fb_algo_answer cached = aotrun_fb_algo_cache_find(&c->key, algo);
  if (cached != AOTRUN_FB_ALGO_UNKNOWN) {
    *found = cached == AOTRUN_FB_ALGO_FOUND;
    return AOTI_TORCH_SUCCESS;
  }
  AOTITorchError err = prefer(g, c);
  if (err) return err;
  const aotrun_fb_cublas_api *blas = c->blas;
  cublasLtMatmulHeuristicResult_t heur;
  memset(&heur, 0, sizeof heur);
  int n = 0;
  LT_CHECK(blas->cublasLtMatmulAlgoGetHeuristic(lt, c->desc, c->la, c->lb,
                                                c->lc, c->lc, c->pref, 1,
                                                &heur, &n),
           "heuristic query");
  *found = n >= 1;
  if (*found) *algo = heur.algo;
  aotrun_fb_algo_cache_put(&c->key, *found ? algo : NULL);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_gemm_lt(const aotrun_fb_gemm *g, cudaStream_t stream,
                                 const aotrun_fb_operand *a,
                                 const aotrun_fb_operand *b,
                                 const aotrun_fb_matrix *c, int64_t ldc,
                                 double beta, const void *bias_vec,
                                 int may_fall_back, int *ran) {
  *ran = 0;
  const aotrun_fb_cublas_api *blas = NULL;
  cublasLtHandle_t lt = NULL;
  void *ws = NULL;
  size_t ws_bytes = 0;
  AOTITorchError err = aotrun_fb_cublaslt_acquire(g->op, g->device, stream,
                                                  &blas, &lt, &ws, &ws_bytes);
  if (err) return err;
  lt_call call;
  call.blas = blas;
  err = describe(g, &call, a, b, c, ldc, bias_vec);
  if (err) return err;
  call.key.workspace_bytes = ws_bytes;
  cublasLtMatmulAlgo_t algo;
  int found = 0;
  err = choose(g, lt, &call, &algo, &found);
  if (err) return err;
  if (!found) {
    if (may_fall_back) return AOTI_TORCH_SUCCESS;
    return aotrun_shim_fail(
        "%s: cuBLASLt has no algorithm for this GEMM with epilogue %d "
        "(m=%lld n=%lld k=%lld)",
        g->op, (int)call.key.epilogue, (long long)g->m, (long long)g->n,
        (long long)g->k);
  }
  int dbl = g->dtype == AOTRUN_FB_FLOAT64;
  float alpha_f = (float)g->alpha, beta_f = (float)beta;
  const void *alpha = dbl ? (const void *)&g->alpha : (const void *)&alpha_f;
  const void *betap = dbl ? (const void *)&beta : (const void *)&beta_f;
  LT_CHECK(blas->cublasLtMatmul(lt, call.desc, alpha, b->data, call.la,
                                a->data, call.lb, betap, c->data, call.lc,
                                c->data, call.lc, &algo, ws, ws_bytes,
                                stream),
           "matmul");
  *ran = 1;
  return AOTI_TORCH_SUCCESS;
}
#undef LT_CHECK
