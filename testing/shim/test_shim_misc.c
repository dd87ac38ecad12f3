/* Errors, warnings, grad mode, printing, the aborting check, the proxy
 * executor refusal, and CUDA entry points failing cleanly without a GPU. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

/* Runs fn with stderr redirected to a temp file; returns what it printed. */
static char *capture_stderr(void (*fn)(void *), void *arg) {
  static char out[4096];
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(out, 1, sizeof out - 1, tmp);
  out[n] = '\0';
  fclose(tmp);
  return out;
}

static void do_warn(void *arg) {
  (void)arg;
  aoti_torch_warn("forward", "model.cpp", 42, "something odd");
}

static void test_warn(void **state) {
  (void)state;
  assert_string_equal(capture_stderr(do_warn, NULL),
                      "aotrun warning [model.cpp:42]: something odd\n");
}

static void do_print(void *arg) { aoti_torch_print_tensor_handle(arg, "buf0"); }

static void test_print_tensor(void **state) {
  (void)state;
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t sizes[] = {2, 2}, strides[] = {1, 2};
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_create_tensor_from_blob(data, 2, sizes, strides, 1, 6, 0, 0, &t));
  assert_string_equal(capture_stderr(do_print, t),
                      "aotrun: buf0: dtype=float32 device=cpu:0 sizes=[2, 2] "
                      "strides=[1, 2] storage_offset=1 values=[1, 3, 2, 4]\n");
  aoti_torch_delete_tensor_object(t);
  assert_string_equal(capture_stderr(do_print, NULL), "aotrun: buf0: NULL tensor\n");
}

static void *fail_in_thread(void *arg) {
  (void)arg;
  aotrun_shim_fail("from another thread");
  return NULL;
}

static void test_errors_are_thread_local(void **state) {
  (void)state;
  aotrun_shim_fail("mine");
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fail_in_thread, NULL), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_string_equal(aotrun_shim_last_error(), "mine");
  aotrun_shim_clear_error();
  assert_string_equal(aotrun_shim_last_error(), "");
  assert_int_equal(aotrun_shim_fail("x %d", 5), AOTI_TORCH_FAILURE);
  assert_string_equal(aotrun_shim_last_error(), "x 5");
  aotrun_shim_clear_error();
  assert_string_equal(aotrun_shim_last_error(), "");
}

static void *grad_thread(void *arg) {
  (void)arg;
  /* A new thread starts with grad mode on regardless of others. */
  return (void *)(intptr_t)aoti_torch_grad_mode_is_enabled();
}

static void test_grad_mode(void **state) {
  (void)state;
  assert_true(aoti_torch_grad_mode_is_enabled());
  aoti_torch_grad_mode_set_enabled(0);
  assert_false(aoti_torch_grad_mode_is_enabled());
  pthread_t th;
  void *ret;
  assert_int_equal(pthread_create(&th, NULL, grad_thread, NULL), 0);
  assert_int_equal(pthread_join(th, &ret), 0);
  assert_true((intptr_t)ret);
  aoti_torch_grad_mode_set_enabled(1);
  assert_true(aoti_torch_grad_mode_is_enabled());
}

static void test_check_aborts_with_message(void **state) {
  (void)state;
  aoti_torch_check(1, "f", "x.cpp", 1, "never printed"); /* returns */
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    aoti_torch_check(0, "forward", "model.cpp", 7, "shape mismatch");
    _exit(0); /* not reached */
  }
  close(fds[1]);
  char buf[512];
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  buf[n > 0 ? n : 0] = '\0';
  int status;
  waitpid(pid, &status, 0);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGABRT);
  assert_non_null(strstr(buf, "model check failed in forward [model.cpp:7]: shape mismatch"));
  assert_non_null(strstr(buf, "aoti_torch_check cannot throw from C: aborting"));
}

static void test_proxy_executor_refuses(void **state) {
  (void)state;
  ASSERT_FAILS_WITH(aoti_torch_proxy_executor_call_function(NULL, 3, 0, NULL, 0, NULL),
                    "aoti_torch_proxy_executor_call_function: extern node 3 needs "
                    "libtorch's proxy executor");
}

static void test_current_stream_without_guard(void **state) {
  (void)state;
  void *s = (void *)1;
  ASSERT_OK(aoti_torch_get_current_cuda_stream(0, &s));
  assert_null(s); /* the legacy default stream */
  assert_null(aotrun_shim_current_stream());
  assert_int_equal(aotrun_shim_current_device(), 0);
  int32_t dev = -1;
  ASSERT_OK(aoti_torch_get_current_device_index(&dev));
  assert_int_equal(dev, 0);
  ASSERT_FAILS_WITH(aoti_torch_get_current_cuda_stream(64, &s),
                    "CUDA device index 64 is out of range [0, 64)");
  StreamHandle sh;
  int64_t id = 5;
  ASSERT_OK(aoti_torch_get_current_stream(-1, &sh));
  ASSERT_OK(aoti_torch_stream_id(sh, &id));
  assert_int_equal(id, 0);
  ASSERT_OK(aoti_torch_delete_stream(sh));
}

/* ---- CUDA without a GPU: every entry point fails with a message ---- */

static int have_gpu(void) {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define SKIP_IF_GPU()                                                     \
  if (have_gpu()) {                                                       \
    print_message("a GPU is present: the no-GPU checks do not apply\n"); \
    skip();                                                               \
  }

static void test_cuda_tensor_without_gpu(void **state) {
  (void)state;
  SKIP_IF_GPU();
  int64_t size = 4, one = 1;
  AtenTensorHandle t = (AtenTensorHandle)1;
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(1, &size, &one, 6, 1, 0, &t),
                    "aoti_torch_empty_strided: cannot allocate 16 bytes on "
                    "cuda:0: the device allocator: cudaGetDevice failed");
  assert_null(t);
  ASSERT_FAILS_WITH(aoti_torch_empty_strided_pinned(1, &size, &one, 6, 0, 0, &t),
                    "aoti_torch_empty_strided_pinned: cudaMallocHost failed");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided_pinned(1, &size, &one, 6, 1, 0, &t),
                    "pinned memory is host memory, got device type cuda");
  ASSERT_FAILS_WITH(aoti_torch_empty_strided(1, &size, &one, 6, 1, 70, &t),
                    "CUDA device index 70 is out of range");
  /* A CUDA-labelled blob can be described without CUDA... */
  float fake[4];
  ASSERT_OK(aoti_torch_create_tensor_from_blob(fake, 1, &size, &one, 0, 6, 1, 0, &t));
  /* ...but reading or copying it needs the device. */
  float f;
  int64_t s1 = 1;
  AtenTensorHandle e;
  ASSERT_OK(aoti_torch__reinterpret_tensor(t, 0, &s1, &one, 0, &e));
  ASSERT_FAILS_WITH(aoti_torch_item_float32(e, &f), "aoti_torch_item_float32");
  AtenTensorHandle host = test_cpu_tensor(6, 1, &size);
  ASSERT_FAILS_WITH(aoti_torch_copy_(host, t, 0), "aoti_torch_copy_");
  ASSERT_FAILS_WITH(aoti_torch_zero_(t), "aoti_torch_zero_: cudaGetDevice failed");
  aoti_torch_delete_tensor_object(e);
  ASSERT_FAILS_WITH(aoti_torch_clone(t, &e),
                    "aoti_torch_clone: aoti_torch_empty_strided: cannot "
                    "allocate 16 bytes on cuda:0: the device allocator: "
                    "cudaGetDevice failed");
  assert_null(e);
  aoti_torch_delete_tensor_object(t);
  aoti_torch_delete_tensor_object(host);
}

static void test_guards_without_gpu(void **state) {
  (void)state;
  SKIP_IF_GPU();
  CUDAStreamGuardHandle sg = (CUDAStreamGuardHandle)1;
  ASSERT_FAILS_WITH(aoti_torch_create_cuda_stream_guard(NULL, 0, &sg),
                    "aoti_torch_create_cuda_stream_guard: cudaGetDevice failed");
  assert_null(sg);
  CUDAGuardHandle g = (CUDAGuardHandle)1;
  ASSERT_FAILS_WITH(aoti_torch_create_cuda_guard(0, &g),
                    "aoti_torch_create_cuda_guard: cudaGetDevice failed");
  assert_null(g);
  ASSERT_FAILS_WITH(aoti_torch_delete_cuda_stream_guard(NULL), "guard is NULL");
  ASSERT_FAILS_WITH(aoti_torch_delete_cuda_guard(NULL), "guard is NULL");
  void *p = (void *)1;
  ASSERT_FAILS_WITH(aoti_torch_cuda_caching_allocator_raw_alloc(16, &p),
                    "aoti_torch_cuda_caching_allocator_raw_alloc: cudaGetDevice failed");
  assert_null(p);
  ASSERT_OK(aoti_torch_cuda_caching_allocator_raw_alloc(0, &p));
  ASSERT_OK(aoti_torch_cuda_caching_allocator_raw_delete(NULL));
  int x;
  ASSERT_FAILS_WITH(aoti_torch_cuda_caching_allocator_raw_delete(&x),
                    "did not come from raw_alloc");
  ASSERT_FAILS_WITH(aotrun_shim_refuse_if_capturing("aoti_torch_item_bool"),
                    "aoti_torch_item_bool: cannot check for a CUDA graph capture");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_warn),
      cmocka_unit_test(test_print_tensor),
      cmocka_unit_test(test_errors_are_thread_local),
      cmocka_unit_test(test_grad_mode),
      cmocka_unit_test(test_check_aborts_with_message),
      cmocka_unit_test(test_proxy_executor_refuses),
      cmocka_unit_test(test_current_stream_without_guard),
      cmocka_unit_test(test_cuda_tensor_without_gpu),
      cmocka_unit_test(test_guards_without_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
