/* test_sort_args.c: argument checks of aoti_torch_cuda_sort, sort_stable
 * and topk, and the output geometry their plans compute (empty_like
 * strides, row layouts). Runs without a GPU: the "CUDA" tensors are
 * never-owning blobs over host memory that is never touched, since every
 * check runs before any CUDA call, and the plan builders make none. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/tensor_layout.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/sort_plan.h"
#include "shim_lib/fallback/sort_rows.h"
#include "testing/fallback/fake_tensor.h"

enum { F32 = 6, I64 = 4, C64 = 9, F8 = 24, CPU = 0, CUDA = 1 };

static const char kSort[] = "aoti_torch_cuda_sort";
static const char kStable[] = "aoti_torch_cuda_sort_stable";
static const char kTopk[] = "aoti_torch_cuda_topk";

static void expect_strides(const int64_t *got, const int64_t *want,
                           int64_t n) {
  for (int64_t d = 0; d < n; d++)
    if (got[d] != want[d])
      fail_msg("stride %lld: got %lld, want %lld", (long long)d,
               (long long)got[d], (long long)want[d]);
}

static void test_null_args(void **state) {
  (void)state;
  const int64_t s[2] = {3, 4};
  AtenTensorHandle x = fake(F32, CUDA, 2, s), r0 = NULL, r1 = NULL;
  int32_t yes = 1;
  expect_fail(aoti_torch_cuda_sort(NULL, 0, 0, &r0, &r1),
              "aoti_torch_cuda_sort: argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_sort(x, 0, 0, NULL, &r1),
              "aoti_torch_cuda_sort: the result pointer 'ret0' (values) is "
              "NULL");
  expect_fail(aoti_torch_cuda_sort_stable(x, &yes, 0, 0, &r0, NULL),
              "aoti_torch_cuda_sort_stable: the result pointer 'ret1' "
              "(indices) is NULL");
  expect_fail(aoti_torch_cuda_topk(NULL, 1, 0, 1, 1, &r0, &r1),
              "aoti_torch_cuda_topk: argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_topk(x, 1, 0, 1, 1, &r0, NULL),
              "aoti_torch_cuda_topk: the result pointer 'ret1' (indices) is "
              "NULL");
  assert_null(r0);
  assert_null(r1);
  aoti_torch_delete_tensor_object(x);
}

static void test_dim_out_of_range(void **state) {
  (void)state;
  const int64_t s[2] = {3, 4};
  AtenTensorHandle x = fake(F32, CUDA, 2, s), r0 = NULL, r1 = NULL;
  expect_fail(aoti_torch_cuda_sort(x, 2, 0, &r0, &r1),
              "aoti_torch_cuda_sort: dim 2 is out of range for 'self' with 2 "
              "dims (expected a dim in [-2, 1])");
  expect_fail(aoti_torch_cuda_sort_stable(x, NULL, -3, 1, &r0, &r1),
              "aoti_torch_cuda_sort_stable: dim -3 is out of range for "
              "'self' with 2 dims (expected a dim in [-2, 1])");
  expect_fail(aoti_torch_cuda_topk(x, 1, 5, 1, 1, &r0, &r1),
              "aoti_torch_cuda_topk: dim 5 is out of range for 'self' with 2 "
              "dims");
  AtenTensorHandle z = fake(F32, CUDA, 0, NULL); /* 0-d: dim -1 or 0 */
  expect_fail(aoti_torch_cuda_sort(z, 1, 0, &r0, &r1),
              "dim 1 is out of range for 'self' with 0 dims (expected a dim "
              "in [-1, 0])");
  expect_fail(aoti_torch_cuda_topk(z, 1, -2, 1, 1, &r0, &r1),
              "dim -2 is out of range for 'self' with 0 dims");
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(z);
}

static void test_k_out_of_range(void **state) {
  (void)state;
  const int64_t s[2] = {3, 4};
  AtenTensorHandle x = fake(F32, CUDA, 2, s), r0 = NULL, r1 = NULL;
  expect_fail(aoti_torch_cuda_topk(x, 5, 1, 1, 1, &r0, &r1),
              "aoti_torch_cuda_topk: k = 5 is out of range for dim 1 of "
              "'self' with size 4 (k must be in [0, 4])");
  expect_fail(aoti_torch_cuda_topk(x, -1, -2, 1, 1, &r0, &r1),
              "k = -1 is out of range for dim 0 of 'self' with size 3 (k "
              "must be in [0, 3])");
  AtenTensorHandle z = fake(F32, CUDA, 0, NULL);
  expect_fail(aoti_torch_cuda_topk(z, 2, 0, 1, 1, &r0, &r1),
              "k = 2 is out of range for dim 0 of 'self' with size 1");
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(z);
}

static void test_unsupported_dtype(void **state) {
  (void)state;
  const int64_t s[1] = {4};
  AtenTensorHandle c = fake(C64, CUDA, 1, s), f8 = fake(F8, CUDA, 1, s);
  AtenTensorHandle r0 = NULL, r1 = NULL;
  expect_fail(aoti_torch_cuda_sort(c, 0, 0, &r0, &r1),
              "aoti_torch_cuda_sort: 'self' has dtype complex64, which "
              "cannot be sorted");
  expect_fail(aoti_torch_cuda_topk(c, 1, 0, 1, 1, &r0, &r1),
              "aoti_torch_cuda_topk: 'self' has dtype complex64");
  expect_fail(aoti_torch_cuda_sort_stable(f8, NULL, 0, 0, &r0, &r1),
              "'self' has dtype float8_e4m3fn, which cannot be sorted");
  aoti_torch_delete_tensor_object(c);
  aoti_torch_delete_tensor_object(f8);
}

static void test_cpu_tensor(void **state) {
  (void)state;
  const int64_t s[1] = {4};
  AtenTensorHandle x = fake(F32, CPU, 1, s), r0 = NULL, r1 = NULL;
  expect_fail(aoti_torch_cuda_sort(x, 0, 0, &r0, &r1),
              "aoti_torch_cuda_sort: 'self' is on device type 0 (cpu), "
              "expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_topk(x, 1, 0, 1, 1, &r0, &r1),
              "aoti_torch_cuda_topk: 'self' is on device type 0 (cpu)");
  aoti_torch_delete_tensor_object(x);
}

/* Output strides of sort follow torch.empty_like(self). */
static void test_sort_plan_strides(void **state) {
  (void)state;
  AtenTensorHandle r0 = NULL, r1 = NULL;
  aotrun_fb_sort_plan p;
  /* (10, 6).t(): sizes (6, 10), strides (1, 6), dense -> kept (measured). */
  const int64_t ts[2] = {6, 10}, tt[2] = {1, 6};
  AtenTensorHandle t = fake_strided(F32, CUDA, 2, ts, tt);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, t, -1, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, tt, 2);
  assert_int_equal(p.dim, 1);
  assert_int_equal(p.n, 10);
  assert_int_equal(p.rows, 6);
  /* x[:, ::2] of (4, 6): (4, 3) strides (6, 2) -> contiguous (3, 1). */
  const int64_t ss[2] = {4, 3}, st[2] = {6, 2}, sw[2] = {3, 1};
  AtenTensorHandle sl = fake_strided(F32, CUDA, 2, ss, st);
  assert_int_equal(aotrun_fb_sort_plan_build(kStable, sl, 0, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, sw, 2);
  /* (8, 6).t()[:, ::2]: (6, 4) strides (1, 12) -> transposed dense (1, 6). */
  const int64_t us[2] = {6, 4}, ut[2] = {1, 12}, uw[2] = {1, 6};
  AtenTensorHandle u = fake_strided(F32, CUDA, 2, us, ut);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, u, 0, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, uw, 2);
  /* expand (4, 1) -> (4, 5): strides (1, 0) -> (5, 1). */
  const int64_t es[2] = {4, 5}, et[2] = {1, 0}, ew[2] = {5, 1};
  AtenTensorHandle ex = fake_strided(F32, CUDA, 2, es, et);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, ex, 1, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, ew, 2);
  /* permute(0, 2, 1) of contiguous (2, 4, 3): dense, kept. */
  const int64_t ps[3] = {2, 3, 4}, pt[3] = {12, 1, 3};
  AtenTensorHandle pm = fake_strided(F32, CUDA, 3, ps, pt);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, pm, 1, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, pt, 3);
  /* no elements: strides kept whatever they are (contiguous by c10). */
  const int64_t zs[2] = {0, 3}, zt[2] = {7, 5};
  AtenTensorHandle z = fake_strided(F32, CUDA, 2, zs, zt);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, z, 1, &r0, &r1, &p), 0);
  expect_strides(p.out_strides, zt, 2);
  assert_int_equal(p.rows, 0);
  assert_int_equal(p.out_numel, 0);
  /* 0-d: one row of one element. */
  AtenTensorHandle s0 = fake(I64, CUDA, 0, NULL);
  assert_int_equal(aotrun_fb_sort_plan_build(kSort, s0, -1, &r0, &r1, &p), 0);
  assert_int_equal(p.n, 1);
  assert_int_equal(p.rows, 1);
  assert_int_equal(p.out_numel, 1);
  AtenTensorHandle all[] = {t, sl, u, ex, pm, z, s0};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    aoti_torch_delete_tensor_object(all[i]);
}

/* infer_dense_strides keeps stride-0 dims in place (ATen's own example). */
static void test_infer_dense_strides(void **state) {
  (void)state;
  const int64_t s[5] = {6, 5, 4, 3, 2}, t[5] = {6, 0, 120, 0, 1};
  /* perm (innermost first) becomes (4, 3, 0, 1, 2). */
  const int64_t w[5] = {2 * 3, 2 * 3 * 6, 2 * 3 * 6 * 5, 2, 1};
  int64_t got[5];
  aotrun_fb_infer_dense_strides(s, t, 5, got);
  expect_strides(got, w, 5);
  assert_false(aotrun_fb_is_non_overlapping_and_dense(s, t, 5));
  /* Equal strides: the larger size goes outside. */
  const int64_t s2[2] = {2, 3}, t2[2] = {1, 1}, w2[2] = {1, 2};
  aotrun_fb_infer_dense_strides(s2, t2, 2, got);
  expect_strides(got, w2, 2);
}

/* topk outputs are contiguous with k along dim. */
static void test_topk_plan(void **state) {
  (void)state;
  AtenTensorHandle r0 = NULL, r1 = NULL;
  aotrun_fb_sort_plan p;
  const int64_t ts[2] = {6, 10}, tt[2] = {1, 6};
  AtenTensorHandle t = fake_strided(F32, CUDA, 2, ts, tt);
  assert_int_equal(aotrun_fb_topk_plan_build(kTopk, t, 3, 0, &r0, &r1, &p), 0);
  assert_int_equal(p.out_sizes[0], 3);
  assert_int_equal(p.out_sizes[1], 10);
  const int64_t cw[2] = {10, 1};
  expect_strides(p.out_strides, cw, 2);
  assert_int_equal(p.k, 3);
  assert_int_equal(p.out_numel, 30);
  assert_int_equal(aotrun_fb_topk_plan_build(kTopk, t, 0, 1, &r0, &r1, &p), 0);
  assert_int_equal(p.out_numel, 0);
  aoti_torch_delete_tensor_object(t);
}

/* Row layouts drop size-1 dims and merge dims contiguous on both sides. */
static void test_rows_layout(void **state) {
  (void)state;
  aotrun_fb_rows_layout l;
  const int64_t s[3] = {2, 3, 4}, c[3] = {12, 4, 1};
  aotrun_fb_rows_layout_of(s, c, c, 3, 2, &l);
  assert_int_equal(l.ndim, 1);
  assert_int_equal(l.sizes[0], 6);
  assert_int_equal(l.in_strides[0], 4);
  assert_int_equal(l.in_dim_stride, 1);
  aotrun_fb_rows_layout_of(s, c, c, 3, 1, &l);
  assert_int_equal(l.ndim, 2);
  assert_int_equal(l.in_dim_stride, 4);
  const int64_t s1[3] = {1, 5, 1}, c1[3] = {5, 1, 1};
  aotrun_fb_rows_layout_of(s1, c1, c1, 3, 1, &l);
  assert_int_equal(l.ndim, 0);
  /* The outputs' layout breaks a merge the input would allow. */
  const int64_t o[3] = {4, 8, 1};
  aotrun_fb_rows_layout_of(s, c, o, 3, 2, &l);
  assert_int_equal(l.ndim, 2);
  aotrun_fb_rows_layout_set_contiguous(&l, 7, 1);
  assert_int_equal(l.out_strides[1], 7);
  assert_int_equal(l.out_strides[0], 21);
  assert_int_equal(l.out_dim_stride, 1);
  assert_int_equal(l.in_strides[0], 12);
}

static void test_sort_elems(void **state) {
  (void)state;
  aotrun_fb_sort_elems e;
  assert_true(aotrun_fb_sort_elems_for(5, &e)); /* float16 */
  assert_int_equal(e.elem_size, 2);
  assert_int_equal(e.kind, AOTRUN_FB_KIND_FLOAT);
  assert_int_equal(e.inf_bits, 0x7c00);
  assert_true(aotrun_fb_sort_elems_for(15, &e)); /* bfloat16 */
  assert_int_equal(e.inf_bits, 0x7f80);
  assert_true(aotrun_fb_sort_elems_for(11, &e)); /* bool */
  assert_int_equal(e.kind, AOTRUN_FB_KIND_UNSIGNED);
  assert_true(aotrun_fb_sort_elems_for(1, &e)); /* int8 */
  assert_int_equal(e.kind, AOTRUN_FB_KIND_SIGNED);
  assert_false(aotrun_fb_sort_elems_for(C64, &e));
  assert_false(aotrun_fb_sort_elems_for(10, &e));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_args),
      cmocka_unit_test(test_dim_out_of_range),
      cmocka_unit_test(test_k_out_of_range),
      cmocka_unit_test(test_unsupported_dtype),
      cmocka_unit_test(test_cpu_tensor),
      cmocka_unit_test(test_sort_plan_strides),
      cmocka_unit_test(test_infer_dense_strides),
      cmocka_unit_test(test_topk_plan),
      cmocka_unit_test(test_rows_layout),
      cmocka_unit_test(test_sort_elems),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
