/*
 * test_cuda_execute_args.c: how the CUDA backend reads execute_ex's
 * aotrun_execute_args (backend_cuda/cuda_execute_args.c), on the CPU:
 * NULL args, a struct_size below the required members, a struct_size that
 * ends before stream / managed_outputs / the out members (those are then
 * neither read nor written), unknown flags, AOTRUN_EXECUTE_ASYNC with
 * outputs in pageable host memory, and the too-small report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend_cuda/cuda_execute_args.h"

static int64_t g_shape[2][2] = {{4, 3}, {1, 1}};
static DLTensor g_in[1], g_out[2];
static float g_buf[16];

static void full_args(aotrun_execute_args *a) {
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  g_in[0] = (DLTensor){g_buf, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, g_shape[0],
                       NULL, 0};
  for (int i = 0; i < 2; i++)
    g_out[i] = (DLTensor){g_buf, {kDLCUDA, 0}, 2, {kDLFloat, 32, 1},
                          g_shape[i], NULL, 0};
  a->inputs = g_in;
  a->num_inputs = 1;
  a->outputs = g_out;
  a->num_outputs = 2;
}

static void test_null_and_too_small_struct(void **state) {
  (void)state;
  aotrun_cuda_call_args c;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_execute_args_read(NULL, &c, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "execute_ex: args is NULL");
  aotrun_execute_args a;
  full_args(&a);
  a.struct_size = 8;
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "args->struct_size is 8"));
  assert_non_null(strstr(err.message, "up to num_outputs"));
}

/* A struct that ends at num_outputs: stream and managed_outputs hold
 * garbage past it and must not be read; the out members not written. */
static void test_short_struct_reads_only_its_members(void **state) {
  (void)state;
  aotrun_execute_args a;
  full_args(&a);
  DLManagedTensor *managed[2] = {(DLManagedTensor *)0x1, NULL};
  a.stream = (void *)0x1234;
  a.managed_outputs = managed;
  a.too_small_output = 77;
  a.needed_ndim = 5;
  a.struct_size = (uint32_t)AOTRUN_EXECUTE_ARGS_MIN_SIZE;
  aotrun_cuda_call_args c;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
  assert_null(c.stream);
  assert_null(c.managed);
  assert_ptr_equal(c.outputs, g_out);
  assert_int_equal(c.num_outputs, 2);
  assert_ptr_equal(managed[0], (DLManagedTensor *)0x1);
  assert_int_equal(a.too_small_output, 77);
  assert_int_equal(a.needed_ndim, 5);
  /* Up to stream: the stream is read, managed_outputs still not. */
  a.struct_size = (uint32_t)AOTRUN_MEMBER_END(aotrun_execute_args, stream);
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
  assert_ptr_equal(c.stream, (void *)0x1234);
  assert_null(c.managed);
  assert_ptr_equal(managed[0], (DLManagedTensor *)0x1);
}

static void test_full_struct_resets_answers(void **state) {
  (void)state;
  aotrun_execute_args a;
  full_args(&a);
  DLManagedTensor *managed[2] = {(DLManagedTensor *)0x1,
                                 (DLManagedTensor *)0x2};
  a.managed_outputs = managed;
  a.too_small_output = 77;
  a.needed_ndim = 5;
  aotrun_cuda_call_args c;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
  assert_ptr_equal(c.managed, managed);
  assert_null(managed[0]);
  assert_null(managed[1]);
  assert_int_equal(a.too_small_output, -1);
  assert_int_equal(a.needed_ndim, 0);
}

static void test_unknown_flags_and_null_arrays(void **state) {
  (void)state;
  aotrun_execute_args a;
  full_args(&a);
  a.flags = AOTRUN_EXECUTE_ASYNC | 0x10u;
  aotrun_cuda_call_args c;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "execute_ex: unknown flags 0x10 (this backend knows "
                      "0x1)");
  full_args(&a);
  a.outputs = NULL;
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "the outputs array is NULL"));
}

/* ASYNC cannot fill pageable host memory after returning: refused, naming
 * the output; pinned memory and backend-allocated outputs are fine. */
static void test_async_host_outputs(void **state) {
  (void)state;
  aotrun_execute_args a;
  full_args(&a);
  a.flags = AOTRUN_EXECUTE_ASYNC;
  g_out[1].device = (DLDevice){kDLCPU, 0};
  aotrun_cuda_call_args c;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "output 1 is in pageable host memory"));
  /* The same call without the flag is fine. */
  a.flags = 0;
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
  a.flags = AOTRUN_EXECUTE_ASYNC;
  g_out[1].device = (DLDevice){kDLCUDAHost, 0};
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
  /* A kDLCPU output the backend allocates (data NULL, managed) is fine. */
  DLManagedTensor *managed[2] = {NULL, NULL};
  g_out[1].device = (DLDevice){kDLCPU, 0};
  g_out[1].data = NULL;
  a.managed_outputs = managed;
  assert_int_equal(aotrun_cuda_execute_args_read(&a, &c, &err), AOTRUN_OK);
}

static void test_too_small_report(void **state) {
  (void)state;
  aotrun_execute_args a;
  full_args(&a);
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.too_small = 1;
  call.needed_ndim = 2;
  call.needed_shape[0] = 9;
  call.needed_shape[1] = 3;
  aotrun_cuda_execute_args_report(&a, &call);
  assert_int_equal(a.too_small_output, 1);
  assert_int_equal(a.needed_ndim, 2);
  assert_int_equal(a.needed_shape[0], 9);
  assert_int_equal(a.needed_shape[1], 3);
  /* A struct that ends before needed_shape gets the rest only. */
  full_args(&a);
  a.needed_shape[0] = -7;
  a.struct_size = (uint32_t)AOTRUN_MEMBER_END(aotrun_execute_args,
                                               needed_ndim);
  aotrun_cuda_execute_args_report(&a, &call);
  assert_int_equal(a.too_small_output, 1);
  assert_int_equal(a.needed_ndim, 2);
  assert_int_equal(a.needed_shape[0], -7);
  /* Nothing too small: nothing written. */
  full_args(&a);
  a.too_small_output = 55;
  call.too_small = -1;
  aotrun_cuda_execute_args_report(&a, &call);
  assert_int_equal(a.too_small_output, 55);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_and_too_small_struct),
      cmocka_unit_test(test_short_struct_reads_only_its_members),
      cmocka_unit_test(test_full_struct_resets_answers),
      cmocka_unit_test(test_unknown_flags_and_null_arrays),
      cmocka_unit_test(test_async_host_outputs),
      cmocka_unit_test(test_too_small_report),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
