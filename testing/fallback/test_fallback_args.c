/* test_fallback_args.c: argument checks of the CUDA fallback ops. Runs
 * without a GPU: the "CUDA" tensors are never-owning blobs over host memory
 * that is never touched, since every check runs before any CUDA call. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "testing/fallback/fake_tensor.h"

enum { F16 = 5, F32 = 6, I64 = 4, BOOL = 11, CPU = 0, CUDA = 1 };

/* A contiguous fake tensor on device (dev_type, dev). */
static AtenTensorHandle fake_on(int32_t dtype, int32_t dev_type,
                                int32_t dev, int64_t ndim,
                                const int64_t *sizes) {
  return fake_blob(fake_sentinel(), dtype, dev_type, dev, ndim, sizes,
                   NULL);
}

static AtenTensorHandle cuda2(int32_t dtype, int64_t r, int64_t c) {
  const int64_t s[2] = {r, c};
  return fake_on(dtype, CUDA, 0, 2, s);
}

static void del(AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle c) {
  aoti_torch_delete_tensor_object(a);
  aoti_torch_delete_tensor_object(b);
  aoti_torch_delete_tensor_object(c);
}

static void test_mm_null_handles(void **state) {
  (void)state;
  AtenTensorHandle a = cuda2(F32, 2, 3), b = cuda2(F32, 3, 5),
                   o = cuda2(F32, 2, 5);
  expect_fail(aoti_torch_cuda_mm_out(NULL, a, b),
              "aoti_torch_cuda_mm_out: argument 'out' is NULL");
  expect_fail(aoti_torch_cuda_mm_out(o, NULL, b), "argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_mm_out(o, a, NULL), "argument 'mat2' is NULL");
  expect_fail(aoti_torch_cuda_bmm_out(o, a, NULL),
              "aoti_torch_cuda_bmm_out: argument 'mat2' is NULL");
  expect_fail(aoti_torch_cuda_addmm_out(o, NULL, a, b, 1.0, 1.0),
              "aoti_torch_cuda_addmm_out: argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_addmm_out(o, o, a, NULL, 1.0, 1.0),
              "argument 'mat2' is NULL");
  del(a, b, o);
}

static void test_mm_inner_mismatch(void **state) {
  (void)state;
  AtenTensorHandle a = cuda2(F32, 2, 3), b = cuda2(F32, 4, 5),
                   o = cuda2(F32, 2, 5);
  expect_fail(aoti_torch_cuda_mm_out(o, a, b),
              "'self' has size 3 in dim 1 but 'mat2' has size 4 in dim 0 "
              "(self [2, 3], mat2 [4, 5])");
  del(a, b, o);
}

static void test_mm_out_shape(void **state) {
  (void)state;
  AtenTensorHandle a = cuda2(F32, 2, 3), b = cuda2(F32, 3, 5),
                   o = cuda2(F32, 2, 7);
  expect_fail(aoti_torch_cuda_mm_out(o, a, b),
              "'out' has size 7 in dim 1, expected 5 (out is [2, 7], the "
              "result is [2, 5])");
  del(a, b, o);
}

static void test_mm_ndim(void **state) {
  (void)state;
  const int64_t s3[3] = {2, 2, 3};
  AtenTensorHandle a = fake_on(F32, CUDA, 0, 3, s3), b = cuda2(F32, 3, 5),
                   o = cuda2(F32, 2, 5);
  expect_fail(aoti_torch_cuda_mm_out(o, a, b),
              "'self' must be 2-D, got 3-D tensor [2, 2, 3]");
  expect_fail(aoti_torch_cuda_bmm_out(o, a, b), "'mat2' must be 3-D, got 2-D");
  del(a, b, o);
}

static void test_mm_dtypes(void **state) {
  (void)state;
  AtenTensorHandle a = cuda2(F32, 2, 3), b = cuda2(F16, 3, 5),
                   o = cuda2(F32, 2, 5), ai = cuda2(I64, 2, 3);
  expect_fail(aoti_torch_cuda_mm_out(o, a, b),
              "'mat2' has dtype float16 but 'self' has dtype float32");
  expect_fail(aoti_torch_cuda_mm_out(o, ai, b),
              "'self' has dtype int64; supported: float32, float64, float16, "
              "bfloat16");
  del(a, b, o);
  aoti_torch_delete_tensor_object(ai);
}

static void test_mm_devices(void **state) {
  (void)state;
  const int64_t s[2] = {3, 5};
  AtenTensorHandle a = cuda2(F32, 2, 3), bc = fake_on(F32, CPU, 0, 2, s),
                   b1 = fake_on(F32, CUDA, 1, 2, s), o = cuda2(F32, 2, 5);
  expect_fail(aoti_torch_cuda_mm_out(o, a, bc),
              "'mat2' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_mm_out(o, bc, a),
              "'self' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_mm_out(o, a, b1),
              "'mat2' is on cuda:1 but 'self' is on cuda:0");
  del(a, bc, b1);
  aoti_torch_delete_tensor_object(o);
}

static void test_mm_empty_is_noop(void **state) {
  (void)state;
  /* M == 0: nothing to compute, so no CUDA call (passes without a GPU). */
  AtenTensorHandle a = cuda2(F32, 0, 3), b = cuda2(F32, 3, 5),
                   o = cuda2(F32, 0, 5);
  assert_int_equal(aoti_torch_cuda_mm_out(o, a, b), AOTI_TORCH_SUCCESS);
  del(a, b, o);
}

static void test_addmm_bias(void **state) {
  (void)state;
  const int64_t s1[1] = {3}, s3[3] = {1, 2, 5}, s21[2] = {2, 2};
  AtenTensorHandle a = cuda2(F32, 2, 3), b = cuda2(F32, 3, 5),
                   o = cuda2(F32, 2, 5);
  AtenTensorHandle bias = fake_on(F32, CUDA, 0, 1, s1);
  expect_fail(aoti_torch_cuda_addmm_out(o, bias, a, b, 1.0, 1.0),
              "'self' (bias) has size 3 in dim 0, which does not broadcast "
              "to size 5 (bias [3], result [2, 5])");
  aoti_torch_delete_tensor_object(bias);
  bias = fake_on(F32, CUDA, 0, 2, s21);
  expect_fail(aoti_torch_cuda_addmm_out(o, bias, a, b, 1.0, 1.0),
              "'self' (bias) has size 2 in dim 1, which does not broadcast "
              "to size 5");
  aoti_torch_delete_tensor_object(bias);
  bias = fake_on(F32, CUDA, 0, 3, s3);
  expect_fail(aoti_torch_cuda_addmm_out(o, bias, a, b, 1.0, 1.0),
              "'self' (bias) must have at most 2 dims, got 3-D tensor");
  aoti_torch_delete_tensor_object(bias);
  bias = cuda2(F16, 2, 5);
  expect_fail(aoti_torch_cuda_addmm_out(o, bias, a, b, 1.0, 1.0),
              "'self' has dtype float16 but 'mat1' has dtype float32");
  aoti_torch_delete_tensor_object(bias);
  del(a, b, o);
}

static void test_bmm_batch_mismatch(void **state) {
  (void)state;
  const int64_t sa[3] = {2, 4, 3}, sb[3] = {3, 3, 5}, so[3] = {2, 4, 6};
  const int64_t sb2[3] = {2, 3, 5};
  AtenTensorHandle a = fake_on(F32, CUDA, 0, 3, sa),
                   b = fake_on(F32, CUDA, 0, 3, sb),
                   o = fake_on(F32, CUDA, 0, 3, so),
                   b2 = fake_on(F32, CUDA, 0, 3, sb2);
  expect_fail(aoti_torch_cuda_bmm_out(o, a, b),
              "'self' has size 2 in dim 0 but 'mat2' has size 3 in dim 0");
  expect_fail(aoti_torch_cuda_bmm_out(o, a, b2),
              "'out' has size 6 in dim 2, expected 5");
  del(a, b, o);
  aoti_torch_delete_tensor_object(b2);
}

/* ---- index_Tensor ---- */

static void test_index_null_args(void **state) {
  (void)state;
  const int64_t s[1] = {4};
  AtenTensorHandle x = cuda2(F32, 4, 2), m = fake_on(BOOL, CUDA, 0, 1, s);
  const AtenTensorHandle *idx[1] = {&m};
  AtenTensorHandle ret = fake_sentinel();
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 1, NULL),
              "the result pointer 'ret0' is NULL");
  expect_fail(aoti_torch_cuda_index_Tensor(NULL, idx, 1, &ret),
              "aoti_torch_cuda_index_Tensor: argument 'self' is NULL");
  assert_null(ret); /* cleared on failure */
  expect_fail(aoti_torch_cuda_index_Tensor(x, NULL, 1, &ret),
              "bad index list (1 entries");
  const AtenTensorHandle *none[2] = {NULL, NULL};
  expect_fail(aoti_torch_cuda_index_Tensor(x, none, 2, &ret),
              "no index tensor (all 2 indices are None)");
  del(x, m, NULL);
}

static void test_index_mask_shape(void **state) {
  (void)state;
  const int64_t s3[1] = {3}, s23[2] = {4, 3};
  AtenTensorHandle x = cuda2(F32, 4, 2), m = fake_on(BOOL, CUDA, 0, 1, s3),
                   m2 = fake_on(BOOL, CUDA, 0, 2, s23);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *idx[1] = {&m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 1, &ret),
              "the mask indices[0] has size 3 in dim 0 but 'self' has size 4 "
              "in dim 0 (mask [3], self [4, 2])");
  const AtenTensorHandle *idx2[1] = {&m2};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx2, 1, &ret),
              "has size 3 in dim 1 but 'self' has size 2 in dim 1");
  /* None then a mask over dims 1..: mask [3] vs self dim 1 (size 2). */
  const AtenTensorHandle *idx3[2] = {NULL, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx3, 2, &ret),
              "the mask indices[1] has size 3 in dim 0 but 'self' has size 2 "
              "in dim 1");
  del(x, m, m2);
}

static void test_index_too_many(void **state) {
  (void)state;
  const int64_t s42[2] = {4, 2};
  AtenTensorHandle x = cuda2(F32, 4, 2), m = fake_on(BOOL, CUDA, 0, 2, s42);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *idx[2] = {NULL, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 2, &ret),
              "too many indices for 'self' [4, 2] of dimension 2 (the indices "
              "consume 3 dims)");
  del(x, m, NULL);
}

static void test_index_kinds(void **state) {
  (void)state;
  const int64_t s4[1] = {4};
  AtenTensorHandle x = cuda2(F32, 4, 2), f = fake_on(F32, CUDA, 0, 1, s4),
                   m = fake_on(BOOL, CUDA, 0, 1, s4),
                   mc = fake_on(BOOL, CPU, 0, 1, s4);
  AtenTensorHandle ret = NULL;
  /* Two masks are allowed; the second one indexes dim 1 (size 2). */
  const AtenTensorHandle *two[2] = {&m, &m};
  expect_fail(aoti_torch_cuda_index_Tensor(x, two, 2, &ret),
              "the mask indices[1] has size 4 in dim 0 but 'self' has size 2 "
              "in dim 1");
  const AtenTensorHandle *fl[1] = {&f};
  expect_fail(aoti_torch_cuda_index_Tensor(x, fl, 1, &ret),
              "indices[0] has dtype float32; index tensors must be bool, "
              "uint8, int32 or int64");
  const AtenTensorHandle *cpu[1] = {&mc};
  expect_fail(aoti_torch_cuda_index_Tensor(x, cpu, 1, &ret),
              "'indices[0]' is on device type 0 (cpu), expected a CUDA tensor");
  const int64_t s42[2] = {4, 2};
  AtenTensorHandle xc = fake_on(F32, CPU, 0, 2, s42);
  const AtenTensorHandle *idx[1] = {&m};
  expect_fail(aoti_torch_cuda_index_Tensor(xc, idx, 1, &ret),
              "'self' is on device type 0 (cpu), expected a CUDA tensor");
  del(x, f, m);
  del(mc, xc, NULL);
}

static void test_index_int_into_empty_dim(void **state) {
  (void)state;
  const int64_t s1[1] = {1};
  AtenTensorHandle x = cuda2(F32, 0, 2), i = fake_on(I64, CUDA, 0, 1, s1);
  AtenTensorHandle ret = NULL;
  const AtenTensorHandle *idx[1] = {&i};
  expect_fail(aoti_torch_cuda_index_Tensor(x, idx, 1, &ret),
              "indices[0] indexes dim 0 of 'self', which has size 0");
  del(x, i, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mm_null_handles),
      cmocka_unit_test(test_mm_inner_mismatch),
      cmocka_unit_test(test_mm_out_shape),
      cmocka_unit_test(test_mm_ndim),
      cmocka_unit_test(test_mm_dtypes),
      cmocka_unit_test(test_mm_devices),
      cmocka_unit_test(test_mm_empty_is_noop),
      cmocka_unit_test(test_addmm_bias),
      cmocka_unit_test(test_bmm_batch_mismatch),
      cmocka_unit_test(test_index_null_args),
      cmocka_unit_test(test_index_mask_shape),
      cmocka_unit_test(test_index_too_many),
      cmocka_unit_test(test_index_kinds),
      cmocka_unit_test(test_index_int_into_empty_dim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
