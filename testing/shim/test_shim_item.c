/* item_* reads and scalar_to_tensor_* (CPU). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

static void check_scalar_tensor(AtenTensorHandle t, int32_t dtype) {
  int64_t dim, numel, bytes;
  int32_t dt, dev;
  ASSERT_OK(aoti_torch_get_dim(t, &dim));
  ASSERT_OK(aoti_torch_get_numel(t, &numel));
  ASSERT_OK(aoti_torch_get_dtype(t, &dt));
  ASSERT_OK(aoti_torch_get_device_type(t, &dev));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_int_equal(dim, 0);
  assert_int_equal(numel, 1);
  assert_int_equal(dt, dtype);
  assert_int_equal(dev, 0); /* a CPU tensor */
  assert_int_equal(bytes, (int64_t)aoti_torch_dtype_element_size(dtype));
}

static void test_scalar_to_tensor_round_trips(void **state) {
  (void)state;
  AtenTensorHandle t;
#define ROUND_TRIP(name, ctype, code, value)                    \
  do {                                                          \
    ctype got_;                                                 \
    ASSERT_OK(aoti_torch_scalar_to_tensor_##name((value), &t)); \
    check_scalar_tensor(t, (code));                             \
    ASSERT_OK(aoti_torch_item_##name(t, &got_));                \
    assert_true(got_ == (value));                               \
    aoti_torch_delete_tensor_object(t);                         \
  } while (0)
  ROUND_TRIP(float32, float, 6, 3.25f);
  ROUND_TRIP(float64, double, 7, -1e300);
  ROUND_TRIP(uint8, uint8_t, 0, 250);
  ROUND_TRIP(uint16, uint16_t, 27, 65000);
  ROUND_TRIP(uint32, uint32_t, 28, 4000000000u);
  ROUND_TRIP(uint64, uint64_t, 29, UINT64_MAX);
  ROUND_TRIP(int8, int8_t, 1, -128);
  ROUND_TRIP(int16, int16_t, 2, -30000);
  ROUND_TRIP(int32, int32_t, 3, INT32_MIN);
  ROUND_TRIP(int64, int64_t, 4, INT64_MAX);
  ROUND_TRIP(bool, AOTRUN_SHIM_BOOL, 11, 1);
#undef ROUND_TRIP
  aotrun_complex64 c = {1.5f, -2.0f}, cg;
  ASSERT_OK(aoti_torch_scalar_to_tensor_complex64(c, &t));
  check_scalar_tensor(t, 9);
  ASSERT_OK(aoti_torch_item_complex64(t, &cg));
  assert_true(cg.real == 1.5f && cg.imag == -2.0f);
  float re;
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, &re),
                    "aoti_torch_item_float32: complex value (1.5, -2) cannot be converted to float32");
  aoti_torch_delete_tensor_object(t);
  aotrun_complex128 z = {0.25, 4.0};
  ASSERT_OK(aoti_torch_scalar_to_tensor_complex128(z, &t));
  check_scalar_tensor(t, 10);
  ASSERT_OK(aoti_torch_item_complex64(t, &cg));
  assert_true(cg.real == 0.25f && cg.imag == 4.0f);
  aoti_torch_delete_tensor_object(t);
}

static void test_item_conversions(void **state) {
  (void)state;
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_scalar_to_tensor_float64(2.5, &t));
  float f;
  int32_t i;
  AOTRUN_SHIM_BOOL b;
  uint16_t h, bf;
  ASSERT_OK(aoti_torch_item_float32(t, &f));
  ASSERT_OK(aoti_torch_item_int32(t, &i));
  ASSERT_OK(aoti_torch_item_bool(t, &b));
  ASSERT_OK(aoti_torch_item_float16(t, &h));
  ASSERT_OK(aoti_torch_item_bfloat16(t, &bf));
  assert_true(f == 2.5f);
  assert_int_equal(i, 2);
  assert_true(b);
  assert_int_equal(h, 0x4100);
  assert_int_equal(bf, 0x4020);
  aotrun_complex64 c;
  ASSERT_OK(aoti_torch_item_complex64(t, &c));
  assert_true(c.real == 2.5f && c.imag == 0.0f);
  aoti_torch_delete_tensor_object(t);
  /* float16 tensor read as float64 */
  uint16_t half = 0xc500; /* -5.0 */
  AtenTensorHandle th;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(&half, 0, NULL, NULL, 0, 5, 0, 0, &th));
  double d;
  ASSERT_OK(aoti_torch_item_float64(th, &d));
  assert_true(d == -5.0);
  int8_t i8;
  ASSERT_OK(aoti_torch_item_int8(th, &i8));
  assert_int_equal(i8, -5);
  aoti_torch_delete_tensor_object(th);
  ASSERT_OK(aoti_torch_scalar_to_tensor_bool(0, &t));
  ASSERT_OK(aoti_torch_item_float32(t, &f));
  assert_true(f == 0.0f);
  aoti_torch_delete_tensor_object(t);
}

static void test_item_overflow(void **state) {
  (void)state;
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_scalar_to_tensor_int32(300, &t));
  int8_t i8;
  uint8_t u8;
  ASSERT_FAILS_WITH(aoti_torch_item_int8(t, &i8),
                    "aoti_torch_item_int8: value 300 cannot be converted to int8 without overflow");
  ASSERT_FAILS_WITH(aoti_torch_item_uint8(t, &u8), "value 300 cannot be converted to uint8");
  aoti_torch_delete_tensor_object(t);
  ASSERT_OK(aoti_torch_scalar_to_tensor_int64(-1, &t));
  uint64_t u64;
  ASSERT_FAILS_WITH(aoti_torch_item_uint64(t, &u64), "value -1 cannot be converted to uint64");
  aoti_torch_delete_tensor_object(t);
  ASSERT_OK(aoti_torch_scalar_to_tensor_uint64(UINT64_MAX, &t));
  int64_t i64;
  ASSERT_FAILS_WITH(aoti_torch_item_int64(t, &i64),
                    "value 18446744073709551615 cannot be converted to int64");
  aoti_torch_delete_tensor_object(t);
  ASSERT_OK(aoti_torch_scalar_to_tensor_float64(1e300, &t));
  float f;
  uint16_t h;
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, &f), "value 1.0000000000000001e+300 cannot be converted to float32");
  ASSERT_FAILS_WITH(aoti_torch_item_float16(t, &h), "to float16 without overflow");
  aoti_torch_delete_tensor_object(t);
  ASSERT_OK(aoti_torch_scalar_to_tensor_float32(NAN, &t));
  int32_t i32;
  ASSERT_FAILS_WITH(aoti_torch_item_int32(t, &i32), "value nan cannot be converted to int32");
  ASSERT_OK(aoti_torch_item_float32(t, &f)); /* nan stays nan */
  assert_true(isnan(f));
  ASSERT_OK(aoti_torch_item_float16(t, &h));
  assert_int_equal(h & 0x7c00, 0x7c00);
  aoti_torch_delete_tensor_object(t);
  ASSERT_OK(aoti_torch_scalar_to_tensor_float32(INFINITY, &t));
  ASSERT_OK(aoti_torch_item_float16(t, &h)); /* inf is not an overflow */
  assert_int_equal(h, 0x7c00);
  aoti_torch_delete_tensor_object(t);
}

static void test_item_bad_arguments(void **state) {
  (void)state;
  int64_t size = 2;
  AtenTensorHandle t = test_cpu_tensor(6, 1, &size);
  float f;
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, &f),
                    "aoti_torch_item_float32: a tensor with 2 elements cannot be converted to a scalar");
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, NULL), "aoti_torch_item_float32: ret_value is NULL");
  ASSERT_FAILS_WITH(aoti_torch_item_float32(NULL, &f), "aoti_torch_item_float32: tensor is NULL");
  aoti_torch_delete_tensor_object(t);
  int64_t zero = 0, one = 1;
  ASSERT_OK(aoti_torch_empty_strided(1, &zero, &one, 6, 0, 0, &t));
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, &f), "a tensor with 0 elements");
  aoti_torch_delete_tensor_object(t);
  uint8_t fp8 = 0x38;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(&fp8, 0, NULL, NULL, 0, 24, 0, 0, &t));
  ASSERT_FAILS_WITH(aoti_torch_item_float32(t, &f),
                    "aoti_torch_item_float32: reading a float8_e4m3fn element is not supported");
  aoti_torch_delete_tensor_object(t);
  ASSERT_FAILS_WITH(aoti_torch_scalar_to_tensor_int32(1, NULL),
                    "aoti_torch_scalar_to_tensor_int32: ret_new_tensor is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_to_tensor_round_trips),
      cmocka_unit_test(test_item_conversions),
      cmocka_unit_test(test_item_overflow),
      cmocka_unit_test(test_item_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
