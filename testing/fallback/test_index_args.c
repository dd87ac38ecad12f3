/* test_index_args.c: argument checks of the index family (index_Tensor,
 * index_put, index_put_out, nonzero, masked_select, masked_scatter) and the
 * host-side layout rules they share. Runs without a GPU: the "CUDA" tensors
 * are never-owning blobs over host memory that is never touched, since
 * every check runs before any CUDA call. Expected strides were taken from
 * torch 2.11 (meta functions / eager CPU). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/tensor_layout.h"
#include "testing/fallback/fake_tensor.h"

enum {
  U8 = 0, I8 = 1, I32 = 3, I64 = 4, F16 = 5, F32 = 6, F64 = 7, C32 = 8,
  BOOL = 11, CPU = 0, CUDA = 1
};

static AtenTensorHandle cuda_t(int32_t dtype, int64_t ndim,
                               const int64_t *sizes) {
  return fake_strided(dtype, CUDA, ndim, sizes, NULL);
}

static void del(AtenTensorHandle a) { aoti_torch_delete_tensor_object(a); }

/* ---- index_Tensor ---- */

static void test_index_dtypes_and_count(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s4[1] = {4}, s3[1] = {3};
  AtenTensorHandle x = cuda_t(F32, 2, s42), f = cuda_t(F32, 1, s4),
                   i8 = cuda_t(I8, 1, s4), i = cuda_t(I64, 1, s3),
                   j = cuda_t(I32, 1, s4), m0 = cuda_t(BOOL, 0, NULL);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *fl[2] = {NULL, &f};
  expect_fail(aoti_torch_cuda_index_Tensor(x, fl, 2, &ret),
              "aoti_torch_cuda_index_Tensor: indices[1] has dtype float32; "
              "index tensors must be bool, uint8, int32 or int64");
  const AtenTensorHandle *c8[1] = {&i8};
  expect_fail(aoti_torch_cuda_index_Tensor(x, c8, 1, &ret),
              "indices[0] has dtype int8; index tensors must be");
  const AtenTensorHandle *three[3] = {&i, &i, &i};
  expect_fail(aoti_torch_cuda_index_Tensor(x, three, 3, &ret),
              "too many indices for 'self' [4, 2] of dimension 2 (got 3)");
  /* int [3] and int32 [4] do not broadcast. */
  const AtenTensorHandle *two[2] = {&i, &j};
  expect_fail(aoti_torch_cuda_index_Tensor(x, two, 2, &ret),
              "shape mismatch: indices[1] of shape [4] does not broadcast "
              "with the index shape [3]");
  const AtenTensorHandle *zero[1] = {&m0};
  expect_fail(aoti_torch_cuda_index_Tensor(x, zero, 1, &ret),
              "the 0-d mask indices[0] is not supported");
  assert_null(ret);
  del(x), del(f), del(i8), del(i), del(j), del(m0);
}

static void test_index_mask_shapes(void **state) {
  (void)state;
  const int64_t s342[3] = {3, 4, 2}, s42[2] = {4, 3}, s3[1] = {3};
  AtenTensorHandle x = cuda_t(F32, 3, s342), m = cuda_t(U8, 2, s42),
                   i = cuda_t(I64, 1, s3);
  AtenTensorHandle ret = NULL;
  /* x[:, m] with m [4, 3] against dims 1, 2 = [4, 2]. */
  const AtenTensorHandle *idx[2] = {NULL, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 2, &ret),
              "the mask indices[1] has size 3 in dim 1 but 'self' has size 2 "
              "in dim 2 (mask [4, 3], self [3, 4, 2])");
  /* x[i, m] consumes 1 + 2 dims: fine count-wise, but m [4, 3] vs [4, 2]. */
  const AtenTensorHandle *mixed[2] = {&i, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, mixed, 2, &ret),
              "has size 3 in dim 1 but 'self' has size 2 in dim 2");
  /* x[None, None, m]: 2 + 2 dims > 3. */
  const AtenTensorHandle *many[3] = {NULL, NULL, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, many, 3, &ret),
              "too many indices for 'self' [3, 4, 2] of dimension 3 (the "
              "indices consume 4 dims)");
  del(x), del(m), del(i);
}

static void test_index_devices(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s4[1] = {4};
  AtenTensorHandle x = cuda_t(F32, 2, s42),
                   xc = fake_strided(F32, CPU, 2, s42, NULL),
                   ic = fake_strided(I64, CPU, 1, s4, NULL),
                   i = cuda_t(I64, 1, s4);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *cpu_idx[1] = {&ic};
  expect_fail(aoti_torch_cuda_index_Tensor(x, cpu_idx, 1, &ret),
              "'indices[0]' is on device type 0 (cpu), expected a CUDA tensor");
  const AtenTensorHandle *idx[1] = {&i};
  expect_fail(aoti_torch_cuda_index_Tensor(xc, idx, 1, &ret),
              "aoti_torch_cuda_index_Tensor: 'self' is on device type 0 (cpu)");
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 1, NULL),
              "the result pointer 'ret0' is NULL");
  del(x), del(xc), del(ic), del(i);
}

/* ---- index_put / index_put_out ---- */

static void test_index_put_null_and_devices(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s3[1] = {3}, s32[2] = {3, 2};
  AtenTensorHandle x = cuda_t(F32, 2, s42), i = cuda_t(I64, 1, s3),
                   v = cuda_t(F32, 2, s32),
                   vc = fake_strided(F32, CPU, 2, s32, NULL),
                   xc = fake_strided(F32, CPU, 2, s42, NULL);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *idx[1] = {&i};
  expect_fail(aoti_torch_cuda_index_put(x, idx, 1, v, 0, NULL),
              "aoti_torch_cuda_index_put: the result pointer 'ret0' is NULL");
  expect_fail(aoti_torch_cuda_index_put(NULL, idx, 1, v, 0, &ret),
              "aoti_torch_cuda_index_put: argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_index_put(x, idx, 1, NULL, 0, &ret),
              "argument 'values' is NULL");
  expect_fail(aoti_torch_cuda_index_put(x, NULL, 1, v, 0, &ret),
              "bad index list (1 entries");
  expect_fail(aoti_torch_cuda_index_put(x, idx, 1, vc, 0, &ret),
              "'values' is on device type 0 (cpu), expected a CUDA tensor");
  assert_null(ret);
  AtenTensorHandle list[1] = {i};
  expect_fail(aoti_torch_index_put_out(NULL, x, list, 1, v, false),
              "aoti_torch_index_put_out: argument 'out' is NULL");
  expect_fail(aoti_torch_index_put_out(xc, xc, list, 1, v, false),
              "aoti_torch_index_put_out: 'self' is on device type 0 (cpu), "
              "expected a CUDA tensor");
  expect_fail(aoti_torch_index_put_out(xc, x, list, 1, v, false),
              "'out' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_index_put_out(x, x, NULL, 1, v, false),
              "bad index list (1 entries");
  del(x), del(i), del(v), del(vc), del(xc);
}

static void test_index_put_dtypes_shapes(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s52[2] = {5, 2}, s3[1] = {3}, s32[2] = {3, 2},
                s33[2] = {3, 3};
  AtenTensorHandle x = cuda_t(F32, 2, s42), i = cuda_t(I64, 1, s3),
                   v = cuda_t(F32, 2, s32), vd = cuda_t(F64, 2, s32),
                   vbad = cuda_t(F32, 2, s33), o5 = cuda_t(F32, 2, s52),
                   o16 = cuda_t(F16, 2, s42), f = cuda_t(F32, 1, s3),
                   xc32 = cuda_t(C32, 2, s42), vc32 = cuda_t(C32, 2, s32);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *idx[1] = {&i};
  expect_fail(aoti_torch_cuda_index_put(x, idx, 1, vd, 0, &ret),
              "'values' has dtype float64 but 'self' has dtype float32");
  expect_fail(aoti_torch_cuda_index_put(x, idx, 1, vbad, 0, &ret),
              "aoti_torch_cuda_index_put: shape mismatch: 'values' of shape "
              "[3, 3] cannot be broadcast to the indexing result of shape "
              "[3, 2]");
  const AtenTensorHandle *fl[1] = {&f};
  expect_fail(aoti_torch_cuda_index_put(x, fl, 1, v, 0, &ret),
              "indices[0] has dtype float32; index tensors must be");
  const AtenTensorHandle *three[3] = {&i, &i, &i};
  expect_fail(aoti_torch_cuda_index_put(x, three, 3, v, 1, &ret),
              "too many indices for 'self' [4, 2] of dimension 2 (got 3)");
  expect_fail(aoti_torch_cuda_index_put(xc32, idx, 1, vc32, 1, &ret),
              "accumulate is not supported for dtype complex32");
  AtenTensorHandle list[1] = {i};
  expect_fail(aoti_torch_index_put_out(o5, x, list, 1, v, false),
              "'out' has shape [5, 2] but 'self' has shape [4, 2]");
  expect_fail(aoti_torch_index_put_out(o16, x, list, 1, v, false),
              "'out' has dtype float16 but 'self' has dtype float32");
  del(x), del(i), del(v), del(vd), del(vbad), del(o5), del(o16), del(f);
  del(xc32), del(vc32);
}

static void test_index_put_mask_values(void **state) {
  (void)state;
  const int64_t s342[3] = {3, 4, 2}, s4[1] = {4}, s53[2] = {5, 3},
                s52[2] = {5, 2}, s1[1] = {1}, s452[3] = {4, 5, 2};
  AtenTensorHandle x = cuda_t(F32, 3, s342), m = cuda_t(BOOL, 1, s4),
                   v53 = cuda_t(F32, 2, s53), v52 = cuda_t(F32, 2, s52),
                   v1 = cuda_t(F32, 1, s1), v452 = cuda_t(F32, 3, s452);
  /* x[:, m] = values: the result is [3, N, 2]. */
  AtenTensorHandle list[2] = {NULL, m};
  expect_fail(aoti_torch_index_put_out(x, x, list, 2, v53, false),
              "aoti_torch_index_put_out: shape mismatch: 'values' of shape "
              "[5, 3] cannot be broadcast to the indexing result of shape "
              "[3, N, 2] (N: the mask's True count)");
  expect_fail(aoti_torch_index_put_out(x, x, list, 2, v452, false),
              "'values' of shape [4, 5, 2] cannot be broadcast to the "
              "indexing result of shape [3, N, 2]");
  /* [5, 2] and [1] pass the host check (N is checked on the device): the
   * next failure is the fake tensors' device, after the checks. Nothing
   * else to assert without a GPU. */
  (void)v52;
  (void)v1;
  del(x), del(m), del(v53), del(v52), del(v1), del(v452);
}

/* ---- nonzero / masked_select / masked_scatter ---- */

static void test_nonzero_args(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2};
  AtenTensorHandle xc = fake_strided(F32, CPU, 2, s42, NULL);
  AtenTensorHandle ret = NULL;
  expect_fail(aoti_torch_cuda_nonzero(NULL, &ret),
              "aoti_torch_cuda_nonzero: argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_nonzero(xc, NULL),
              "aoti_torch_cuda_nonzero: the result pointer 'ret0' is NULL");
  expect_fail(aoti_torch_cuda_nonzero(xc, &ret),
              "aoti_torch_cuda_nonzero: 'self' is on device type 0 (cpu)");
  assert_null(ret);
  del(xc);
}

static void test_masked_select_args(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s3[1] = {3}, s2[1] = {2};
  AtenTensorHandle x = cuda_t(F32, 2, s42), mu = cuda_t(U8, 2, s42),
                   m3 = cuda_t(BOOL, 1, s3), m2c = fake_strided(BOOL, CPU, 1, s2, NULL);
  AtenTensorHandle ret = NULL;
  expect_fail(aoti_torch_cuda_masked_select(x, mu, &ret),
              "aoti_torch_cuda_masked_select: 'mask' has dtype uint8; "
              "masked_select needs a bool mask");
  expect_fail(aoti_torch_cuda_masked_select(x, m3, &ret),
              "shape mismatch: 'self' of shape [4, 2] and 'mask' of shape [3] "
              "do not broadcast");
  expect_fail(aoti_torch_cuda_masked_select(x, m2c, &ret),
              "'mask' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_masked_select(x, NULL, &ret),
              "argument 'mask' is NULL");
  expect_fail(aoti_torch_cuda_masked_select(x, m3, NULL),
              "the result pointer 'ret0' is NULL");
  assert_null(ret);
  del(x), del(mu), del(m3), del(m2c);
}

static void test_masked_scatter_args(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2}, s3[1] = {3}, s8[1] = {8};
  AtenTensorHandle x = cuda_t(F32, 2, s42), mu = cuda_t(U8, 2, s42),
                   m = cuda_t(BOOL, 2, s42), m3 = cuda_t(BOOL, 1, s3),
                   src = cuda_t(F32, 1, s8), srcd = cuda_t(F64, 1, s8),
                   srcc = fake_strided(F32, CPU, 1, s8, NULL);
  AtenTensorHandle ret = NULL;
  expect_fail(aoti_torch_cuda_masked_scatter(x, mu, src, &ret),
              "aoti_torch_cuda_masked_scatter: 'mask' has dtype uint8; "
              "masked_scatter needs a bool mask");
  expect_fail(aoti_torch_cuda_masked_scatter(x, m, srcd, &ret),
              "'source' has dtype float64 but 'self' has dtype float32");
  expect_fail(aoti_torch_cuda_masked_scatter(x, m3, src, &ret),
              "shape mismatch: 'mask' of shape [3] and 'self' of shape [4, 2] "
              "do not broadcast");
  expect_fail(aoti_torch_cuda_masked_scatter(x, m, srcc, &ret),
              "'source' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_masked_scatter(x, m, NULL, &ret),
              "argument 'source' is NULL");
  assert_null(ret);
  del(x), del(mu), del(m), del(m3), del(src), del(srcd), del(srcc);
}

/* ---- layout rules (values from torch 2.11) ---- */

static void check_strides(const int64_t *got, const int64_t *want,
                          int64_t n, const char *what) {
  for (int64_t d = 0; d < n; d++)
    if (got[d] != want[d])
      fail_msg("%s: stride %lld of dim %lld, expected %lld", what,
               (long long)got[d], (long long)d, (long long)want[d]);
}

static void test_elementwise_strides(void **state) {
  (void)state;
  struct {
    int64_t n, sizes[4], strides[4], want[4];
  } c[] = {
      {3, {2, 5, 2}, {0, 3, 15}, {10, 1, 5}},
      {3, {3, 2, 2}, {1, 0, 15}, {1, 3, 6}},
      {4, {2, 3, 4, 5}, {60, 1, 15, 3}, {60, 1, 15, 3}},
      {3, {2, 1, 4}, {0, 7, 1}, {4, 4, 1}},
      {2, {3, 4}, {0, 1}, {4, 1}},
      {3, {4, 3, 2}, {1, 0, 0}, {6, 2, 1}},
      {3, {2, 2, 3}, {3, 0, 1}, {6, 3, 1}},
      {4, {2, 3, 1, 4}, {12, 4, 1, 1}, {12, 4, 4, 1}},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    int64_t out[4];
    aotrun_fb_elementwise_strides(c[i].sizes, c[i].strides, c[i].n, out);
    check_strides(out, c[i].want, c[i].n, "elementwise");
  }
}

static void test_empty_like_strides(void **state) {
  (void)state;
  struct {
    int64_t n, sizes[3], strides[3], want[3];
  } c[] = {
      {2, {4, 3}, {6, 2}, {3, 1}},   {2, {4, 6}, {1, 4}, {1, 4}},
      {2, {4, 6}, {1, 0}, {6, 1}},   {3, {3, 4, 5}, {1, 0, 3}, {1, 3, 12}},
      {2, {2, 3}, {3, 1}, {3, 1}},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    int64_t out[3];
    aotrun_fb_empty_like_strides(c[i].sizes, c[i].strides, c[i].n, out);
    check_strides(out, c[i].want, c[i].n, "empty_like");
  }
}

static void test_collapse_dims(void **state) {
  (void)state;
  int64_t sizes[4] = {2, 1, 3, 4}, a[4] = {12, 99, 4, 1}, b[4] = {1, 5, 8, 2};
  int64_t *const s[2] = {a, b};
  int32_t nd = 4;
  aotrun_fb_collapse_dims(&nd, sizes, s, 2);
  /* dim 1 (size 1) drops; [3, 4] nests in a (4 = 1 * 4) and b (8 = 2 * 4). */
  assert_int_equal(nd, 2);
  assert_int_equal(sizes[0], 2);
  assert_int_equal(sizes[1], 12);
  assert_int_equal(a[1], 1);
  assert_int_equal(b[1], 2);
  assert_int_equal(a[0], 12);
  assert_int_equal(b[0], 1);
}

/* Result shapes and strides of index_Tensor plans (torch: eager CPU and
 * meta_index_Tensor agree on these). */
static void check_geom(const char *what, AtenTensorHandle self,
                       const AtenTensorHandle *list, int64_t n,
                       const int64_t *counts, int64_t want_nd,
                       const int64_t *want_sizes, const int64_t *want_strides) {
  aotrun_fb_tensor s;
  assert_int_equal(aotrun_fb_tensor_read("t", "self", self, &s), 0);
  aotrun_fb_index_plan p;
  aotrun_fb_index_geom g;
  if (aotrun_fb_index_plan_build("t", &s, list, n, &p) ||
      aotrun_fb_index_geom_build(&p, counts, &g))
    fail_msg("%s: %s", what, aotrun_shim_last_error());
  assert_int_equal(g.ndim, want_nd);
  for (int64_t d = 0; d < want_nd; d++)
    if (g.sizes[d] != want_sizes[d])
      fail_msg("%s: size %lld of dim %lld, expected %lld", what,
               (long long)g.sizes[d], (long long)d, (long long)want_sizes[d]);
  int64_t st[16];
  aotrun_fb_index_result_strides(&p, &g, st);
  check_strides(st, want_strides, want_nd, what);
}

static void test_index_geometry(void **state) {
  (void)state;
  /* x = randn(2, 5, 3).permute(2, 1, 0): [3, 5, 2] strides (1, 3, 15). */
  const int64_t xs[3] = {3, 5, 2}, xst[3] = {1, 3, 15}, s2[1] = {2},
                s5[1] = {5};
  AtenTensorHandle x = fake_strided(F32, CUDA, 3, xs, xst),
                   i = cuda_t(I64, 1, s2), m = cuda_t(BOOL, 1, s5);
  const AtenTensorHandle l0[1] = {i}, l1[2] = {NULL, i}, l2[3] = {NULL, NULL, i},
                         l3[3] = {i, NULL, i}, lm[2] = {NULL, m};
  const int64_t r0[3] = {2, 5, 2}, t0[3] = {10, 1, 5};
  check_geom("x[i]", x, l0, 1, NULL, 3, r0, t0);
  const int64_t r1[3] = {3, 2, 2}, t1[3] = {1, 3, 6};
  check_geom("x[:, i]", x, l1, 2, NULL, 3, r1, t1);
  const int64_t r2[3] = {3, 5, 2}, t2[3] = {2, 6, 1};
  check_geom("x[:, :, i]", x, l2, 3, NULL, 3, r2, t2);
  const int64_t r3[2] = {2, 5}, t3[2] = {5, 1};
  check_geom("x[i, :, i]", x, l3, 3, NULL, 2, r3, t3);
  const int64_t cnt[1] = {3}, rm[3] = {3, 3, 2}, tm[3] = {1, 3, 9};
  check_geom("x[:, m] (3 True)", x, lm, 2, cnt, 3, rm, tm);
  /* x3 [3, 4, 5, 6] contiguous, a [2], b [3, 1]: x3[a, :, b] puts B first. */
  const int64_t ys[4] = {3, 4, 5, 6}, sb[2] = {3, 1};
  AtenTensorHandle y = cuda_t(F32, 4, ys), b = cuda_t(I64, 2, sb);
  const AtenTensorHandle ls[3] = {i, NULL, b}, la[3] = {NULL, i, b};
  const int64_t rs[4] = {3, 2, 4, 6}, ts[4] = {48, 24, 6, 1};
  check_geom("x3[a, :, b]", y, ls, 3, NULL, 4, rs, ts);
  const int64_t ra[4] = {3, 3, 2, 6}, ta[4] = {36, 12, 6, 1};
  check_geom("x3[:, a, b]", y, la, 3, NULL, 4, ra, ta);
  /* A mask's count broadcasting against an integer index. */
  const int64_t bad[1] = {4};
  aotrun_fb_tensor s;
  aotrun_fb_index_plan p;
  aotrun_fb_index_geom g;
  const AtenTensorHandle lmi[3] = {NULL, m, i};
  assert_int_equal(aotrun_fb_tensor_read("t", "self", x, &s), 0);
  assert_int_equal(aotrun_fb_index_plan_build("t", &s, lmi, 3, &p), 0);
  expect_fail(aotrun_fb_index_geom_build(&p, bad, &g),
              "t: shape mismatch: the mask indices[1] selects 4 elements, "
              "which does not broadcast with the index shape [2]");
  del(x), del(i), del(m), del(y), del(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index_dtypes_and_count),
      cmocka_unit_test(test_index_mask_shapes),
      cmocka_unit_test(test_index_devices),
      cmocka_unit_test(test_index_put_null_and_devices),
      cmocka_unit_test(test_index_put_dtypes_shapes),
      cmocka_unit_test(test_index_put_mask_values),
      cmocka_unit_test(test_nonzero_args),
      cmocka_unit_test(test_masked_select_args),
      cmocka_unit_test(test_masked_scatter_args),
      cmocka_unit_test(test_elementwise_strides),
      cmocka_unit_test(test_empty_like_strides),
      cmocka_unit_test(test_collapse_dims),
      cmocka_unit_test(test_index_geometry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
