/*
 * test_method_load.c: the load-time checks of a method on a GPU device
 * (aot_loader/method_load.c) with fake device ops, so they run on the CPU:
 * free device memory against the new device copies of the weights (each
 * FQN once, copies already in the weight cache not counted), the message
 * naming the method, both sizes and the device; the GPU's compute
 * capability handed to the portability check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/method_runner_internal.h"

static uint64_t g_free;
static int g_free_calls;
static int g_fail;

static aotrun_status fake_free(void *ctx, int32_t device, uint64_t *free_bytes,
                               aotrun_error *err) {
  (void)ctx;
  g_free_calls++;
  if (g_fail)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaMemGetInfo on cuda:%d failed: injected",
                            (int)device);
  *free_bytes = g_free;
  return AOTRUN_OK;
}

static aotrun_status fake_cc(void *ctx, int32_t device, uint32_t *arch,
                             aotrun_error *err) {
  (void)ctx;
  (void)err;
  *arch = device == 2 ? 86 : 90;
  return AOTRUN_OK;
}

/* Constants: w (cuda, 1000 B) twice under one FQN (tied weights), b (cuda,
 * 24 B), s (cpu, 64 B). */
static aotrun_program_constant g_constants[4];
static aotrun_program_method g_pm;

static void make_method(void) {
  const struct {
    const char *name, *fqn;
    int32_t device;
    uint64_t nbytes;
  } c[4] = {{"w", "lin.weight", AOTRUN_DEVICE_TYPE_CUDA, 1000},
            {"w_tied", "lin.weight", AOTRUN_DEVICE_TYPE_CUDA, 1000},
            {"b", "lin.bias", AOTRUN_DEVICE_TYPE_CUDA, 24},
            {"s", "scale", AOTRUN_DEVICE_TYPE_CPU, 64}};
  memset(g_constants, 0, sizeof g_constants);
  for (int i = 0; i < 4; i++) {
    g_constants[i].name = (char *)c[i].name;
    g_constants[i].fqn = (char *)c[i].fqn;
    g_constants[i].device_type = c[i].device;
    g_constants[i].dtype = 0; /* uint8: ndim 0 is enough here */
    g_constants[i].nbytes = c[i].nbytes;
  }
  memset(&g_pm, 0, sizeof g_pm);
  g_pm.name = (char *)"forward";
  g_pm.library = (char *)"forward.so";
  g_pm.num_constants = 4;
  g_pm.constants = g_constants;
}

static void make_runner(aotrun_method_runner *r, DLDevice device) {
  memset(r, 0, sizeof *r);
  make_method();
  r->method = (char *)"forward";
  r->device = device;
  r->pm = &g_pm;
  r->ops.free_memory = fake_free;
  r->ops.compute_capability = fake_cc;
  aotrun_load_report_init(&r->report);
  g_free_calls = 0;
  g_fail = 0;
}

static aotrun_weight_cache *host_cache(void) {
  aotrun_weight_cache *cache = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_weight_cache_create(aotrun_host_device_ops(), NULL,
                                              NULL, NULL, &cache, &err),
                   AOTRUN_OK);
  return cache;
}

static void test_enough_memory(void **state) {
  (void)state;
  aotrun_method_runner r;
  make_runner(&r, (DLDevice){kDLCUDA, 2});
  aotrun_weight_cache *cache = host_cache();
  aotrun_error err;
  g_free = 1024; /* exactly the need: lin.weight once + lin.bias */
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_OK);
  assert_int_equal(g_free_calls, 1);
  assert_int_equal(r.report.device_free_bytes, 1024);
  assert_int_equal(r.report.shared_bytes, 0);
  aotrun_weight_cache_destroy(cache);
}

static void test_not_enough_memory_fails_early(void **state) {
  (void)state;
  aotrun_method_runner r;
  make_runner(&r, (DLDevice){kDLCUDA, 2});
  aotrun_weight_cache *cache = host_cache();
  aotrun_error err;
  g_free = 1023;
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_ERR_OUT_OF_MEMORY);
  assert_string_equal(err.message,
                      "method forward needs 1024 bytes of device memory for "
                      "its weights, 1023 free on cuda:2");
  g_fail = 1;
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_string_equal(err.message, "method forward: cudaMemGetInfo on "
                                   "cuda:2 failed: injected");
  aotrun_weight_cache_destroy(cache);
}

/* Copies another method already made are not needed again. */
static void test_shared_copies_not_counted(void **state) {
  (void)state;
  aotrun_method_runner r;
  make_runner(&r, (DLDevice){kDLCUDA, 0});
  aotrun_weight_cache *cache = host_cache();
  static unsigned char bytes[1024];
  aotrun_weight_request req = {"lin.weight", AOTRUN_DEVICE_TYPE_CUDA, 0, 0,
                               NULL, NULL, 0, 1000};
  void *data = NULL;
  aotrun_weight_ref *ref = NULL;
  aotrun_error err;
  assert_int_equal(
      aotrun_weight_cache_acquire(cache, &req, bytes, &data, &ref, &err),
      AOTRUN_OK);
  assert_int_equal(aotrun_weight_cache_bytes_allocated(
                       cache, AOTRUN_DEVICE_TYPE_CUDA),
                   1000);
  g_free = 24;
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_OK);
  assert_int_equal(r.report.shared_bytes, 1000); /* the FQN once */
  /* Nothing new on the device: the GPU is not even asked. */
  req.fqn = "lin.bias";
  req.nbytes = 24;
  aotrun_weight_ref *ref2 = NULL;
  assert_int_equal(
      aotrun_weight_cache_acquire(cache, &req, bytes, &data, &ref2, &err),
      AOTRUN_OK);
  g_free_calls = 0;
  g_free = 0;
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_OK);
  assert_int_equal(g_free_calls, 0);
  aotrun_weight_cache_release(cache, ref);
  aotrun_weight_cache_release(cache, ref2);
  assert_int_equal(aotrun_weight_cache_bytes_allocated(
                       cache, AOTRUN_DEVICE_TYPE_CUDA),
                   1024); /* only grows */
  aotrun_weight_cache_destroy(cache);
}

static void test_cpu_runner_asks_nothing(void **state) {
  (void)state;
  aotrun_method_runner r;
  make_runner(&r, (DLDevice){kDLCPU, 0});
  aotrun_weight_cache *cache = host_cache();
  aotrun_error err;
  g_free = 0;
  assert_int_equal(aotrun_runner_check_weight_memory(&r, cache, &err),
                   AOTRUN_OK);
  assert_int_equal(g_free_calls, 0);
  uint32_t arch = 1;
  assert_int_equal(aotrun_runner_gpu_arch(&r, &arch, &err), AOTRUN_OK);
  assert_int_equal(arch, 0);
  aotrun_weight_cache_destroy(cache);
}

static void test_gpu_arch_from_the_ops(void **state) {
  (void)state;
  aotrun_method_runner r;
  make_runner(&r, (DLDevice){kDLCUDA, 2});
  uint32_t arch = 0;
  aotrun_error err;
  assert_int_equal(aotrun_runner_gpu_arch(&r, &arch, &err), AOTRUN_OK);
  assert_int_equal(arch, 86);
  r.ops.compute_capability = NULL; /* a backend that cannot tell */
  assert_int_equal(aotrun_runner_gpu_arch(&r, &arch, &err), AOTRUN_OK);
  assert_int_equal(arch, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_enough_memory),
      cmocka_unit_test(test_not_enough_memory_fails_early),
      cmocka_unit_test(test_shared_copies_not_counted),
      cmocka_unit_test(test_cpu_runner_asks_nothing),
      cmocka_unit_test(test_gpu_arch_from_the_ops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
