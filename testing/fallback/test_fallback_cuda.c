/* test_fallback_cuda.c: results of the CUDA fallback ops against a CPU
 * reference (double for GEMMs, exact for index_Tensor), in every dtype and
 * with transposed, padded, gathered and broadcast operands. Every test skips
 * with the reason when there is no usable GPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/gemm_algo_cache.h"
#include "shim_lib/fallback/gemm_lt.h"
#include "testing/fallback/fallback_test_util.h"

static int g_gpu;
static char g_why[256];
static cudaStream_t g_stream;
static CUDAStreamGuardHandle g_guard;

#define REQUIRE_GPU()                         \
  do {                                        \
    if (!g_gpu) {                             \
      print_message("skipped: %s\n", g_why);  \
      skip();                                 \
    }                                         \
  } while (0)

static int group_setup(void **state) {
  (void)state;
  g_gpu = fb_gpu_available(g_why, sizeof g_why);
  if (!g_gpu) return 0;
  if (cudaStreamCreate(&g_stream) != cudaSuccess) return -1;
  /* The ops run on the thread's current stream, as inside a model run. */
  return aoti_torch_create_cuda_stream_guard(g_stream, 0, &g_guard);
}

static int group_teardown(void **state) {
  (void)state;
  if (!g_gpu) return 0;
  aoti_torch_delete_cuda_stream_guard(g_guard);
  cudaStreamDestroy(g_stream);
  return 0;
}

static const int32_t kFloatTypes[] = {FB_F32, FB_F64, FB_F16, FB_BF16};

/* ---- matrices in several memory layouts ---- */

typedef enum {
  L_CONTIG,  /* row-major */
  L_TRANS,   /* column-major (a transposed view) */
  L_PADDED,  /* row-major, rows padded */
  L_COLPAD,  /* column-major, columns padded */
  L_STEP2,   /* every other element: needs a gather copy */
  L_BCAST,   /* row stride 0: every row is the same (broadcast) */
  L_COUNT
} layout;

static const char *const kLayoutName[] = {"contig", "trans", "padded",
                                          "colpad", "step2", "bcast"};

static void layout_strides(layout l, int64_t r, int64_t c, int64_t *rs,
                           int64_t *cs) {
  switch (l) {
    case L_CONTIG: *rs = c; *cs = 1; break;
    case L_TRANS: *rs = 1; *cs = r; break;
    case L_PADDED: *rs = c + 3; *cs = 1; break;
    case L_COLPAD: *rs = 1; *cs = r + 5; break;
    case L_STEP2: *rs = 2 * c; *cs = 2; break;
    default: *rs = 0; *cs = 1; break;
  }
}

/* A [batch,] r x c matrix (batch 0: 2-D) in layout l; batch_bcast gives the
 * batch dim stride 0. Filled with random values and uploaded. */
static void make_matrix(fb_tensor *t, int32_t dtype, int64_t batch, int64_t r,
                        int64_t c, layout l, int batch_bcast, uint64_t *seed) {
  int64_t rs, cs;
  layout_strides(l, r, c, &rs, &cs);
  int64_t span = 1 + (r - 1) * rs + (c - 1) * cs;
  if (r == 0 || c == 0) span = 1;
  if (batch > 0) {
    const int64_t sizes[3] = {batch, r, c};
    const int64_t strides[3] = {batch_bcast ? 0 : span + 1, rs, cs};
    assert_int_equal(fb_tensor_new(t, dtype, 3, sizes, strides), 0);
  } else {
    const int64_t sizes[2] = {r, c};
    const int64_t strides[2] = {rs, cs};
    assert_int_equal(fb_tensor_new(t, dtype, 2, sizes, strides), 0);
  }
  if (seed) fb_tensor_fill_random(t, seed);
  assert_int_equal(fb_tensor_upload(t), 0);
}

static double elem2(const fb_tensor *t, int64_t b, int64_t i, int64_t j) {
  int64_t idx3[3] = {b, i, j}, idx2[2] = {i, j};
  return fb_tensor_get(t, t->ndim == 3 ? idx3 : idx2);
}

static void tolerance(int32_t dtype, double *atol, double *rtol) {
  switch (dtype) {
    case FB_F64: *atol = 1e-11; *rtol = 1e-11; break;
    case FB_F32: *atol = 1e-4; *rtol = 1e-4; break;
    case FB_F16: *atol = 2e-2; *rtol = 1e-2; break;
    default: *atol = 6e-2; *rtol = 2e-2; break;
  }
}

/* out (downloaded) == alpha * a@b + beta * bias, per element; also checks
 * that out's padding (NaN from fb_tensor_new) was left alone. */
static void check_gemm(const char *what, fb_tensor *out, const fb_tensor *a,
                       const fb_tensor *b, const fb_tensor *bias, double alpha,
                       double beta) {
  assert_int_equal(fb_tensor_download(out), 0);
  int three = out->ndim == 3;
  int64_t batch = three ? out->sizes[0] : 1;
  int64_t m = out->sizes[three], n = out->sizes[three + 1];
  int64_t k = a->sizes[a->ndim - 1];
  double atol, rtol;
  tolerance(out->dtype, &atol, &rtol);
  char *logical = calloc((size_t)out->span + 1, 1);
  assert_non_null(logical);
  for (int64_t bi = 0; bi < batch; bi++) {
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++) {
        double ref = 0.0;
        for (int64_t p = 0; p < k; p++)
          ref += elem2(a, bi, i, p) * elem2(b, bi, p, j);
        ref *= alpha;
        if (bias != NULL && beta != 0.0) {
          int64_t bidx[2] = {i, j};
          int64_t nd = bias->ndim;
          int64_t idx[2] = {0, 0};
          for (int64_t d = 0; d < nd; d++) {
            int64_t src = 2 - nd + d;
            idx[d] = bias->sizes[d] == 1 ? 0 : bidx[src];
          }
          ref += beta * fb_tensor_get(bias, idx);
        }
        int64_t idx3[3] = {bi, i, j}, idx2[2] = {i, j};
        int64_t off = fb_tensor_offset(out, three ? idx3 : idx2);
        logical[off] = 1;
        double got = fb_load(out->dtype, out->host, off);
        if (!(fabs(got - ref) <= atol + rtol * fabs(ref)))
          fail_msg("%s %s: [%lld,%lld,%lld] got %.9g expected %.9g", what,
                   fb_dtype_str(out->dtype), (long long)bi, (long long)i,
                   (long long)j, got, ref);
      }
    }
  }
  for (int64_t s = 0; s < out->span; s++)
    if (!logical[s] && !isnan(fb_load(out->dtype, out->host, s)))
      fail_msg("%s: padding element %lld of out was written", what,
               (long long)s);
  free(logical);
}

static void test_mm_layouts_dtypes(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 1;
  const int64_t m = 37, k = 45, n = 29;
  for (size_t di = 0; di < 4; di++) {
    int32_t dt = kFloatTypes[di];
    for (int la = 0; la < L_COUNT; la++) {
      for (int lb = 0; lb < L_COUNT; lb++) {
        fb_tensor a, b, out;
        make_matrix(&a, dt, 0, m, k, (layout)la, 0, &seed);
        make_matrix(&b, dt, 0, k, n, (layout)lb, 0, &seed);
        make_matrix(&out, dt, 0, m, n, L_CONTIG, 0, NULL);
        assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                         AOTI_TORCH_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "mm a=%s b=%s", kLayoutName[la],
                 kLayoutName[lb]);
        check_gemm(what, &out, &a, &b, NULL, 1.0, 0.0);
        fb_tensor_free(&a);
        fb_tensor_free(&b);
        fb_tensor_free(&out);
      }
    }
  }
}

static void test_mm_out_layouts(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 2;
  const layout outs[] = {L_CONTIG, L_TRANS, L_PADDED, L_COLPAD, L_STEP2};
  for (size_t di = 0; di < 4; di++) {
    for (size_t lo = 0; lo < sizeof outs / sizeof outs[0]; lo++) {
      for (int la = 0; la < 2; la++) {
        fb_tensor a, b, out;
        make_matrix(&a, kFloatTypes[di], 0, 19, 33, (layout)la, 0, &seed);
        make_matrix(&b, kFloatTypes[di], 0, 33, 21, L_TRANS, 0, &seed);
        make_matrix(&out, kFloatTypes[di], 0, 19, 21, outs[lo], 0, NULL);
        assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                         AOTI_TORCH_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "mm out=%s a=%s", kLayoutName[outs[lo]],
                 kLayoutName[la]);
        check_gemm(what, &out, &a, &b, NULL, 1.0, 0.0);
        fb_tensor_free(&a);
        fb_tensor_free(&b);
        fb_tensor_free(&out);
      }
    }
  }
}

/* Vectors and a 1 x 1 product: degenerate leading dimensions. */
static void test_mm_thin(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 3;
  const int64_t shapes[][3] = {{1, 1, 1}, {1, 17, 1}, {9, 1, 7},
                               {1, 8, 13}, {13, 8, 1}};
  for (size_t s = 0; s < 5; s++) {
    for (int la = 0; la < 2; la++) {
      fb_tensor a, b, out;
      make_matrix(&a, FB_F32, 0, shapes[s][0], shapes[s][1], (layout)la, 0,
                  &seed);
      make_matrix(&b, FB_F32, 0, shapes[s][1], shapes[s][2], (layout)(1 - la),
                  0, &seed);
      make_matrix(&out, FB_F32, 0, shapes[s][0], shapes[s][2], (layout)la, 0,
                  NULL);
      assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                       AOTI_TORCH_SUCCESS);
      check_gemm("mm thin", &out, &a, &b, NULL, 1.0, 0.0);
      fb_tensor_free(&a);
      fb_tensor_free(&b);
      fb_tensor_free(&out);
    }
  }
}

/* Bias shapes [N], [N] strided, [1,N], [M,N], [M,N] transposed, [M,1], 0-d. */
static void make_bias(fb_tensor *t, int32_t dt, int kind, int64_t m, int64_t n,
                      uint64_t *seed) {
  int64_t sizes[2], strides[2], nd;
  switch (kind) {
    case 0: nd = 1; sizes[0] = n; strides[0] = 1; break;
    case 1: nd = 1; sizes[0] = n; strides[0] = 2; break;
    case 2: nd = 2; sizes[0] = 1; sizes[1] = n; strides[0] = n; strides[1] = 1; break;
    case 3: nd = 2; sizes[0] = m; sizes[1] = n; strides[0] = n; strides[1] = 1; break;
    case 4: nd = 2; sizes[0] = m; sizes[1] = n; strides[0] = 1; strides[1] = m; break;
    case 5: nd = 2; sizes[0] = m; sizes[1] = 1; strides[0] = 1; strides[1] = 1; break;
    default: nd = 0; break;
  }
  assert_int_equal(fb_tensor_new(t, dt, nd, sizes, strides), 0);
  fb_tensor_fill_random(t, seed);
  assert_int_equal(fb_tensor_upload(t), 0);
}

static void test_addmm_bias_broadcast(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 4;
  const int64_t m = 23, k = 31, n = 17;
  for (size_t di = 0; di < 4; di++) {
    int32_t dt = kFloatTypes[di];
    for (int kind = 0; kind < 7; kind++) {
      for (int lo = 0; lo < 3; lo++) {
        layout out_l = lo == 0 ? L_CONTIG : lo == 1 ? L_TRANS : L_STEP2;
        fb_tensor a, b, bias, out;
        make_matrix(&a, dt, 0, m, k, L_CONTIG, 0, &seed);
        make_matrix(&b, dt, 0, k, n, L_TRANS, 0, &seed);
        make_bias(&bias, dt, kind, m, n, &seed);
        make_matrix(&out, dt, 0, m, n, out_l, 0, NULL);
        double beta = kind % 2 ? 0.5 : 1.0, alpha = kind % 3 ? 2.0 : 1.0;
        assert_int_equal(aoti_torch_cuda_addmm_out(out.handle, bias.handle,
                                                   a.handle, b.handle, beta,
                                                   alpha),
                         AOTI_TORCH_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "addmm bias kind %d out=%s", kind,
                 kLayoutName[out_l]);
        check_gemm(what, &out, &a, &b, &bias, alpha, beta);
        fb_tensor_free(&a);
        fb_tensor_free(&b);
        fb_tensor_free(&bias);
        fb_tensor_free(&out);
      }
    }
  }
}

/* beta == 0 ignores the bias and out's old values, NaN included. */
static void test_addmm_beta_zero_ignores_nan(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 5;
  for (size_t di = 0; di < 4; di++) {
    int32_t dt = kFloatTypes[di];
    fb_tensor a, b, bias, out;
    make_matrix(&a, dt, 0, 16, 24, L_CONTIG, 0, &seed);
    make_matrix(&b, dt, 0, 24, 8, L_CONTIG, 0, &seed);
    const int64_t bs[2] = {16, 8};
    assert_int_equal(fb_tensor_new(&bias, dt, 2, bs, NULL), 0);
    fb_tensor_fill_all(&bias, NAN);
    assert_int_equal(fb_tensor_upload(&bias), 0);
    make_matrix(&out, dt, 0, 16, 8, L_CONTIG, 0, NULL); /* all NaN */
    assert_int_equal(aoti_torch_cuda_addmm_out(out.handle, bias.handle,
                                               a.handle, b.handle, 0.0, 1.5),
                     AOTI_TORCH_SUCCESS);
    check_gemm("addmm beta=0", &out, &a, &b, NULL, 1.5, 0.0);
    /* mm_out also overwrites NaN in out. */
    assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                     AOTI_TORCH_SUCCESS);
    check_gemm("mm over NaN", &out, &a, &b, NULL, 1.0, 0.0);
    fb_tensor_free(&a);
    fb_tensor_free(&b);
    fb_tensor_free(&bias);
    fb_tensor_free(&out);
  }
}

/* K == 0: mm gives zeros, addmm beta * bias. */
static void test_gemm_k_zero(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 6;
  fb_tensor a, b, bias, out;
  make_matrix(&a, FB_F32, 0, 5, 0, L_CONTIG, 0, NULL);
  make_matrix(&b, FB_F32, 0, 0, 4, L_CONTIG, 0, NULL);
  make_matrix(&out, FB_F32, 0, 5, 4, L_CONTIG, 0, NULL);
  make_bias(&bias, FB_F32, 0, 5, 4, &seed);
  assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                   AOTI_TORCH_SUCCESS);
  check_gemm("mm k=0", &out, &a, &b, NULL, 1.0, 0.0);
  assert_int_equal(aoti_torch_cuda_addmm_out(out.handle, bias.handle, a.handle,
                                             b.handle, 0.5, 2.0),
                   AOTI_TORCH_SUCCESS);
  check_gemm("addmm k=0", &out, &a, &b, &bias, 2.0, 0.5);
  fb_tensor_free(&a);
  fb_tensor_free(&b);
  fb_tensor_free(&bias);
  fb_tensor_free(&out);
}

/* out [B, M, N] laid out as [M, B, N]: batches interleave, so the op
 * computes into scratch and copies back. */
static void make_interleaved_out(fb_tensor *t, int32_t dt, int64_t batch,
                                 int64_t m, int64_t n) {
  const int64_t sizes[3] = {batch, m, n};
  const int64_t strides[3] = {n, batch * n, 1};
  assert_int_equal(fb_tensor_new(t, dt, 3, sizes, strides), 0);
  assert_int_equal(fb_tensor_upload(t), 0);
}

static void test_bmm(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 7;
  const int64_t batch = 3, m = 14, k = 22, n = 11;
  for (size_t di = 0; di < 4; di++) {
    int32_t dt = kFloatTypes[di];
    for (int la = 0; la < L_COUNT; la++) {
      for (int v = 0; v < 3; v++) {
        fb_tensor a, b, out;
        make_matrix(&a, dt, batch, m, k, (layout)la, 0, &seed);
        /* v 1: mat2 broadcast over the batch (batch stride 0). */
        make_matrix(&b, dt, batch, k, n, v == 2 ? L_TRANS : L_CONTIG, v == 1,
                    &seed);
        if (v == 2)
          make_interleaved_out(&out, dt, batch, m, n);
        else
          make_matrix(&out, dt, batch, m, n, v ? L_TRANS : L_CONTIG, 0, NULL);
        assert_int_equal(
            aoti_torch_cuda_bmm_out(out.handle, a.handle, b.handle),
            AOTI_TORCH_SUCCESS);
        char what[64];
        snprintf(what, sizeof what, "bmm a=%s variant %d", kLayoutName[la], v);
        check_gemm(what, &out, &a, &b, NULL, 1.0, 0.0);
        fb_tensor_free(&a);
        fb_tensor_free(&b);
        fb_tensor_free(&out);
      }
    }
  }
}

/* A GEMM queued inside a CUDA graph capture runs on replay (cuBLAS uses the
 * preallocated workspace, nothing is allocated by cuBLAS while capturing). */
static void test_mm_in_graph_capture(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 8;
  fb_tensor a, b, out;
  make_matrix(&a, FB_F32, 0, 64, 128, L_CONTIG, 0, &seed);
  make_matrix(&b, FB_F32, 0, 128, 32, L_TRANS, 0, &seed);
  make_matrix(&out, FB_F32, 0, 64, 32, L_CONTIG, 0, NULL);
  /* Warm-up outside the capture creates the thread's handle. */
  assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(cudaStreamSynchronize(g_stream), cudaSuccess);
  assert_int_equal(cudaMemset(out.dev, 0xff, (size_t)out.span * 4),
                   cudaSuccess); /* NaN pattern */
  assert_int_equal(cudaStreamBeginCapture(g_stream,
                                          cudaStreamCaptureModeRelaxed),
                   cudaSuccess);
  AOTITorchError err = aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle);
  cudaGraph_t graph = NULL;
  assert_int_equal(cudaStreamEndCapture(g_stream, &graph), cudaSuccess);
  assert_int_equal(err, AOTI_TORCH_SUCCESS);
  cudaGraphExec_t exec = NULL;
  assert_int_equal(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(exec, g_stream), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(g_stream), cudaSuccess);
  check_gemm("mm replayed from a graph", &out, &a, &b, NULL, 1.0, 0.0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  fb_tensor_free(&a);
  fb_tensor_free(&b);
  fb_tensor_free(&out);
}

/* ---- index_Tensor ---- */

/* Runs self[None x pos, index] and compares the result exactly with the
 * CPU reference built from the host copies (picks: linear positions in the
 * picked dims, i.e. the True positions of a mask or normalised integers). */
static void check_index(const char *what, const fb_tensor *self, int64_t pos,
                        const fb_tensor *index, int is_mask) {
  const AtenTensorHandle *idx[FB_MAX_DIMS] = {NULL};
  AtenTensorHandle ih = index->handle;
  idx[pos] = &ih;
  AtenTensorHandle ret = NULL;
  AOTITorchError err =
      aoti_torch_cuda_index_Tensor(self->handle, idx, pos + 1, &ret);
  if (err) fail_msg("%s: %s", what, aotrun_shim_last_error());
  assert_non_null(ret);

  /* Reference picks. */
  int64_t pick_nd = is_mask ? index->ndim : 1;
  int64_t n_index = 1;
  for (int64_t d = 0; d < index->ndim; d++) n_index *= index->sizes[d];
  int64_t *picks = malloc(sizeof(int64_t) * (size_t)(n_index + 1));
  int64_t count = 0;
  for (int64_t i = 0; i < n_index; i++) {
    int64_t ii[FB_MAX_DIMS], r = i;
    for (int64_t d = index->ndim - 1; d >= 0; d--) {
      ii[d] = r % index->sizes[d];
      r /= index->sizes[d];
    }
    double v = fb_tensor_get(index, ii);
    if (is_mask) {
      if (v != 0.0) picks[count++] = i;
    } else {
      picks[count++] = v < 0 ? (int64_t)v + self->sizes[pos] : (int64_t)v;
    }
  }
  /* Expected shape. */
  int64_t esizes[2 * FB_MAX_DIMS], end = 0;
  for (int64_t d = 0; d < pos; d++) esizes[end++] = self->sizes[d];
  if (is_mask) {
    esizes[end++] = count;
  } else {
    for (int64_t d = 0; d < index->ndim; d++) esizes[end++] = index->sizes[d];
  }
  for (int64_t d = pos + pick_nd; d < self->ndim; d++)
    esizes[end++] = self->sizes[d];
  int64_t ndim = -1, *sizes = NULL, *strides = NULL;
  int32_t dtype = -1;
  assert_int_equal(aoti_torch_get_dim(ret, &ndim), 0);
  assert_int_equal(aoti_torch_get_sizes(ret, &sizes), 0);
  assert_int_equal(aoti_torch_get_strides(ret, &strides), 0);
  assert_int_equal(aoti_torch_get_dtype(ret, &dtype), 0);
  assert_int_equal(dtype, self->dtype);
  assert_int_equal(ndim, end);
  for (int64_t d = 0; d < end; d++) {
    if (sizes[d] != esizes[d])
      fail_msg("%s: result size %lld in dim %lld, expected %lld", what,
               (long long)sizes[d], (long long)d, (long long)esizes[d]);
  }
  int64_t lead = 1, rest = 1;
  for (int64_t d = 0; d < pos; d++) lead *= self->sizes[d];
  for (int64_t d = pos + pick_nd; d < self->ndim; d++) rest *= self->sizes[d];
  int64_t total = lead * count * rest;
  /* The result follows meta_index_Tensor's strides (not always
   * contiguous): read its whole span and address it through them. */
  int64_t span = total > 0 ? 1 : 0;
  for (int64_t d = 0; d < end && total > 0; d++)
    span += (sizes[d] - 1) * strides[d];
  void *data = NULL;
  assert_int_equal(aoti_torch_get_data_ptr(ret, &data), 0);
  char *host = malloc((size_t)(span + 1) * self->esize);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  if (total > 0)
    assert_int_equal(cudaMemcpy(host, data, (size_t)span * self->esize,
                                cudaMemcpyDeviceToHost),
                     cudaSuccess);
  for (int64_t o = 0; o < total; o++) {
    int64_t ro = 0, rl = o;
    for (int64_t d = end - 1; d >= 0; d--) {
      ro += (rl % sizes[d]) * strides[d];
      rl /= sizes[d];
    }
    int64_t r = o % rest, t = o / rest, c = t % count, a = t / count;
    int64_t si[FB_MAX_DIMS];
    int64_t lin = a;
    for (int64_t d = pos - 1; d >= 0; d--) {
      si[d] = lin % self->sizes[d];
      lin /= self->sizes[d];
    }
    lin = picks[c];
    for (int64_t d = pos + pick_nd - 1; d >= pos; d--) {
      si[d] = lin % self->sizes[d];
      lin /= self->sizes[d];
    }
    lin = r;
    for (int64_t d = self->ndim - 1; d >= pos + pick_nd; d--) {
      si[d] = lin % self->sizes[d];
      lin /= self->sizes[d];
    }
    int64_t off = fb_tensor_offset(self, si);
    if (memcmp(host + ro * self->esize,
               (const char *)self->host + off * self->esize,
               self->esize) != 0)
      fail_msg("%s: result element %lld differs (expected %g)", what,
               (long long)o, fb_load(self->dtype, self->host, off));
  }
  free(host);
  free(picks);
  aoti_torch_delete_tensor_object(ret);
}

static void make_tensor(fb_tensor *t, int32_t dt, int64_t ndim,
                        const int64_t *sizes, const int64_t *strides,
                        uint64_t *seed) {
  assert_int_equal(fb_tensor_new(t, dt, ndim, sizes, strides), 0);
  fb_tensor_fill_random(t, seed);
  assert_int_equal(fb_tensor_upload(t), 0);
}

/* A mask with a given pattern: 0 all false, 1 all true, 2 random. */
static void make_mask(fb_tensor *t, int32_t dt, int64_t ndim,
                      const int64_t *sizes, const int64_t *strides, int pattern,
                      uint64_t *seed) {
  assert_int_equal(fb_tensor_new(t, dt, ndim, sizes, strides), 0);
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; d++) n *= sizes[d];
  for (int64_t i = 0; i < n; i++) {
    int64_t ii[FB_MAX_DIMS], r = i;
    for (int64_t d = ndim - 1; d >= 0; d--) {
      ii[d] = r % sizes[d];
      r /= sizes[d];
    }
    double v = pattern == 2 ? (fb_uniform(seed) > 0.0) : pattern;
    if (dt == FB_UINT8 && v != 0.0) v = 7; /* any non-zero byte is True */
    fb_tensor_set(t, ii, v);
  }
  assert_int_equal(fb_tensor_upload(t), 0);
}

static void test_index_mask_1d_2d(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 11;
  fb_tensor x, m;
  const int64_t xs[2] = {6, 4}, ms[1] = {6};
  make_tensor(&x, FB_F32, 2, xs, NULL, &seed);
  make_mask(&m, FB_BOOL, 1, ms, NULL, 2, &seed);
  check_index("1-D mask", &x, 0, &m, 1);
  fb_tensor_free(&x);
  fb_tensor_free(&m);

  const int64_t xs3[3] = {5, 7, 3}, ms2[2] = {5, 7};
  make_tensor(&x, FB_F32, 3, xs3, NULL, &seed);
  make_mask(&m, FB_BOOL, 2, ms2, NULL, 2, &seed);
  check_index("2-D mask", &x, 0, &m, 1);
  fb_tensor_free(&m);
  /* A mask over every dim: result [count]. */
  make_mask(&m, FB_BOOL, 3, xs3, NULL, 2, &seed);
  check_index("3-D mask over all dims", &x, 0, &m, 1);
  fb_tensor_free(&x);
  fb_tensor_free(&m);
}

static void test_index_mask_all_false_all_true(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 12;
  fb_tensor x, m;
  const int64_t xs[2] = {9, 4}, ms[1] = {9};
  make_tensor(&x, FB_F32, 2, xs, NULL, &seed);
  make_mask(&m, FB_BOOL, 1, ms, NULL, 0, &seed);
  check_index("all-false mask (zero rows)", &x, 0, &m, 1);
  fb_tensor_free(&m);
  make_mask(&m, FB_BOOL, 1, ms, NULL, 1, &seed);
  check_index("all-true mask", &x, 0, &m, 1);
  fb_tensor_free(&m);
  /* An empty mask over an empty dim. */
  fb_tensor e, em;
  const int64_t es[2] = {0, 4}, ems[1] = {0};
  make_tensor(&e, FB_F32, 2, es, NULL, &seed);
  make_mask(&em, FB_BOOL, 1, ems, NULL, 2, &seed);
  check_index("empty mask", &e, 0, &em, 1);
  fb_tensor_free(&e);
  fb_tensor_free(&em);
  fb_tensor_free(&x);
}

static void test_index_noncontiguous(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 13;
  fb_tensor x, m;
  /* self [3, 5, 2] stored as [2][5][3] (a permuted view). */
  const int64_t xs[3] = {3, 5, 2}, xst[3] = {1, 3, 15};
  make_tensor(&x, FB_F32, 3, xs, xst, &seed);
  const int64_t ms[1] = {5}, mst[1] = {3}; /* strided mask */
  make_mask(&m, FB_BOOL, 1, ms, mst, 2, &seed);
  check_index("None + mask on a permuted self", &x, 1, &m, 1);
  fb_tensor_free(&m);
  const int64_t ms2[2] = {3, 5}, mst2[2] = {1, 3}; /* transposed 2-D mask */
  make_mask(&m, FB_UINT8, 2, ms2, mst2, 2, &seed);
  check_index("uint8 transposed 2-D mask", &x, 0, &m, 1);
  fb_tensor_free(&m);
  fb_tensor_free(&x);
}

static void test_index_dtypes(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 14;
  const int32_t dts[] = {FB_F16, FB_BF16, FB_F64, FB_INT64, FB_INT32, FB_BOOL,
                         FB_UINT8};
  const int64_t xs[3] = {8, 3, 2}, ms[1] = {8};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    fb_tensor x, m;
    make_tensor(&x, dts[i], 3, xs, NULL, &seed);
    make_mask(&m, FB_BOOL, 1, ms, NULL, 2, &seed);
    check_index(fb_dtype_str(dts[i]), &x, 0, &m, 1);
    fb_tensor_free(&x);
    fb_tensor_free(&m);
  }
}

static void test_index_integer(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 15;
  fb_tensor x, ix;
  const int64_t xs[2] = {4, 3};
  make_tensor(&x, FB_F32, 2, xs, NULL, &seed);
  const int64_t is[1] = {5};
  assert_int_equal(fb_tensor_new(&ix, FB_INT64, 1, is, NULL), 0);
  const double vals[5] = {-1, 0, 2, 2, -4};
  for (int64_t i = 0; i < 5; i++) fb_tensor_set(&ix, &i, vals[i]);
  assert_int_equal(fb_tensor_upload(&ix), 0);
  check_index("int64 index with negatives", &x, 0, &ix, 0);
  fb_tensor_free(&ix);
  fb_tensor_free(&x);

  /* None + a 2-D int32 index on dim 1 of [2, 4, 3]: result [2, 2, 2, 3]. */
  const int64_t xs3[3] = {2, 4, 3};
  make_tensor(&x, FB_F32, 3, xs3, NULL, &seed);
  const int64_t is2[2] = {2, 2};
  assert_int_equal(fb_tensor_new(&ix, FB_INT32, 2, is2, NULL), 0);
  const double v2[4] = {0, 1, 3, -4};
  for (int64_t i = 0; i < 4; i++) {
    int64_t ii[2] = {i / 2, i % 2};
    fb_tensor_set(&ix, ii, v2[i]);
  }
  assert_int_equal(fb_tensor_upload(&ix), 0);
  check_index("None + 2-D int32 index", &x, 1, &ix, 0);
  fb_tensor_free(&ix);
  fb_tensor_free(&x);
}

static void test_index_integer_out_of_bounds(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 16;
  fb_tensor x, ix;
  const int64_t xs[2] = {4, 3}, is[1] = {3};
  make_tensor(&x, FB_F32, 2, xs, NULL, &seed);
  assert_int_equal(fb_tensor_new(&ix, FB_INT64, 1, is, NULL), 0);
  const double vals[3] = {0, 4, 1};
  for (int64_t i = 0; i < 3; i++) fb_tensor_set(&ix, &i, vals[i]);
  assert_int_equal(fb_tensor_upload(&ix), 0);
  AtenTensorHandle h = ix.handle, ret = NULL;
  const AtenTensorHandle *idx[1] = {&h};
  /* No host synchronisation: the kernel reports through the device error
   * slot, read after a sync. */
  assert_int_equal(aoti_torch_cuda_index_Tensor(x.handle, idx, 1, &ret),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  char msg[512];
  assert_int_equal(aotrun_shim_take_device_error(0, msg, sizeof msg), 1);
  if (strstr(msg, "aoti_torch_cuda_index_Tensor: index 4 in 'indices[0]' is "
                  "out of bounds for dim 0 with size 4") == NULL)
    fail_msg("device error \"%s\"", msg);
  aoti_torch_delete_tensor_object(ret);
  fb_tensor_free(&ix);
  fb_tensor_free(&x);
}

/* Inside a capture a mask index must fail cleanly (the backend then retries
 * without a graph): no abort, the capture ends fine, no sticky error. */
static void test_index_refused_in_capture(void **state) {
  (void)state;
  REQUIRE_GPU();
  uint64_t seed = 17;
  cudaStream_t s = NULL;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                   cudaSuccess);
  CUDAStreamGuardHandle guard = NULL;
  assert_int_equal(aoti_torch_create_cuda_stream_guard(s, 0, &guard), 0);
  fb_tensor x, m;
  const int64_t xs[2] = {6, 4}, ms[1] = {6};
  make_tensor(&x, FB_F32, 2, xs, NULL, &seed);
  make_mask(&m, FB_BOOL, 1, ms, NULL, 2, &seed);
  AtenTensorHandle mh = m.handle;
  const AtenTensorHandle *idx[1] = {&mh};
  const enum cudaStreamCaptureMode modes[2] = {cudaStreamCaptureModeRelaxed,
                                               cudaStreamCaptureModeGlobal};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(cudaStreamBeginCapture(s, modes[i]), cudaSuccess);
    AtenTensorHandle ret = (AtenTensorHandle)&seed;
    AOTITorchError err = aoti_torch_cuda_index_Tensor(x.handle, idx, 1, &ret);
    cudaGraph_t graph = NULL;
    cudaError_t end = cudaStreamEndCapture(s, &graph);
    assert_int_equal(err, AOTI_TORCH_FAILURE);
    assert_null(ret);
    assert_non_null(strstr(aotrun_shim_last_error(),
                           "aoti_torch_cuda_index_Tensor (boolean mask) cannot "
                           "run inside a CUDA graph capture"));
    assert_int_equal(end, cudaSuccess);
    cudaGraphDestroy(graph);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
  }
  /* Outside the capture the same call works. */
  check_index("mask after a refused capture", &x, 0, &m, 1);
  fb_tensor_free(&x);
  fb_tensor_free(&m);
  assert_int_equal(aoti_torch_delete_cuda_stream_guard(guard), 0);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

/* With AOTRUN_GEMM_LT=1 (run_gpu_check.sh runs this binary a second time
 * so): a plain mm goes through cuBLASLt, asks the heuristic once per
 * problem and then answers from the cache; results stay right, batched
 * too. Skipped (with the reason) when the option is off. */
static void test_mm_through_cublaslt_cached(void **state) {
  (void)state;
  REQUIRE_GPU();
  if (!aotrun_fb_plain_lt_enabled()) {
    print_message("skipped: AOTRUN_GEMM_LT is not 1 (plain GEMMs on "
                  "cublasGemmEx)\n");
    skip();
  }
  uint64_t seed = 11;
  fb_tensor a, b, out;
  make_matrix(&a, FB_F32, 0, 24, 40, L_CONTIG, 0, &seed);
  make_matrix(&b, FB_F32, 0, 40, 56, L_TRANS, 0, &seed);
  make_matrix(&out, FB_F32, 0, 24, 56, L_CONTIG, 0, NULL);
  int size0 = aotrun_fb_algo_cache_size();
  assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                   AOTI_TORCH_SUCCESS);
  int size1 = aotrun_fb_algo_cache_size();
  uint64_t hits1 = aotrun_fb_algo_cache_hits();
  if (size1 != size0 + 1)
    fail_msg("the first mm of a new shape cached %d answers (want 1)",
             size1 - size0);
  for (int i = 0; i < 5; i++)
    assert_int_equal(aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle),
                     AOTI_TORCH_SUCCESS);
  assert_int_equal(aotrun_fb_algo_cache_size(), size1);
  assert_true(aotrun_fb_algo_cache_hits() >= hits1 + 5);
  check_gemm("mm through cuBLASLt", &out, &a, &b, NULL, 1.0, 0.0);
  fb_tensor_free(&a);
  fb_tensor_free(&b);
  fb_tensor_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mm_layouts_dtypes),
      cmocka_unit_test(test_mm_out_layouts),
      cmocka_unit_test(test_mm_thin),
      cmocka_unit_test(test_addmm_bias_broadcast),
      cmocka_unit_test(test_addmm_beta_zero_ignores_nan),
      cmocka_unit_test(test_gemm_k_zero),
      cmocka_unit_test(test_bmm),
      cmocka_unit_test(test_mm_in_graph_capture),
      cmocka_unit_test(test_mm_through_cublaslt_cached),
      cmocka_unit_test(test_index_mask_1d_2d),
      cmocka_unit_test(test_index_mask_all_false_all_true),
      cmocka_unit_test(test_index_noncontiguous),
      cmocka_unit_test(test_index_dtypes),
      cmocka_unit_test(test_index_integer),
      cmocka_unit_test(test_index_integer_out_of_bounds),
      cmocka_unit_test(test_index_refused_in_capture),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
