/*
 * test_cuda_device_scope.c: the CUDA backend's device scope
 * (backend_cuda/cuda_device_scope.c), which every entry point that works on
 * a method's device goes through, over a fake CUDA runtime of 2 devices
 * (cudaGetDevice / cudaSetDevice wrapped at link time: BUILD's --wrap,
 * static link), so the "current device given back" rule of ABI 1.1 is
 * checked with a second device on a machine without any (issue 17):
 * entering another device switches and leaving switches back; entering the
 * current device calls no cudaSetDevice; a failed switch names the device
 * and leaves the thread's device as it was; a failed cudaGetDevice still
 * switches and then does not "restore" a device it never read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "backend_cuda/cuda_device_scope.h"

/* ---- the fake runtime: 2 devices, a current one, call counts ---- */
static struct {
  int current;
  int sets, gets;
  int fail_get;       /* cudaGetDevice fails */
  int fail_set_to;    /* cudaSetDevice(this) fails; -1: none */
  int pending_error;  /* what cudaGetLastError clears */
} F;

static void reset(int current) {
  memset(&F, 0, sizeof F);
  F.current = current;
  F.fail_set_to = -1;
}

cudaError_t __wrap_cudaGetDevice(int *device);
cudaError_t __wrap_cudaGetDevice(int *device) {
  F.gets++;
  if (F.fail_get) {
    F.pending_error = 1;
    return cudaErrorNoDevice;
  }
  *device = F.current;
  return cudaSuccess;
}

cudaError_t __wrap_cudaSetDevice(int device);
cudaError_t __wrap_cudaSetDevice(int device) {
  F.sets++;
  if (device < 0 || device >= 2 || device == F.fail_set_to) {
    F.pending_error = 1;
    return cudaErrorInvalidDevice;
  }
  F.current = device;
  return cudaSuccess;
}

cudaError_t __wrap_cudaGetLastError(void);
cudaError_t __wrap_cudaGetLastError(void) {
  cudaError_t e = F.pending_error ? cudaErrorInvalidDevice : cudaSuccess;
  F.pending_error = 0;
  return e;
}

const char *__wrap_cudaGetErrorString(cudaError_t e);
const char *__wrap_cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorInvalidDevice ? "invalid device ordinal" : "fake error";
}

/* ---- tests ---- */

static void test_other_device_is_entered_and_given_back(void **state) {
  (void)state;
  reset(0);
  aotrun_cuda_device_scope s;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_device_enter(1, &s, &err), AOTRUN_OK);
  assert_int_equal(F.current, 1);
  aotrun_cuda_device_leave(&s);
  assert_int_equal(F.current, 0);
  assert_int_equal(F.sets, 2);
  /* A second leave does nothing. */
  aotrun_cuda_device_leave(&s);
  assert_int_equal(F.sets, 2);
  assert_int_equal(F.current, 0);
}

static void test_current_device_costs_no_switch(void **state) {
  (void)state;
  reset(1);
  aotrun_cuda_device_scope s;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_device_enter(1, &s, &err), AOTRUN_OK);
  aotrun_cuda_device_leave(&s);
  assert_int_equal(F.sets, 0);
  assert_int_equal(F.gets, 1);
  assert_int_equal(F.current, 1);
}

static void test_failed_switch_names_the_device(void **state) {
  (void)state;
  reset(0);
  F.fail_set_to = 1;
  aotrun_cuda_device_scope s;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_device_enter(1, &s, &err),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(err.message, "cudaSetDevice(1) failed"));
  assert_non_null(strstr(err.message, "invalid device ordinal"));
  assert_int_equal(F.pending_error, 0); /* the sticky error is cleared */
  aotrun_cuda_device_leave(&s);         /* after a failed enter: no-op */
  assert_int_equal(F.current, 0);
  assert_int_equal(F.sets, 1);
}

static void test_unreadable_current_device(void **state) {
  (void)state;
  reset(0);
  F.fail_get = 1;
  aotrun_cuda_device_scope s;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_device_enter(1, &s, &err), AOTRUN_OK);
  assert_int_equal(F.current, 1);
  assert_int_equal(F.pending_error, 0);
  aotrun_cuda_device_leave(&s);
  /* The previous device was never read: leave goes back to what enter
   * assumed (device 0, the runtime's default for a fresh thread). */
  assert_int_equal(F.current, 0);
}

static void test_nested_scopes_unwind(void **state) {
  (void)state;
  reset(0);
  aotrun_cuda_device_scope outer, inner;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_device_enter(1, &outer, &err), AOTRUN_OK);
  assert_int_equal(aotrun_cuda_device_enter(0, &inner, &err), AOTRUN_OK);
  assert_int_equal(F.current, 0);
  aotrun_cuda_device_leave(&inner);
  assert_int_equal(F.current, 1);
  aotrun_cuda_device_leave(&outer);
  assert_int_equal(F.current, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_other_device_is_entered_and_given_back),
      cmocka_unit_test(test_current_device_costs_no_switch),
      cmocka_unit_test(test_failed_switch_names_the_device),
      cmocka_unit_test(test_unreadable_current_device),
      cmocka_unit_test(test_nested_scopes_unwind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
