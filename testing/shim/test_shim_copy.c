/* copy_, tensor_copy_, clone, clone_preserve_strides, zero_ (CPU). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

enum { U8 = 0, I8 = 1, I32 = 3, I64 = 4, F16 = 5, F32 = 6, F64 = 7, C64 = 9,
       BOOL = 11, BF16 = 15, U64 = 29 };

static AtenTensorHandle blob(void *data, int32_t dtype, int64_t ndim,
                             const int64_t *sizes, const int64_t *strides) {
  AtenTensorHandle t = NULL;
  if (aoti_torch_create_tensor_from_blob(data, ndim, sizes, strides, 0, dtype, 0, 0, &t))
    print_message("from_blob: %s\n", aotrun_shim_last_error());
  return t;
}

static void test_copy_strided_transpose(void **state) {
  (void)state;
  float src[6] = {0, 1, 2, 3, 4, 5}, dst[6] = {0};
  int64_t ss[] = {2, 3}, sst[] = {3, 1};
  int64_t ds[] = {2, 3}, dst_st[] = {1, 2}; /* column-major destination */
  AtenTensorHandle s = blob(src, F32, 2, ss, sst), d = blob(dst, F32, 2, ds, dst_st);
  ASSERT_OK(aoti_torch_copy_(d, s, 0)); /* dst first */
  /* dst[i + 2j] = src[3i + j] */
  float want[6] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; i++) assert_true(dst[i] == want[i]);
  float back[6] = {0};
  AtenTensorHandle b = blob(back, F32, 2, ss, sst);
  ASSERT_OK(aoti_torch_tensor_copy_(d, b)); /* src first */
  for (int i = 0; i < 6; i++) assert_true(back[i] == src[i]);
  aoti_torch_delete_tensor_object(s);
  aoti_torch_delete_tensor_object(d);
  aoti_torch_delete_tensor_object(b);
}

static void test_copy_broadcast(void **state) {
  (void)state;
  int32_t row[3] = {7, 8, 9}, out[6] = {0};
  int64_t rs[] = {3}, rst[] = {1}, os[] = {2, 3}, ost[] = {3, 1};
  AtenTensorHandle r = blob(row, I32, 1, rs, rst), o = blob(out, I32, 2, os, ost);
  ASSERT_OK(aoti_torch_copy_(o, r, 0));
  int32_t want[6] = {7, 8, 9, 7, 8, 9};
  for (int i = 0; i < 6; i++) assert_int_equal(out[i], want[i]);
  int64_t bad[] = {2};
  AtenTensorHandle r2 = blob(row, I32, 1, bad, rst);
  ASSERT_FAILS_WITH(aoti_torch_copy_(o, r2, 0),
                    "aoti_torch_copy_: src size 2 in dim 0 does not broadcast to dst size 3 in dim 1");
  ASSERT_FAILS_WITH(aoti_torch_copy_(r, o, 0), "src has 2 dims, more than dst's 1");
  /* Writing through a stride-0 dst would race. */
  int64_t zst[] = {0};
  AtenTensorHandle z = blob(row, I32, 1, rs, zst);
  ASSERT_FAILS_WITH(aoti_torch_copy_(z, r, 0),
                    "dst has stride 0 over 3 elements");
  ASSERT_FAILS_WITH(aoti_torch_copy_(NULL, r, 0), "aoti_torch_copy_: self is NULL");
  ASSERT_FAILS_WITH(aoti_torch_copy_(o, NULL, 0), "aoti_torch_copy_: src is NULL");
  aoti_torch_delete_tensor_object(r);
  aoti_torch_delete_tensor_object(r2);
  aoti_torch_delete_tensor_object(o);
  aoti_torch_delete_tensor_object(z);
}

static void test_copy_dtype_conversion(void **state) {
  (void)state;
  float f[5] = {1.5f, -2.75f, 65504.0f, 1e-8f, 0.0f};
  int64_t n = 5, one = 1;
  AtenTensorHandle tf = blob(f, F32, 1, &n, &one);
  int32_t i32[5];
  AtenTensorHandle ti = blob(i32, I32, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(ti, tf, 0));
  assert_int_equal(i32[0], 1);
  assert_int_equal(i32[1], -2); /* truncation toward zero */
  assert_int_equal(i32[2], 65504);
  uint16_t h[5];
  AtenTensorHandle th = blob(h, F16, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(th, tf, 0));
  assert_int_equal(h[0], 0x3e00); /* 1.5 */
  assert_int_equal(h[1], 0xc180); /* -2.75 */
  assert_int_equal(h[2], 0x7bff); /* 65504 = max half */
  assert_int_equal(h[3], 0x0000); /* 1e-8 underflows */
  uint16_t bf[5];
  AtenTensorHandle tb = blob(bf, BF16, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(tb, tf, 0));
  assert_int_equal(bf[0], 0x3fc0);
  assert_int_equal(bf[1], 0xc030);
  double d[5];
  AtenTensorHandle td = blob(d, F64, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(td, th, 0)); /* half -> double */
  assert_true(d[0] == 1.5 && d[1] == -2.75 && d[2] == 65504.0 && d[4] == 0.0);
  uint8_t b[5];
  AtenTensorHandle tbool = blob(b, BOOL, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(tbool, tf, 0));
  uint8_t bwant[5] = {1, 1, 1, 1, 0};
  for (int i = 0; i < 5; i++) assert_int_equal(b[i], bwant[i]);
  int8_t i8[5];
  AtenTensorHandle t8 = blob(i8, I8, 1, &n, &one);
  int32_t wide[5] = {127, 128, -129, 255, 256};
  AtenTensorHandle tw = blob(wide, I32, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(t8, tw, 0)); /* integer narrowing wraps */
  int8_t w8[5] = {127, -128, 127, -1, 0};
  for (int i = 0; i < 5; i++) assert_int_equal(i8[i], w8[i]);
  int64_t big = INT64_MAX - 1;
  uint64_t u;
  AtenTensorHandle tbig = blob(&big, I64, 0, NULL, NULL), tu = blob(&u, U64, 0, NULL, NULL);
  ASSERT_OK(aoti_torch_copy_(tu, tbig, 0)); /* int64 -> uint64 keeps all bits */
  assert_true(u == (uint64_t)(INT64_MAX - 1));
  float cbuf[4] = {0};
  AtenTensorHandle tc = blob(cbuf, C64, 1, &one, &one);
  ASSERT_FAILS_WITH(aoti_torch_copy_(tc, tf, 0),
                    "aoti_torch_copy_: converting float32 to complex64 is not supported");
  AtenTensorHandle handles[] = {tf, ti, th, tb, td, tbool, t8, tw, tbig, tu, tc};
  for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++)
    aoti_torch_delete_tensor_object(handles[i]);
}

static void test_half_rounding(void **state) {
  (void)state;
  /* Round to nearest even at the half/bf16 boundaries, NaN and inf kept. */
  float f[6] = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65520.0f, INFINITY, NAN, 5.96e-8f};
  uint16_t h[6], want[6] = {0x3c00, 0x3c02, 0x7c00, 0x7c00, 0x7e00, 0x0001};
  int64_t n = 6, one = 1;
  AtenTensorHandle tf = blob(f, F32, 1, &n, &one), th = blob(h, F16, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(th, tf, 0));
  for (int i = 0; i < 6; i++) assert_int_equal(h[i], want[i]);
  float back[6];
  AtenTensorHandle tback = blob(back, F32, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(tback, th, 0));
  assert_true(back[5] == ldexpf(1.0f, -24)); /* smallest subnormal half */
  assert_true(isnan(back[4]) && isinf(back[3]));
  aoti_torch_delete_tensor_object(tf);
  aoti_torch_delete_tensor_object(th);
  aoti_torch_delete_tensor_object(tback);
}

static void test_copy_complex_same_dtype(void **state) {
  (void)state;
  float src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
  int64_t n = 2, st = 2, one = 1;
  AtenTensorHandle s = blob(src, C64, 1, &n, &st), d = blob(dst, C64, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(d, s, 0));
  float want[4] = {1, 2, 5, 6};
  for (int i = 0; i < 4; i++) assert_true(dst[i] == want[i]);
  aoti_torch_delete_tensor_object(s);
  aoti_torch_delete_tensor_object(d);
}

static void test_clone(void **state) {
  (void)state;
  float src[12];
  for (int i = 0; i < 12; i++) src[i] = (float)i;
  /* A dense but permuted tensor keeps its strides (preserve_format). */
  int64_t sizes[] = {3, 4}, strides[] = {1, 3};
  AtenTensorHandle s = blob(src, F32, 2, sizes, strides), c;
  ASSERT_OK(aoti_torch_clone(s, &c));
  int64_t *cs;
  ASSERT_OK(aoti_torch_get_strides(c, &cs));
  assert_int_equal(cs[0], 1);
  assert_int_equal(cs[1], 3);
  assert_ptr_not_equal(test_data(c), src);
  for (int i = 0; i < 12; i++) assert_true(((float *)test_data(c))[i] == src[i]);
  aoti_torch_delete_tensor_object(c);
  /* A gappy tensor becomes dense (row-major here). */
  int64_t gs[] = {2, 2}, gst[] = {6, 2};
  AtenTensorHandle g = blob(src, F32, 2, gs, gst);
  ASSERT_OK(aoti_torch_clone(g, &c));
  ASSERT_OK(aoti_torch_get_strides(c, &cs));
  assert_int_equal(cs[0], 2);
  assert_int_equal(cs[1], 1);
  float want[4] = {0, 2, 6, 8};
  for (int i = 0; i < 4; i++) assert_true(((float *)test_data(c))[i] == want[i]);
  int64_t bytes;
  ASSERT_OK(aoti_torch_get_storage_size(c, &bytes));
  assert_int_equal(bytes, 16);
  aoti_torch_delete_tensor_object(c);
  /* A gappy transposed tensor keeps the dim order. */
  int64_t ts[] = {2, 2}, tst[] = {2, 6};
  AtenTensorHandle tt = blob(src, F32, 2, ts, tst);
  ASSERT_OK(aoti_torch_clone(tt, &c));
  ASSERT_OK(aoti_torch_get_strides(c, &cs));
  assert_int_equal(cs[0], 1);
  assert_int_equal(cs[1], 2);
  aoti_torch_delete_tensor_object(c);
  ASSERT_FAILS_WITH(aoti_torch_clone(NULL, &c), "aoti_torch_clone: self is NULL");
  aoti_torch_delete_tensor_object(s);
  aoti_torch_delete_tensor_object(g);
  aoti_torch_delete_tensor_object(tt);
}

static void test_clone_preserve_strides(void **state) {
  (void)state;
  float src[20];
  for (int i = 0; i < 20; i++) src[i] = (float)i;
  int64_t sizes[] = {2, 3}, strides[] = {8, 2};
  AtenTensorHandle s, c;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(src, 2, sizes, strides, 3, F32, 0, 0, &s));
  ASSERT_OK(aoti_torch_clone_preserve_strides(s, &c));
  int64_t *cs, *cst, off, bytes;
  ASSERT_OK(aoti_torch_get_sizes(c, &cs));
  ASSERT_OK(aoti_torch_get_strides(c, &cst));
  ASSERT_OK(aoti_torch_get_storage_offset(c, &off));
  ASSERT_OK(aoti_torch_get_storage_size(c, &bytes));
  assert_int_equal(cs[0], 2);
  assert_int_equal(cs[1], 3);
  assert_int_equal(cst[0], 8);
  assert_int_equal(cst[1], 2);
  assert_int_equal(off, 0);
  /* span = 1 + 8 + 4 = 13 elements, gaps included */
  assert_int_equal(bytes, 13 * 4);
  float *cd = test_data(c);
  for (int i = 0; i < 13; i++) assert_true(cd[i] == (float)(i + 3));
  aoti_torch_delete_tensor_object(s);
  aoti_torch_delete_tensor_object(c);
  /* Zero-size tensors clone to zero-size tensors. */
  int64_t zs[] = {0, 4}, zst[] = {4, 1};
  AtenTensorHandle z;
  ASSERT_OK(aoti_torch_empty_strided(2, zs, zst, F32, 0, 0, &z));
  ASSERT_OK(aoti_torch_clone_preserve_strides(z, &c));
  ASSERT_OK(aoti_torch_get_storage_size(c, &bytes));
  assert_int_equal(bytes, 0);
  aoti_torch_delete_tensor_object(c);
  ASSERT_OK(aoti_torch_clone(z, &c));
  aoti_torch_delete_tensor_object(c);
  aoti_torch_delete_tensor_object(z);
}

static void test_zero(void **state) {
  (void)state;
  double buf[8];
  for (int i = 0; i < 8; i++) buf[i] = 1.0 + i;
  int64_t sizes[] = {2, 2}, strides[] = {4, 2};
  AtenTensorHandle t = blob(buf, F64, 2, sizes, strides);
  ASSERT_OK(aoti_torch_zero_(t));
  double want[8] = {0, 2, 0, 4, 0, 6, 0, 8}; /* gaps untouched */
  for (int i = 0; i < 8; i++) assert_true(buf[i] == want[i]);
  aoti_torch_delete_tensor_object(t);
  int64_t n = 8, one = 1;
  t = blob(buf, F64, 1, &n, &one);
  ASSERT_OK(aoti_torch_zero_(t));
  for (int i = 0; i < 8; i++) assert_true(buf[i] == 0.0);
  aoti_torch_delete_tensor_object(t);
  ASSERT_FAILS_WITH(aoti_torch_zero_(NULL), "aoti_torch_zero_: self is NULL");
}

static void test_copy_many_dims(void **state) {
  (void)state;
  /* A 5-d permuted copy exercises the odometer. */
  enum { N = 2 * 3 * 2 * 2 * 3 };
  int16_t src[N], dst[N];
  for (int i = 0; i < N; i++) src[i] = (int16_t)i;
  int64_t sizes[] = {2, 3, 2, 2, 3};
  int64_t sst[] = {36, 12, 6, 3, 1};
  int64_t dstst[] = {1, 2, 6, 12, 24}; /* fully reversed order */
  AtenTensorHandle s = blob(src, 2, 5, sizes, sst), d = blob(dst, 2, 5, sizes, dstst);
  ASSERT_OK(aoti_torch_copy_(d, s, 0));
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 2; c++)
        for (int e = 0; e < 2; e++)
          for (int f = 0; f < 3; f++)
            assert_int_equal(dst[a + 2 * b + 6 * c + 12 * e + 24 * f],
                             src[36 * a + 12 * b + 6 * c + 3 * e + f]);
  aoti_torch_delete_tensor_object(s);
  aoti_torch_delete_tensor_object(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_strided_transpose),
      cmocka_unit_test(test_copy_broadcast),
      cmocka_unit_test(test_copy_dtype_conversion),
      cmocka_unit_test(test_half_rounding),
      cmocka_unit_test(test_copy_complex_same_dtype),
      cmocka_unit_test(test_clone),
      cmocka_unit_test(test_clone_preserve_strides),
      cmocka_unit_test(test_zero),
      cmocka_unit_test(test_copy_many_dims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
