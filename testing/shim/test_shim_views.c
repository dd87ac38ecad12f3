/* Views over shared storage: _reinterpret_tensor, _alloc_from_pool,
 * as_strided; bounds checks (CPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

enum { U8 = 0, F32 = 6, F64 = 7, I32 = 3 };

static void test_reinterpret_adds_offset(void **state) {
  (void)state;
  float buf[32];
  for (int i = 0; i < 32; i++) buf[i] = (float)i;
  int64_t size = 32, one = 1;
  AtenTensorHandle base, v1, v2;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(buf, 1, &size, &one, 4, F32, 0, 0, &base));
  int64_t sizes[] = {2, 3}, strides[] = {3, 1};
  ASSERT_OK(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 5, &v1));
  int64_t off;
  ASSERT_OK(aoti_torch_get_storage_offset(v1, &off));
  assert_int_equal(off, 4 + 5); /* added to self's offset */
  assert_ptr_equal(test_data(v1), &buf[9]);
  /* A view of a view adds again. */
  int64_t s1 = 2, st1 = 1;
  ASSERT_OK(aoti_torch__reinterpret_tensor(v1, 1, &s1, &st1, 3, &v2));
  ASSERT_OK(aoti_torch_get_storage_offset(v2, &off));
  assert_int_equal(off, 12);
  assert_true(*(float *)test_data(v2) == 12.0f);
  int64_t *vs, *vst, bytes;
  ASSERT_OK(aoti_torch_get_sizes(v1, &vs));
  ASSERT_OK(aoti_torch_get_strides(v1, &vst));
  ASSERT_OK(aoti_torch_get_storage_size(v1, &bytes));
  assert_int_equal(vs[0], 2);
  assert_int_equal(vst[0], 3);
  assert_int_equal(bytes, (32 + 4) * 4); /* same storage */
  ASSERT_OK(aoti_torch_delete_tensor_object(base));
  ASSERT_OK(aoti_torch_delete_tensor_object(v1));
  ASSERT_OK(aoti_torch_delete_tensor_object(v2));
}

static void test_views_share_and_outlive_base(void **state) {
  (void)state;
  int64_t size = 8;
  AtenTensorHandle base = test_cpu_tensor(F32, 1, &size), view;
  int64_t vs = 4, vst = 2;
  ASSERT_OK(aoti_torch__reinterpret_tensor(base, 1, &vs, &vst, 1, &view));
  float *b = test_data(base);
  for (int i = 0; i < 8; i++) b[i] = (float)(10 * i);
  ASSERT_OK(aoti_torch_delete_tensor_object(base));
  float v;
  /* element 2 of the view = storage[1 + 2*2] = 50 */
  int64_t es = 1, est = 1;
  AtenTensorHandle elem;
  ASSERT_OK(aoti_torch__reinterpret_tensor(view, 0, &es, &est, 4, &elem));
  ASSERT_OK(aoti_torch_item_float32(elem, &v));
  assert_true(v == 50.0f);
  ASSERT_OK(aoti_torch_delete_tensor_object(view));
  ASSERT_OK(aoti_torch_delete_tensor_object(elem));
}

static void test_reinterpret_bounds(void **state) {
  (void)state;
  int64_t size = 6;
  AtenTensorHandle base = test_cpu_tensor(F32, 1, &size), v = NULL;
  int64_t s = 4, st = 1;
  ASSERT_FAILS_WITH(aoti_torch__reinterpret_tensor(base, 1, &s, &st, 3, &v),
                    "aoti_torch__reinterpret_tensor: the view needs 28 bytes",
                    "but the storage has 24");
  assert_null(v);
  ASSERT_FAILS_WITH(aoti_torch__reinterpret_tensor(base, 1, &s, &st, -1, &v),
                    "storage offset -1 added to self's 0 is out of range");
  ASSERT_FAILS_WITH(aoti_torch__reinterpret_tensor(NULL, 1, &s, &st, 0, &v),
                    "aoti_torch__reinterpret_tensor: self is NULL");
  int64_t neg = -2;
  ASSERT_FAILS_WITH(aoti_torch__reinterpret_tensor(base, 1, &neg, &st, 0, &v),
                    "size -2 in dim 0 is negative");
  /* A zero-size view anywhere is fine. */
  int64_t z = 0;
  ASSERT_OK(aoti_torch__reinterpret_tensor(base, 1, &z, &st, 100, &v));
  ASSERT_OK(aoti_torch_delete_tensor_object(v));
  ASSERT_OK(aoti_torch_delete_tensor_object(base));
}

static void test_alloc_from_pool(void **state) {
  (void)state;
  int64_t size = 256;
  AtenTensorHandle pool = test_cpu_tensor(U8, 1, &size), t, t2;
  int64_t sizes[] = {4, 2}, strides[] = {2, 1}, off;
  ASSERT_OK(aoti_torch__alloc_from_pool(pool, 64, F64, 2, sizes, strides, &t));
  ASSERT_OK(aoti_torch_get_storage_offset(t, &off));
  assert_int_equal(off, 64 / 8); /* bytes -> elements of the new dtype */
  assert_ptr_equal(test_data(t), (char *)test_data(pool) + 64);
  int32_t dt;
  ASSERT_OK(aoti_torch_get_dtype(t, &dt));
  assert_int_equal(dt, F64);
  ASSERT_OK(aoti_torch_delete_tensor_object(pool));
  ((double *)test_data(t))[7] = 1.5; /* storage kept alive by t */
  ASSERT_FAILS_WITH(aoti_torch__alloc_from_pool(t, 6, F64, 2, sizes, strides, &t2),
                    "the pool tensor has storage offset 8, expected 0");
  ASSERT_OK(aoti_torch_delete_tensor_object(t));

  pool = test_cpu_tensor(U8, 1, &size);
  ASSERT_FAILS_WITH(aoti_torch__alloc_from_pool(pool, 6, F64, 2, sizes, strides, &t2),
                    "offset_bytes 6 is not a non-negative multiple of the float64 element size 8");
  ASSERT_FAILS_WITH(aoti_torch__alloc_from_pool(pool, 200, F64, 2, sizes, strides, &t2),
                    "the view needs 264 bytes", "the storage has 256");
  ASSERT_FAILS_WITH(aoti_torch__alloc_from_pool(pool, 0, 99, 2, sizes, strides, &t2),
                    "unknown dtype 99");
  ASSERT_OK(aoti_torch_delete_tensor_object(pool));
}

static void test_as_strided(void **state) {
  (void)state;
  int64_t sizes[] = {3, 4};
  AtenTensorHandle base = test_cpu_tensor(I32, 2, sizes), v;
  int32_t *b = test_data(base);
  for (int i = 0; i < 12; i++) b[i] = i;
  int64_t s2[] = {4, 3}, st2[] = {1, 4}; /* the transpose */
  ASSERT_OK(aoti_torch_as_strided(base, s2, st2, &v));
  int64_t *vs, *vst;
  ASSERT_OK(aoti_torch_get_sizes(v, &vs));
  ASSERT_OK(aoti_torch_get_strides(v, &vst));
  assert_int_equal(vs[0], 4);
  assert_int_equal(vst[1], 4);
  assert_ptr_equal(test_data(v), b);
  AOTRUN_SHIM_BOOL c;
  ASSERT_OK(aoti_torch_is_contiguous(v, &c));
  assert_false(c);
  ASSERT_OK(aoti_torch_delete_tensor_object(v));
  int64_t s3[] = {4, 4}, st3[] = {4, 1};
  ASSERT_FAILS_WITH(aoti_torch_as_strided(base, s3, st3, &v),
                    "aoti_torch_as_strided: the view needs 64 bytes", "the storage has 48");
  ASSERT_OK(aoti_torch_delete_tensor_object(base));
}

static void test_assign_tensors(void **state) {
  (void)state;
  int64_t s = 2;
  AtenTensorHandle a = test_cpu_tensor(F32, 1, &s), b = test_cpu_tensor(F64, 1, &s), out;
  ASSERT_OK(aoti_torch_assign_tensors(a, b)); /* b's old tensor is released */
  int32_t dt;
  ASSERT_OK(aoti_torch_get_dtype(b, &dt));
  assert_int_equal(dt, F32);
  assert_ptr_equal(test_data(a), test_data(b));
  ASSERT_OK(aoti_torch_assign_tensors(a, a));
  ASSERT_FAILS_WITH(aoti_torch_assign_tensors(NULL, b), "aoti_torch_assign_tensors: src is NULL");
  ASSERT_FAILS_WITH(aoti_torch_assign_tensors(a, NULL), "aoti_torch_assign_tensors: dst is NULL");
  ASSERT_FAILS_WITH(aoti_torch_assign_tensors_out(a, NULL), "ret_dst is NULL");
  ASSERT_FAILS_WITH(aoti_torch_assign_tensors_out(NULL, &out),
                    "aoti_torch_assign_tensors_out: src is NULL");
  ASSERT_OK(aoti_torch_delete_tensor_object(a));
  ASSERT_OK(aoti_torch_delete_tensor_object(b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reinterpret_adds_offset),
      cmocka_unit_test(test_views_share_and_outlive_base),
      cmocka_unit_test(test_reinterpret_bounds),
      cmocka_unit_test(test_alloc_from_pool),
      cmocka_unit_test(test_as_strided),
      cmocka_unit_test(test_assign_tensors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
