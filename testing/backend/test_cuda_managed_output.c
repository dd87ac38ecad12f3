/*
 * test_cuda_managed_output.c: backend-allocated outputs as DLManagedTensors
 * (backend_cuda/cuda_managed_output.c) on CPU tensors of the shim: the
 * DLTensor describes the handle's memory (data, shape, row-major strides,
 * dtype, device); the deleter frees it from another thread, once; a
 * tensor that cannot cross the ABI fails naming the output and is still
 * freed. Leaks show under --config=asan.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend_cuda/cuda_managed_output.h"

static AtenTensorHandle cpu_tensor(int64_t ndim, const int64_t *sizes) {
  int64_t strides[64];
  int64_t step = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    strides[d] = step;
    step *= sizes[d] > 1 ? sizes[d] : 1;
  }
  AtenTensorHandle h = NULL;
  assert_int_equal(aoti_torch_empty_strided(ndim, sizes, strides,
                                            aoti_torch_dtype_float32(),
                                            aoti_torch_device_type_cpu(), 0,
                                            &h),
                   AOTI_TORCH_SUCCESS);
  return h;
}

/* The owner's release (the method's stream reference in the backend). */
static int g_releases;
static void count_release(void *ctx) { (*(int *)ctx)++; }

static void *delete_on_thread(void *arg) {
  DLManagedTensor *mt = arg;
  mt->deleter(mt);
  return NULL;
}

static void test_describes_and_deletes_on_another_thread(void **state) {
  (void)state;
  const int64_t sizes[2] = {2, 3};
  AtenTensorHandle h = cpu_tensor(2, sizes);
  void *data = NULL;
  assert_int_equal(aoti_torch_get_data_ptr(h, &data), AOTI_TORCH_SUCCESS);
  for (int i = 0; i < 6; i++) ((float *)data)[i] = (float)i + 0.5f;
  long before = aotrun_cuda_managed_outputs_alive();
  g_releases = 0;
  aotrun_managed_owner owner = {NULL, count_release, &g_releases};
  DLManagedTensor *mt = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(
      aotrun_cuda_managed_output(h, "output 0", &owner, &mt, &err),
      AOTRUN_OK);
  assert_int_equal(g_releases, 0); /* held until the deleter */
  assert_non_null(mt);
  assert_non_null(mt->deleter);
  assert_int_equal(aotrun_cuda_managed_outputs_alive(), before + 1);
  const DLTensor *t = &mt->dl_tensor;
  assert_ptr_equal(t->data, data);
  assert_int_equal(t->byte_offset, 0);
  assert_int_equal(t->ndim, 2);
  assert_int_equal(t->shape[0], 2);
  assert_int_equal(t->shape[1], 3);
  assert_int_equal(t->strides[0], 3);
  assert_int_equal(t->strides[1], 1);
  assert_int_equal(t->dtype.code, kDLFloat);
  assert_int_equal(t->dtype.bits, 32);
  assert_int_equal(t->dtype.lanes, 1);
  assert_int_equal(t->device.device_type, kDLCPU);
  assert_true(aotrun_strides_are_row_major(t->ndim, t->shape, t->strides));
  assert_true(((const float *)t->data)[5] == 5.5f);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, delete_on_thread, mt), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(aotrun_cuda_managed_outputs_alive(), before);
  assert_int_equal(g_releases, 1); /* the owner released once, after */
}

/* nonzero with no match: a [0, 1] tensor, no memory. */
static void test_empty_tensor(void **state) {
  (void)state;
  const int64_t sizes[2] = {0, 1};
  DLManagedTensor *mt = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_managed_output(cpu_tensor(2, sizes),
                                              "output 2", NULL, &mt, &err),
                   AOTRUN_OK);
  assert_int_equal(mt->dl_tensor.ndim, 2);
  assert_int_equal(mt->dl_tensor.shape[0], 0);
  assert_int_equal(mt->dl_tensor.shape[1], 1);
  mt->deleter(mt);
}

/* More dims than the ABI carries: refused naming the output, the handle
 * freed (no leak under ASan), nothing alive. */
static void test_too_many_dims_fails_cleanly(void **state) {
  (void)state;
  int64_t sizes[AOTRUN_MAX_DIMS + 1];
  for (int d = 0; d <= AOTRUN_MAX_DIMS; d++) sizes[d] = 1;
  long before = aotrun_cuda_managed_outputs_alive();
  g_releases = 0;
  aotrun_managed_owner owner = {NULL, count_release, &g_releases};
  DLManagedTensor *mt = (DLManagedTensor *)0x1;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_managed_output(cpu_tensor(AOTRUN_MAX_DIMS + 1,
                                                         sizes),
                                              "output 3 (y)", &owner, &mt,
                                              &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_null(mt);
  assert_non_null(strstr(err.message, "output 3 (y): 17 dims"));
  assert_int_equal(aotrun_cuda_managed_outputs_alive(), before);
  assert_int_equal(g_releases, 1); /* released at once on failure */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_describes_and_deletes_on_another_thread),
      cmocka_unit_test(test_empty_tensor),
      cmocka_unit_test(test_too_many_dims_fails_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
