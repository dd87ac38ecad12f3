/* Tensor creation, attributes, handles and argument errors (CPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

/* The test asks for 2^60 bytes on purpose: under ASan that must return
 * NULL instead of aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

enum { F32 = 6, F64 = 7, I64 = 4, CPU = 0, CUDA = 1 };

static void test_empty_strided_attributes(void **state) {
  (void)state;
  int64_t sizes[] = {2, 3}, strides[] = {1, 2}; /* column-major */
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_empty_strided(2, sizes, strides, F64, CPU, 0, &t));
  int64_t *gs, *gst, dim, numel, bytes, off, size, stride;
  int32_t dt, devt, devi, layout;
  AOTRUN_SHIM_BOOL contig, defined;
  ASSERT_OK(aoti_torch_get_sizes(t, &gs));
  ASSERT_OK(aoti_torch_get_strides(t, &gst));
  assert_true(gs != sizes && gst != strides); /* copies owned by the tensor */
  sizes[0] = 99;
  assert_int_equal(gs[0], 2);
  assert_int_equal(gs[1], 3);
  assert_int_equal(gst[0], 1);
  assert_int_equal(gst[1], 2);
  ASSERT_OK(aoti_torch_get_dim(t, &dim));
  ASSERT_OK(aoti_torch_get_numel(t, &numel));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  ASSERT_OK(aoti_torch_get_storage_offset(t, &off));
  assert_int_equal(dim, 2);
  assert_int_equal(numel, 6);
  assert_int_equal(bytes, 6 * 8); /* float64: 8-byte elements */
  assert_int_equal(off, 0);
  ASSERT_OK(aoti_torch_get_size(t, 1, &size));
  ASSERT_OK(aoti_torch_get_stride(t, -2, &stride)); /* negative wraps */
  assert_int_equal(size, 3);
  assert_int_equal(stride, 1);
  ASSERT_OK(aoti_torch_get_dtype(t, &dt));
  ASSERT_OK(aoti_torch_get_device_type(t, &devt));
  ASSERT_OK(aoti_torch_get_device_index(t, &devi));
  ASSERT_OK(aoti_torch_get_layout(t, &layout));
  assert_int_equal(dt, F64);
  assert_int_equal(devt, CPU);
  assert_int_equal(devi, 0);
  assert_int_equal(layout, 0);
  ASSERT_OK(aoti_torch_is_contiguous(t, &contig));
  assert_false(contig);
  ASSERT_OK(aoti_torch_is_defined(t, &defined));
  assert_true(defined);
  void *p;
  ASSERT_OK(aoti_torch_get_data_ptr(t, &p));
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 64, 0);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
}

static void test_storage_span(void **state) {
  (void)state;
  /* 1 + (2-1)*10 + (3-1)*1 = 13 elements for a padded [2,3]. */
  int64_t sizes[] = {2, 3}, strides[] = {10, 1}, bytes;
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_empty_strided(2, sizes, strides, F32, CPU, -1, &t));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_int_equal(bytes, 13 * 4);
  AOTRUN_SHIM_BOOL contig;
  ASSERT_OK(aoti_torch_is_contiguous(t, &contig));
  assert_false(contig);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  /* Stride 0 (expanded) is legal: storage of one element. */
  int64_t s0[] = {4}, st0[] = {0};
  ASSERT_OK(aoti_torch_empty_strided(1, s0, st0, F32, CPU, 0, &t));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_int_equal(bytes, 4);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
}

static void test_zero_dim_and_zero_size(void **state) {
  (void)state;
  AtenTensorHandle t;
  int64_t dim, numel, bytes, *sizes;
  ASSERT_OK(aoti_torch_empty_strided(0, NULL, NULL, F32, CPU, 0, &t));
  ASSERT_OK(aoti_torch_get_dim(t, &dim));
  ASSERT_OK(aoti_torch_get_numel(t, &numel));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  ASSERT_OK(aoti_torch_get_sizes(t, &sizes));
  assert_int_equal(dim, 0);
  assert_int_equal(numel, 1);
  assert_int_equal(bytes, 4);
  assert_non_null(sizes);
  AOTRUN_SHIM_BOOL contig;
  ASSERT_OK(aoti_torch_is_contiguous(t, &contig));
  assert_true(contig);
  ASSERT_FAILS_WITH(aoti_torch_get_size(t, 0, &dim),
                    "aoti_torch_get_size: dim 0 is out of range for a 0-d tensor");
  ASSERT_OK(aoti_torch_delete_tensor_object(t));

  int64_t zs[] = {3, 0, 5}, zst[] = {0, 5, 1};
  ASSERT_OK(aoti_torch_empty_strided(3, zs, zst, F32, CPU, 0, &t));
  ASSERT_OK(aoti_torch_get_numel(t, &numel));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_int_equal(numel, 0);
  assert_int_equal(bytes, 0);
  void *p = (void *)1;
  ASSERT_OK(aoti_torch_get_data_ptr(t, &p));
  assert_null(p);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
}

static void test_from_blob_never_owns(void **state) {
  (void)state;
  float buf[16];
  for (int i = 0; i < 16; i++) buf[i] = (float)i;
  int64_t sizes[] = {2, 2}, strides[] = {4, 1};
  AtenTensorHandle t, t2;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(buf, 2, sizes, strides, 3, F32, CPU, 0, &t));
  void *p;
  int64_t off, bytes;
  ASSERT_OK(aoti_torch_get_data_ptr(t, &p));
  ASSERT_OK(aoti_torch_get_storage_offset(t, &off));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_ptr_equal(p, &buf[3]); /* base + offset * itemsize */
  assert_int_equal(off, 3);
  assert_int_equal(bytes, (6 + 3) * 4); /* span + offset */
  ASSERT_OK(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, strides, 0, F32, CPU, 0,
                                                  &t2, 0, NULL, 0));
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  ASSERT_OK(aoti_torch_delete_tensor_object(t2));
  /* buf is a stack array: a free() of it would crash / fail under ASan. */
  assert_true(buf[5] == 5.0f);
  ASSERT_FAILS_WITH(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, strides, 0, F32,
                                                          CPU, 0, &t2, 2, NULL, 0),
                    "aoti_torch_create_tensor_from_blob_v2: layout 2 is not supported");
  assert_null(t2);
  ASSERT_FAILS_WITH(aoti_torch_create_tensor_from_blob(NULL, 2, sizes, strides, 0, F32, CPU,
                                                       0, &t),
                    "data is NULL for a tensor of 4 elements");
  /* NULL data is fine for a tensor with no elements. */
  int64_t zero = 0, one = 1;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(NULL, 1, &zero, &one, 0, F32, CPU, 0, &t));
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
}

static void test_handles_share_tensor(void **state) {
  (void)state;
  int64_t size = 4;
  AtenTensorHandle a = test_cpu_tensor(F32, 1, &size), b, c;
  ASSERT_OK(aoti_torch_new_tensor_handle(a, &b));
  assert_ptr_not_equal(a, b);
  int64_t *sa, *sb;
  ASSERT_OK(aoti_torch_get_sizes(a, &sa));
  ASSERT_OK(aoti_torch_get_sizes(b, &sb));
  assert_ptr_equal(sa, sb); /* same tensor metadata */
  assert_ptr_equal(test_data(a), test_data(b));
  ASSERT_OK(aoti_torch_delete_tensor_object(a));
  /* b keeps the memory alive (ASan would flag a use after free). */
  ((float *)test_data(b))[3] = 7.0f;
  ASSERT_OK(aoti_torch_assign_tensors_out(b, &c));
  assert_ptr_equal(test_data(c), test_data(b));
  ASSERT_OK(aoti_torch_delete_tensor_object(b));
  assert_true(((float *)test_data(c))[3] == 7.0f);
  ASSERT_OK(aoti_torch_delete_tensor_object(c));
  ASSERT_OK(aoti_torch_delete_tensor_object(NULL));
}

static void test_uninitialized(void **state) {
  (void)state;
  AtenTensorHandle u, u2;
  ASSERT_OK(aoti_torch_new_uninitialized_tensor(&u));
  AOTRUN_SHIM_BOOL defined = 1;
  ASSERT_OK(aoti_torch_is_defined(u, &defined));
  assert_false(defined);
  int64_t dim;
  ASSERT_FAILS_WITH(aoti_torch_get_dim(u, &dim),
                    "aoti_torch_get_dim: tensor is an undefined tensor");
  ASSERT_OK(aoti_torch_new_tensor_handle(u, &u2));
  /* assign_tensors makes it an alias of a real tensor. */
  int64_t size = 2;
  AtenTensorHandle t = test_cpu_tensor(I64, 1, &size);
  ASSERT_OK(aoti_torch_assign_tensors(t, u));
  ASSERT_OK(aoti_torch_is_defined(u, &defined));
  assert_true(defined);
  assert_ptr_equal(test_data(u), test_data(t));
  ASSERT_OK(aoti_torch_is_defined(u2, &defined));
  assert_false(defined); /* the other alias of the old tensor is untouched */
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  ASSERT_OK(aoti_torch_delete_tensor_object(u));
  ASSERT_OK(aoti_torch_delete_tensor_object(u2));
}

static void test_bad_arguments(void **state) {
  (void)state;
  AtenTensorHandle t = (AtenTensorHandle)1;
  int64_t sizes[] = {2, -3}, strides[] = {1, 1};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, sizes, strides, F32, CPU, 0, &t),
                    "aoti_torch_empty_strided: size -3 in dim 1 is negative");
  assert_null(t);
  int64_t s2[] = {2, 3}, st2[] = {-1, 1};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, st2, F32, CPU, 0, &t),
                    "aoti_torch_empty_strided: stride -1 in dim 0 is negative");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(-1, s2, st2, F32, CPU, 0, &t),
                    "aoti_torch_empty_strided: ndim -1 is negative");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(65, s2, st2, F32, CPU, 0, &t),
                    "ndim 65 exceeds the maximum of 64");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, NULL, st2, F32, CPU, 0, &t),
                    "sizes is NULL for a 2-d tensor");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, NULL, F32, CPU, 0, &t),
                    "strides is NULL for a 2-d tensor");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, strides, 12, CPU, 0, &t),
                    "aoti_torch_empty_strided: unknown dtype 12");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, strides, F32, 14, 0, &t),
                    "device type 14 (meta) is not supported");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, strides, F32, CPU, 1, &t),
                    "cpu device index must be -1 or 0, got 1");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, s2, strides, F32, CPU, 0, NULL),
                    "aoti_torch_empty_strided: ret_new_tensor is NULL");
  /* Overflow: element count, numel and bytes. */
  int64_t big[] = {INT64_C(1) << 40, INT64_C(1) << 40}, bst[] = {INT64_C(1) << 40, 1};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, big, bst, F32, CPU, 0, &t),
                    "size 1099511627776 with stride 1099511627776 in dim 0 overflows");
  int64_t bs1[] = {INT64_C(1) << 62}, one[] = {1};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(1, bs1, one, F64, CPU, 0, &t),
                    "overflow the byte size");
  int64_t bn[] = {INT64_C(1) << 32, INT64_C(1) << 32}, bnst[] = {0, 0};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(2, bn, bnst, F32, CPU, 0, &t),
                    "size 4294967296 in dim 1 overflows numel");
  /* Too much memory is an error, not a crash. */
  int64_t huge[] = {INT64_C(1) << 60};
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(1, huge, one, 0, CPU, 0, &t),
                    "out of host memory allocating 1152921504606846976 bytes");
  /* NULL handles. */
  int64_t v;
  int32_t dt;
  void *p;
  int64_t *ps;
  ASSERT_FAILS_WITH(aoti_torch_get_dim(NULL, &v), "aoti_torch_get_dim: tensor is NULL");
  ASSERT_FAILS_WITH(aoti_torch_get_dtype(NULL, &dt), "aoti_torch_get_dtype: tensor is NULL");
  ASSERT_FAILS_WITH(aoti_torch_get_data_ptr(NULL, &p), "aoti_torch_get_data_ptr: tensor is NULL");
  ASSERT_FAILS_WITH(aoti_torch_get_sizes(NULL, &ps), "aoti_torch_get_sizes: tensor is NULL");
  ASSERT_FAILS_WITH(aoti_torch_new_tensor_handle(NULL, &t),
                    "aoti_torch_new_tensor_handle: orig_handle is NULL");
  int64_t size = 3;
  AtenTensorHandle x = test_cpu_tensor(F32, 1, &size);
  ASSERT_FAILS_WITH(aoti_torch_get_size(x, 1, &v),
                    "aoti_torch_get_size: dim 1 is out of range for a 1-d tensor");
  ASSERT_FAILS_WITH(aoti_torch_get_stride(x, -2, &v),
                    "aoti_torch_get_stride: dim -2 is out of range for a 1-d tensor");
  ASSERT_FAILS_WITH(aoti_torch_get_numel(x, NULL), "aoti_torch_get_numel: output pointer is NULL");
  ASSERT_FAILS_WITH(aoti_torch_create_tensor_from_blob(test_data(x), 1, &size, one, -1, F32,
                                                       CPU, 0, &t),
                    "storage offset -1 is negative");
  ASSERT_OK(aoti_torch_delete_tensor_object(x));
}

static void test_max_dims(void **state) {
  (void)state;
  int64_t sizes[64], strides[64];
  for (int i = 0; i < 64; i++) {
    sizes[i] = 1;
    strides[i] = 1;
  }
  sizes[63] = 2;
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_empty_strided(64, sizes, strides, F32, CPU, 0, &t));
  int64_t dim, numel;
  ASSERT_OK(aoti_torch_get_dim(t, &dim));
  ASSERT_OK(aoti_torch_get_numel(t, &numel));
  assert_int_equal(dim, 64);
  assert_int_equal(numel, 2);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_strided_attributes),
      cmocka_unit_test(test_storage_span),
      cmocka_unit_test(test_zero_dim_and_zero_size),
      cmocka_unit_test(test_from_blob_never_owns),
      cmocka_unit_test(test_handles_share_tensor),
      cmocka_unit_test(test_uninitialized),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_max_dims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
