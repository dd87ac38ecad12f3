/* The ABI constants (DESIGN.md §2.3) and element sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

static void test_dtype_codes_and_sizes(void **state) {
  (void)state;
  struct { int32_t (*getter)(void); int32_t code; size_t size; } d[] = {
      {aoti_torch_dtype_uint8, 0, 1},       {aoti_torch_dtype_int8, 1, 1},
      {aoti_torch_dtype_int16, 2, 2},       {aoti_torch_dtype_int32, 3, 4},
      {aoti_torch_dtype_int64, 4, 8},       {aoti_torch_dtype_float16, 5, 2},
      {aoti_torch_dtype_float32, 6, 4},     {aoti_torch_dtype_float64, 7, 8},
      {aoti_torch_dtype_complex32, 8, 4},   {aoti_torch_dtype_complex64, 9, 8},
      {aoti_torch_dtype_complex128, 10, 16}, {aoti_torch_dtype_bool, 11, 1},
      {aoti_torch_dtype_bfloat16, 15, 2},   {aoti_torch_dtype_float8_e5m2, 23, 1},
      {aoti_torch_dtype_float8_e4m3fn, 24, 1}, {aoti_torch_dtype_float8_e5m2fnuz, 25, 1},
      {aoti_torch_dtype_float8_e4m3fnuz, 26, 1}, {aoti_torch_dtype_uint16, 27, 2},
      {aoti_torch_dtype_uint32, 28, 4},     {aoti_torch_dtype_uint64, 29, 8},
  };
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
    assert_int_equal(d[i].getter(), d[i].code);
    assert_int_equal(aoti_torch_dtype_element_size(d[i].code), d[i].size);
  }
}

static void test_unknown_dtype_size(void **state) {
  (void)state;
  aotrun_shim_clear_error();
  assert_int_equal(aoti_torch_dtype_element_size(12), 0); /* qint8 */
  assert_string_equal(aotrun_shim_last_error(),
                      "aoti_torch_dtype_element_size: unknown dtype 12");
  assert_int_equal(aoti_torch_dtype_element_size(-1), 0);
  /* The sizes are looked up by code: every gap between known codes, and
   * codes past the last, are unknown too. */
  int32_t unknown[] = {13, 14, 16, 17, 18, 19, 20, 21, 22, 30, 31, 64,
                       INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    assert_int_equal(aoti_torch_dtype_element_size(unknown[i]), 0);
}

static void test_device_layout_memory_format(void **state) {
  (void)state;
  assert_int_equal(aoti_torch_device_type_cpu(), 0);
  assert_int_equal(aoti_torch_device_type_cuda(), 1);
  assert_int_equal(aoti_torch_device_type_xpu(), 12);
  assert_int_equal(aoti_torch_device_type_mps(), 13);
  assert_int_equal(aoti_torch_device_type_meta(), 14);
  assert_int_equal(aoti_torch_device_type_privateuse1(), 20);
  assert_int_equal(aoti_torch_layout_strided(), 0);
  assert_int_equal(aoti_torch_layout_sparse_coo(), 1);
  assert_int_equal(aoti_torch_layout_sparse_csr(), 2);
  assert_int_equal(aoti_torch_layout__mkldnn(), 3);
  assert_int_equal(aoti_torch_layout_sparse_csc(), 4);
  assert_int_equal(aoti_torch_layout_sparse_bsr(), 5);
  assert_int_equal(aoti_torch_layout_sparse_bsc(), 6);
  assert_int_equal(aoti_torch_layout_jagged(), 7);
  assert_int_equal(aoti_torch_memory_format_contiguous_format(), 0);
  assert_int_equal(aoti_torch_memory_format_preserve_format(), 1);
  assert_int_equal(aoti_torch_memory_format_channels_last(), 2);
  assert_int_equal(aoti_torch_memory_format_channels_last_3d(), 3);
}

static void test_every_dtype_tensor_storage(void **state) {
  (void)state;
  /* A [3] tensor's storage is 3 elements of each dtype's size. */
  int32_t codes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 23, 24, 25, 26, 27, 28, 29};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    int64_t size = 3, stride = 1, bytes = 0, numel = 0;
    int32_t dt = -1;
    AtenTensorHandle t;
    ASSERT_OK(aoti_torch_empty_strided(1, &size, &stride, codes[i], 0, 0, &t));
    ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
    ASSERT_OK(aoti_torch_get_storage_numel(t, &numel));
    ASSERT_OK(aoti_torch_get_dtype(t, &dt));
    assert_int_equal(bytes, 3 * (int64_t)aoti_torch_dtype_element_size(codes[i]));
    assert_int_equal(numel, 3);
    assert_int_equal(dt, codes[i]);
    ASSERT_OK(aoti_torch_delete_tensor_object(t));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_codes_and_sizes),
      cmocka_unit_test(test_unknown_dtype_size),
      cmocka_unit_test(test_device_layout_memory_format),
      cmocka_unit_test(test_every_dtype_tensor_storage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
