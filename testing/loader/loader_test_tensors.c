/*
 * loader_test_tensors.c: CPU tensors through the shim, for the loader
 * tests (declared in loader_test_util.h; link only where a shim is).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testing/loader/loader_test_util.h"

AtenTensorHandle test_f32_tensor(int64_t rows, int64_t cols,
                                 const float *values) {
  int64_t sizes[2] = {rows, cols}, strides[2] = {cols, 1};
  AtenTensorHandle t = NULL;
  assert_int_equal(aoti_torch_empty_strided(2, sizes, strides,
                                            aoti_torch_dtype_float32(),
                                            aoti_torch_device_type_cpu(), 0,
                                            &t),
                   AOTI_TORCH_SUCCESS);
  void *p = NULL;
  assert_int_equal(aoti_torch_get_data_ptr(t, &p), AOTI_TORCH_SUCCESS);
  memcpy(p, values, sizeof(float) * (size_t)(rows * cols));
  return t;
}

const float *test_f32_data(AtenTensorHandle t) {
  int32_t dtype = -1, device = -1;
  assert_int_equal(aoti_torch_get_dtype(t, &dtype), AOTI_TORCH_SUCCESS);
  assert_int_equal(aoti_torch_get_device_type(t, &device), AOTI_TORCH_SUCCESS);
  assert_int_equal(dtype, aoti_torch_dtype_float32());
  assert_int_equal(device, aoti_torch_device_type_cpu());
  void *p = NULL;
  assert_int_equal(aoti_torch_get_data_ptr(t, &p), AOTI_TORCH_SUCCESS);
  return p;
}
