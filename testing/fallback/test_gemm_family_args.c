/* test_gemm_family_args.c: argument checks of baddbmm_out, mm_dtype_out,
 * addmv and _addmm_activation. Runs without a GPU: the "CUDA" tensors are
 * never-owning blobs over host memory that is never touched, since every
 * check runs before any CUDA call. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "testing/fallback/fake_tensor.h"

enum { F16 = 5, F32 = 6, F64 = 7, I64 = 4, BF16 = 15, CPU = 0, CUDA = 1 };

static AtenTensorHandle t1(int32_t dt, int64_t a) {
  const int64_t s[1] = {a};
  return fake(dt, CUDA, 1, s);
}
static AtenTensorHandle t2(int32_t dt, int64_t a, int64_t b) {
  const int64_t s[2] = {a, b};
  return fake(dt, CUDA, 2, s);
}
static AtenTensorHandle t3(int32_t dt, int64_t a, int64_t b, int64_t c) {
  const int64_t s[3] = {a, b, c};
  return fake(dt, CUDA, 3, s);
}

static void del(int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    aoti_torch_delete_tensor_object(va_arg(ap, AtenTensorHandle));
  va_end(ap);
}

/* ---- baddbmm_out ---- */

static void test_baddbmm_shapes(void **state) {
  (void)state;
  AtenTensorHandle a = t3(F32, 2, 4, 3), b = t3(F32, 2, 3, 5),
                   o = t3(F32, 2, 4, 5), bias = t3(F32, 2, 4, 5);
  AtenTensorHandle b_bad = t3(F32, 2, 6, 5), b_batch = t3(F32, 3, 3, 5),
                   o_bad = t3(F32, 2, 4, 6);
  AtenTensorHandle bias_bad = t2(F32, 3, 5), bias4 = fake(F32, CUDA, 4,
                                                          (int64_t[]){1, 2, 4, 5});
  const char *op = "aoti_torch_cuda_baddbmm_out: ";
  (void)op;
  expect_fail(aoti_torch_cuda_baddbmm_out(NULL, bias, a, b, 1, 1),
              "aoti_torch_cuda_baddbmm_out: argument 'out' is NULL");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, a, NULL, 1, 1),
              "argument 'batch2' is NULL");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, a, b_bad, 1, 1),
              "aoti_torch_cuda_baddbmm_out: 'batch1' has size 3 in dim 2 but "
              "'batch2' has size 6 in dim 1 (batch1 [2, 4, 3], batch2 [2, 6, "
              "5])");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, a, b_batch, 1, 1),
              "'batch1' has size 2 in dim 0 but 'batch2' has size 3 in dim 0");
  expect_fail(aoti_torch_cuda_baddbmm_out(o_bad, bias, a, b, 1, 1),
              "'out' has size 6 in dim 2, expected 5 (out is [2, 4, 6], the "
              "result is [2, 4, 5])");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias_bad, a, b, 1, 1),
              "aoti_torch_cuda_baddbmm_out: 'self' (bias) has size 3 in dim 0, "
              "which does not broadcast to size 4 (bias [3, 5], result [2, 4, "
              "5])");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias4, a, b, 1, 1),
              "'self' (bias) must have at most 3 dims, got 4-D tensor");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, bias_bad, b, 1, 1),
              "'batch1' must be 3-D, got 2-D tensor [3, 5]");
  del(9, a, b, o, bias, b_bad, b_batch, o_bad, bias_bad, bias4);
}

static void test_baddbmm_dtypes(void **state) {
  (void)state;
  AtenTensorHandle a = t3(BF16, 2, 4, 3), b = t3(BF16, 2, 3, 5),
                   o = t3(BF16, 2, 4, 5), bias = t1(F32, 5),
                   ai = t3(I64, 2, 4, 3);
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, a, b, 1, 1),
              "aoti_torch_cuda_baddbmm_out: 'self' has dtype float32 but "
              "'batch1' has dtype bfloat16");
  expect_fail(aoti_torch_cuda_baddbmm_out(o, bias, ai, b, 1, 1),
              "'batch1' has dtype int64; supported: float32, float64, "
              "float16, bfloat16");
  del(5, a, b, o, bias, ai);
}

static void test_baddbmm_empty_is_noop(void **state) {
  (void)state;
  /* Broadcast bias [5]; batch 0: nothing to compute, no CUDA call. */
  AtenTensorHandle a = t3(F16, 0, 4, 3), b = t3(F16, 0, 3, 5),
                   o = t3(F16, 0, 4, 5), bias = t1(F16, 5);
  assert_int_equal(aoti_torch_cuda_baddbmm_out(o, bias, a, b, 0.5, 2.0),
                   AOTI_TORCH_SUCCESS);
  del(4, a, b, o, bias);
}

/* ---- mm_dtype_out ---- */

static void test_mm_dtype(void **state) {
  (void)state;
  AtenTensorHandle a = t2(BF16, 4, 3), b = t2(BF16, 3, 5),
                   o32 = t2(F32, 4, 5), o16 = t2(F16, 4, 5),
                   a32 = t2(F32, 4, 3), b32 = t2(F32, 3, 5),
                   o64 = t2(F64, 4, 5), bh = t2(F16, 3, 5),
                   obad = t2(F32, 4, 6);
  const char *op = "aoti_torch_cuda_mm_dtype_out";
  expect_fail(aoti_torch_cuda_mm_dtype_out(o16, a, b, F32),
              "aoti_torch_cuda_mm_dtype_out: 'out' has dtype float16 but "
              "out_dtype is float32");
  expect_fail(aoti_torch_cuda_mm_dtype_out(o16, a, b, F16),
              "out_dtype float16 with 'self' of dtype bfloat16: out_dtype "
              "must be the input dtype, or float32 for float16/bfloat16 "
              "inputs");
  expect_fail(aoti_torch_cuda_mm_dtype_out(o64, a32, b32, F64),
              "out_dtype float64 with 'self' of dtype float32");
  expect_fail(aoti_torch_cuda_mm_dtype_out(o32, a, bh, F32),
              "'mat2' has dtype float16 but 'self' has dtype bfloat16");
  expect_fail(aoti_torch_cuda_mm_dtype_out(obad, a, b, F32),
              "'out' has size 6 in dim 1, expected 5");
  expect_fail(aoti_torch_cuda_mm_dtype_out(o32, a, a, F32),
              "'self' has size 3 in dim 1 but 'mat2' has size 4 in dim 0");
  (void)op;
  del(9, a, b, o32, o16, a32, b32, o64, bh, obad);
}

static void test_mm_dtype_accepts(void **state) {
  (void)state;
  /* Empty results run nothing: the accepted combinations pass on the CPU. */
  AtenTensorHandle a = t2(F16, 0, 3), b = t2(F16, 3, 5), o = t2(F32, 0, 5),
                   o16 = t2(F16, 0, 5);
  assert_int_equal(aoti_torch_cuda_mm_dtype_out(o, a, b, F32),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(aoti_torch_cuda_mm_dtype_out(o16, a, b, F16),
                   AOTI_TORCH_SUCCESS);
  del(4, a, b, o, o16);
}

/* ---- addmv ---- */

static void test_addmv(void **state) {
  (void)state;
  AtenTensorHandle m = t2(F32, 4, 3), v = t1(F32, 3), bias = t1(F32, 4),
                   v_bad = t1(F32, 5), bias_bad = t1(F32, 3),
                   bias2 = t2(F32, 1, 4), v16 = t1(F16, 3),
                   vc = fake(F32, CPU, 1, (int64_t[]){3});
  AtenTensorHandle ret = fake_sentinel();
  expect_fail(aoti_torch_cuda_addmv(bias, m, v, 1, 1, NULL),
              "aoti_torch_cuda_addmv: the result pointer 'ret0' is NULL");
  expect_fail(aoti_torch_cuda_addmv(bias, m, NULL, 1, 1, &ret),
              "aoti_torch_cuda_addmv: argument 'vec' is NULL");
  assert_null(ret);
  expect_fail(aoti_torch_cuda_addmv(bias, m, v_bad, 1, 1, &ret),
              "aoti_torch_cuda_addmv: 'mat' has size 3 in dim 1 but 'vec' has "
              "size 5 in dim 0 (mat [4, 3], vec [5])");
  expect_fail(aoti_torch_cuda_addmv(bias_bad, m, v, 1, 1, &ret),
              "'self' (bias) has size 3 in dim 0, which does not broadcast to "
              "size 4 (bias [3], result [4])");
  expect_fail(aoti_torch_cuda_addmv(bias2, m, v, 1, 1, &ret),
              "'self' (bias) must have at most 1 dims, got 2-D tensor [1, 4]");
  expect_fail(aoti_torch_cuda_addmv(bias, m, m, 1, 1, &ret),
              "'vec' must be 1-D, got 2-D tensor [4, 3]");
  expect_fail(aoti_torch_cuda_addmv(bias, v, v, 1, 1, &ret),
              "'mat' must be 2-D, got 1-D tensor [3]");
  expect_fail(aoti_torch_cuda_addmv(bias, m, v16, 1, 1, &ret),
              "'vec' has dtype float16 but 'mat' has dtype float32");
  expect_fail(aoti_torch_cuda_addmv(bias, m, vc, 1, 1, &ret),
              "'vec' is on device type 0 (cpu), expected a CUDA tensor");
  assert_null(ret);
  del(8, m, v, bias, v_bad, bias_bad, bias2, v16, vc);
}

/* ---- _addmm_activation ---- */

static void test_addmm_activation(void **state) {
  (void)state;
  AtenTensorHandle a = t2(F16, 4, 3), b = t2(F16, 3, 5), bias = t1(F16, 5),
                   b_bad = t2(F16, 2, 5), bias_bad = t1(F16, 4),
                   bias3 = t3(F16, 1, 1, 5), bias32 = t1(F32, 5);
  AtenTensorHandle ret = fake_sentinel();
  expect_fail(aoti_torch_cuda__addmm_activation(bias, a, b, 1, 1, 0, NULL),
              "aoti_torch_cuda__addmm_activation: the result pointer 'ret0' "
              "is NULL");
  expect_fail(aoti_torch_cuda__addmm_activation(NULL, a, b, 1, 1, 1, &ret),
              "aoti_torch_cuda__addmm_activation: argument 'self' is NULL");
  assert_null(ret);
  expect_fail(aoti_torch_cuda__addmm_activation(bias, a, b_bad, 1, 1, 1, &ret),
              "aoti_torch_cuda__addmm_activation: 'mat1' has size 3 in dim 1 "
              "but 'mat2' has size 2 in dim 0 (mat1 [4, 3], mat2 [2, 5])");
  expect_fail(aoti_torch_cuda__addmm_activation(bias_bad, a, b, 1, 1, 0, &ret),
              "'self' (bias) has size 4 in dim 0, which does not broadcast to "
              "size 5 (bias [4], result [4, 5])");
  expect_fail(aoti_torch_cuda__addmm_activation(bias3, a, b, 1, 1, 0, &ret),
              "'self' (bias) must have at most 2 dims, got 3-D tensor [1, 1, "
              "5]");
  expect_fail(aoti_torch_cuda__addmm_activation(bias32, a, b, 1, 1, 0, &ret),
              "'self' has dtype float32 but 'mat1' has dtype float16");
  assert_null(ret);
  del(7, a, b, bias, b_bad, bias_bad, bias3, bias32);
}

static void test_addmm_activation_empty(void **state) {
  (void)state;
  /* m == 0: a zero-byte result (no allocator call) and no GEMM. */
  AtenTensorHandle a = t2(BF16, 0, 3), b = t2(BF16, 3, 5), bias = t1(BF16, 5);
  AtenTensorHandle ret = NULL;
  assert_int_equal(
      aoti_torch_cuda__addmm_activation(bias, a, b, 1, 1, 1, &ret),
      AOTI_TORCH_SUCCESS);
  assert_non_null(ret);
  int64_t *sizes = NULL, *strides = NULL;
  int32_t dtype = 0;
  assert_int_equal(aoti_torch_get_sizes(ret, &sizes), AOTI_TORCH_SUCCESS);
  assert_int_equal(aoti_torch_get_strides(ret, &strides), AOTI_TORCH_SUCCESS);
  assert_int_equal(aoti_torch_get_dtype(ret, &dtype), AOTI_TORCH_SUCCESS);
  assert_int_equal(sizes[0], 0);
  assert_int_equal(sizes[1], 5);
  assert_int_equal(strides[0], 5);
  assert_int_equal(strides[1], 1);
  assert_int_equal(dtype, BF16);
  del(4, a, b, bias, ret);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_baddbmm_shapes),
      cmocka_unit_test(test_baddbmm_dtypes),
      cmocka_unit_test(test_baddbmm_empty_is_noop),
      cmocka_unit_test(test_mm_dtype),
      cmocka_unit_test(test_mm_dtype_accepts),
      cmocka_unit_test(test_addmv),
      cmocka_unit_test(test_addmm_activation),
      cmocka_unit_test(test_addmm_activation_empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
