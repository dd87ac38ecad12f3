/* test_random_args.c: the random ops' argument checks (each error names the
 * op, the argument and the value), the seed source (getrandom, AOTRUN_SEED
 * parsing, a fixed seed) and the seeding-failure seam. Runs without a GPU:
 * the "CUDA" tensors are never-owning blobs over host memory that is never
 * touched, since every check runs before any CUDA call. The parts that need
 * a GPU (a seeding that reaches the copy, a successful retry) say so and
 * are skipped without one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/random_args.h"
#include "shim_lib/fallback/random_state.h"
#include "testing/fallback/fake_tensor.h"

enum {
  U8 = 0, I8 = 1, I32 = 3, I64 = 4, F16 = 5, F32 = 6, F64 = 7, C64 = 9,
  BOOL = 11, BF16 = 15, CPU = 0, CUDA = 1
};

static int gpu_present(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n > 0;
}

/* ---- stderr capture (the seeding failure's log line) ---- */

static char g_log_path[64];
static int g_saved_stderr = -1;

static void capture_stderr(void) {
  snprintf(g_log_path, sizeof g_log_path, "/tmp/test_random_args.%d.log",
           (int)getpid());
  fflush(stderr);
  g_saved_stderr = dup(2);
  assert_non_null(freopen(g_log_path, "w", stderr));
}

/* Restores stderr; returns what was written (static buffer). */
static const char *captured_stderr(void) {
  static char text[4096];
  fflush(stderr);
  dup2(g_saved_stderr, 2);
  close(g_saved_stderr);
  g_saved_stderr = -1;
  FILE *f = fopen(g_log_path, "r");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  unlink(g_log_path);
  fprintf(stderr, "%s", text); /* keep it in the test log */
  return text;
}

/* ---- the seam (first: no device may be seeded yet in this process) ---- */

static void test_seed_failure_seam(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  expect_fail(aotrun_shim_random_fail_next_seed(7),
              "aotrun_shim_random_fail_next_seed: step 7 is not 0 (none), 1 "
              "(the seed source) or 2");
  assert_int_equal(unsetenv("AOTRUN_SEED"), 0);
  assert_int_equal(aotrun_shim_random_fail_next_seed(1), AOTI_TORCH_SUCCESS);
  capture_stderr();
  AOTITorchError err = aoti_torch_cuda_rand(size, 1, NULL, NULL, NULL, -1,
                                            NULL, &r);
  const char *log = captured_stderr();
  expect_fail(err,
              "aoti_torch_cuda_rand: cannot seed the random generator of "
              "cuda:0: the seed source failed: injected by "
              "aotrun_shim_random_fail_next_seed");
  assert_null(r);
  if (strstr(log, "aotrun error: seeding the random generator of cuda:0 "
                  "failed (the next random op tries again): "
                  "aoti_torch_cuda_rand: cannot seed") == NULL)
    fail_msg("log \"%s\" lacks the seeding error", log);

  const int gpu = gpu_present();
  if (gpu) {
    /* The copy to the GPU fails once: logged, freed, retried. */
    assert_int_equal(aotrun_shim_random_fail_next_seed(2),
                     AOTI_TORCH_SUCCESS);
    capture_stderr();
    err = aoti_torch_cuda_randn(size, 1, NULL, NULL, NULL, -1, NULL, &r);
    log = captured_stderr();
    expect_fail(err,
                "aoti_torch_cuda_randn: copying the random generator state to "
                "cuda:0 failed: injected by aotrun_shim_random_fail_next_seed");
    assert_non_null(strstr(log, "aotrun error: seeding the random generator "
                                "of cuda:0 failed"));
  }
  /* The seam fired once: the next call seeds again (and succeeds with a
   * GPU; without one it fails at CUDA, not at the seam). */
  err = aoti_torch_cuda_rand(size, 1, NULL, NULL, NULL, -1, NULL, &r);
  if (gpu) {
    assert_int_equal(err, AOTI_TORCH_SUCCESS);
    assert_non_null(r);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    aoti_torch_delete_tensor_object(r);
  } else {
    assert_int_equal(err, AOTI_TORCH_FAILURE);
    assert_null(strstr(aotrun_shim_last_error(), "injected"));
    print_message("no GPU: the copy step of the seam and the successful "
                  "retry are not exercised (%s)\n",
                  aotrun_shim_last_error());
  }
}

/* ---- seed source ---- */

static void test_os_seed_differs(void **state) {
  (void)state;
  uint64_t a = 0, b = 0;
  assert_int_equal(aotrun_fb_random_os_seed("t", &a), AOTI_TORCH_SUCCESS);
  assert_int_equal(aotrun_fb_random_os_seed("t", &b), AOTI_TORCH_SUCCESS);
  /* Equal with probability 2^-64. */
  assert_true(a != b);
}

static void test_parse_seed(void **state) {
  (void)state;
  uint64_t s = 1;
  assert_int_equal(aotrun_fb_random_parse_seed("op", "0", &s), 0);
  assert_true(s == 0);
  assert_int_equal(
      aotrun_fb_random_parse_seed("op", "18446744073709551615", &s), 0);
  assert_true(s == UINT64_MAX);
  assert_int_equal(aotrun_fb_random_parse_seed("op", "0xFFff", &s), 0);
  assert_true(s == 0xffff);
  assert_int_equal(aotrun_fb_random_parse_seed("op", "1234567", &s), 0);
  assert_true(s == 1234567);
  const char *bad[] = {"",   "-1",  " 1", "1 ", "12x", "18446744073709551616",
                       "0x", "+5",  "0x-1", "0x0x1", "1e3", "0x10000000000000000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char want[128];
    snprintf(want, sizeof want,
             "op: AOTRUN_SEED='%s' is not an unsigned 64-bit integer", bad[i]);
    expect_fail(aotrun_fb_random_parse_seed("op", bad[i], &s), want);
  }
}

static void test_pick_seed(void **state) {
  (void)state;
  uint64_t s = 0;
  const char *src = NULL;
  assert_int_equal(setenv("AOTRUN_SEED", "42", 1), 0);
  assert_int_equal(aotrun_fb_random_pick_seed("op", 1, 7, &s, &src), 0);
  assert_true(s == 7);
  assert_string_equal(src, "aotrun_shim_random_set_seed");
  assert_int_equal(aotrun_fb_random_pick_seed("op", 0, 7, &s, &src), 0);
  assert_true(s == 42);
  assert_string_equal(src, "AOTRUN_SEED");
  assert_int_equal(setenv("AOTRUN_SEED", "forty-two", 1), 0);
  expect_fail(aotrun_fb_random_pick_seed("aoti_torch_cuda_rand", 0, 0, &s,
                                         &src),
              "aoti_torch_cuda_rand: AOTRUN_SEED='forty-two' is not an "
              "unsigned 64-bit integer");
  assert_int_equal(unsetenv("AOTRUN_SEED"), 0);
  uint64_t s2 = 0;
  assert_int_equal(aotrun_fb_random_pick_seed("op", 0, 0, &s, &src), 0);
  assert_string_equal(src, "getrandom");
  assert_int_equal(aotrun_fb_random_pick_seed("op", 0, 0, &s2, &src), 0);
  assert_true(s != s2);
}

/* A bad AOTRUN_SEED fails the op that seeds (before any CUDA call). */
static void test_bad_env_seed_fails_the_op(void **state) {
  (void)state;
  if (gpu_present()) {
    print_message("skipped: cuda:0 is seeded by now in this process, so the "
                  "op does not read AOTRUN_SEED again (the GPU test "
                  "test_random.py covers it in a fresh process)\n");
    skip();
  }
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  assert_int_equal(setenv("AOTRUN_SEED", "0x", 1), 0);
  AOTITorchError err =
      aoti_torch_cuda_rand(size, 1, NULL, NULL, NULL, -1, NULL, &r);
  assert_int_equal(unsetenv("AOTRUN_SEED"), 0);
  expect_fail(err, "aoti_torch_cuda_rand: AOTRUN_SEED='0x' is not an "
                   "unsigned 64-bit integer");
}

static void test_set_seed_without_seeded_devices(void **state) {
  (void)state;
  /* Nothing seeded (no GPU): only recorded; with a GPU cuda:0 is rewritten. */
  assert_int_equal(aotrun_shim_random_set_seed(1234), AOTI_TORCH_SUCCESS);
  uint64_t s = 0;
  const char *src = NULL;
  assert_int_equal(aotrun_fb_random_pick_seed("op", 1, 1234, &s, &src), 0);
  assert_true(s == 1234);
}

/* ---- generator ---- */

static void test_generator_refused(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenGeneratorHandle gen = (AtenGeneratorHandle)(uintptr_t)0x1234;
  AtenGeneratorHandle none = NULL;
  AtenTensorHandle r = NULL;
  AtenTensorHandle x = fake(F32, CUDA, 1, size);
  expect_fail(aoti_torch_cuda_rand_generator(size, 1, &gen, NULL, NULL, NULL,
                                             -1, NULL, &r),
              "aoti_torch_cuda_rand_generator: 'generator' is a torch "
              "Generator (0x1234), which aotrun cannot honour");
  expect_fail(aoti_torch_cuda_randn_generator(size, 1, &gen, NULL, NULL, NULL,
                                              -1, NULL, &r),
              "aoti_torch_cuda_randn_generator: 'generator' is a torch "
              "Generator");
  expect_fail(aoti_torch_cuda_randint_generator(5, size, 1, &gen, NULL, NULL,
                                                NULL, -1, NULL, &r),
              "aoti_torch_cuda_randint_generator: 'generator' is a torch "
              "Generator");
  expect_fail(aoti_torch_cuda_uniform(x, 0, 1, &gen, &r),
              "aoti_torch_cuda_uniform: 'generator' is a torch Generator");
  expect_fail(aoti_torch_cuda_normal_functional(x, 0, 1, &gen, &r),
              "aoti_torch_cuda_normal_functional: 'generator' is a torch "
              "Generator");
  expect_fail(aoti_torch_cuda_bernoulli__float(x, 0.5, &gen),
              "aoti_torch_cuda_bernoulli__float: 'generator' is a torch "
              "Generator");
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(x, x, &gen),
              "aoti_torch_cuda_bernoulli__Tensor: 'generator' is a torch "
              "Generator");
  assert_null(r);
  /* A pointer to a NULL handle is None: the next check speaks. */
  int32_t i64 = I64;
  expect_fail(aoti_torch_cuda_rand_generator(size, 1, &none, &i64, NULL, NULL,
                                             -1, NULL, &r),
              "aoti_torch_cuda_rand_generator: 'dtype' is int64");
  aoti_torch_delete_tensor_object(x);
}

/* ---- options ---- */

static void test_bad_dtype(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  int32_t i64 = I64, c64 = C64, b = BOOL;
  expect_fail(aoti_torch_cuda_rand(size, 1, &i64, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_rand: 'dtype' is int64; expected float32, "
              "float64, float16 or bfloat16");
  expect_fail(aoti_torch_cuda_randn(size, 1, &b, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_randn: 'dtype' is bool");
  expect_fail(aoti_torch_cuda_randint(5, size, 1, &c64, NULL, NULL, -1, NULL,
                                      &r),
              "aoti_torch_cuda_randint: 'dtype' is complex64; expected a "
              "float dtype, bool");
  expect_fail(aoti_torch_cuda_randperm(5, &b, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_randperm: 'dtype' is bool");
  AtenTensorHandle xi = fake(I32, CUDA, 1, size), xc = fake(C64, CUDA, 1, size);
  AtenTensorHandle xf = fake(F32, CUDA, 1, size);
  expect_fail(aoti_torch_cuda_uniform(xi, 0, 1, NULL, &r),
              "aoti_torch_cuda_uniform: 'self' has dtype int32; expected "
              "float32");
  expect_fail(aoti_torch_cuda_normal_functional(xi, 0, 1, NULL, &r),
              "aoti_torch_cuda_normal_functional: 'self' has dtype int32");
  expect_fail(aoti_torch_cuda_bernoulli__float(xc, 0.5, NULL),
              "aoti_torch_cuda_bernoulli__float: 'self' has dtype complex64");
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(xf, xi, NULL),
              "aoti_torch_cuda_bernoulli__Tensor: 'p' has dtype int32; "
              "expected probabilities of a float dtype");
  expect_fail(aoti_torch_cuda_randint_low_out(xc, 0, 5, size, 1),
              "aoti_torch_cuda_randint_low_out: 'out' has dtype complex64");
  assert_null(r);
  aoti_torch_delete_tensor_object(xi);
  aoti_torch_delete_tensor_object(xc);
  aoti_torch_delete_tensor_object(xf);
}

static void test_bad_layout_device_pin(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  int32_t sparse = 1, cpu = CPU, cuda = CUDA, yes = 1, no = 0, strided0 = 0;
  expect_fail(aoti_torch_cuda_rand(size, 1, NULL, &sparse, NULL, -1, NULL, &r),
              "aoti_torch_cuda_rand: 'layout' is 1; only torch.strided (0) "
              "is supported");
  expect_fail(aoti_torch_cuda_randn(size, 1, NULL, &strided0, &cpu, 0, NULL,
                                    &r),
              "aoti_torch_cuda_randn: 'device' is device type 0 (cpu); this "
              "CUDA op makes CUDA tensors only");
  expect_fail(aoti_torch_cuda_randint_low(0, 3, size, 1, NULL, NULL, &cuda, 0,
                                          &yes, &r),
              "aoti_torch_cuda_randint_low: 'pin_memory' is true; only CPU "
              "tensors can be pinned");
  expect_fail(aoti_torch_cuda_randperm(5, NULL, NULL, &cuda, -2, &no, &r),
              "aoti_torch_cuda_randperm: 'device_index' is -2; expected -1");
  expect_fail(aoti_torch_cuda_rand(size, 1, NULL, NULL, NULL, -1, NULL, NULL),
              "aoti_torch_cuda_rand: the result pointer 'ret0' is NULL");
  AtenTensorHandle c = fake(F32, CPU, 1, size);
  expect_fail(aoti_torch_cuda_uniform(c, 0, 1, NULL, &r),
              "aoti_torch_cuda_uniform: 'self' is on device type 0 (cpu), "
              "expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_randint_low_out(c, 0, 3, size, 1),
              "aoti_torch_cuda_randint_low_out: 'out' is on device type 0 "
              "(cpu)");
  AtenTensorHandle g = fake(F32, CUDA, 1, size);
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(g, c, NULL),
              "aoti_torch_cuda_bernoulli__Tensor: 'p' is on device type 0 "
              "(cpu)");
  expect_fail(aoti_torch_cuda_randint_low_out(NULL, 0, 3, size, 1),
              "aoti_torch_cuda_randint_low_out: argument 'out' is NULL");
  assert_null(r);
  aoti_torch_delete_tensor_object(c);
  aoti_torch_delete_tensor_object(g);
}

static void test_bad_sizes(void **state) {
  (void)state;
  AtenTensorHandle r = NULL;
  const int64_t neg[2] = {2, -3};
  expect_fail(aoti_torch_cuda_rand(neg, 2, NULL, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_rand: 'size' has the negative size -3 in dim 1");
  expect_fail(aoti_torch_cuda_randn(NULL, 2, NULL, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_randn: 'size' is NULL with 2 dims");
  const int64_t many[17] = {1};
  expect_fail(aoti_torch_cuda_randint(3, many, 17, NULL, NULL, NULL, -1, NULL,
                                      &r),
              "aoti_torch_cuda_randint: 'size' has 17 dims; expected 0 to 16");
  const int64_t huge[2] = {INT64_MAX / 2, 3};
  expect_fail(aoti_torch_cuda_rand(huge, 2, NULL, NULL, NULL, -1, NULL, &r),
              "has more than 2^63 elements");
  assert_null(r);
}

/* ---- randint ---- */

static void test_randint_range(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  int32_t u8 = U8, i8 = I8, b = BOOL, f16 = F16;
  expect_fail(aoti_torch_cuda_randint_low(5, 5, size, 1, NULL, NULL, NULL, -1,
                                          NULL, &r),
              "aoti_torch_cuda_randint_low: 'low' = 5 must be less than "
              "'high' = 5");
  expect_fail(aoti_torch_cuda_randint(-2, size, 1, NULL, NULL, NULL, -1, NULL,
                                      &r),
              "aoti_torch_cuda_randint: 'low' = 0 must be less than 'high' = "
              "-2");
  expect_fail(aoti_torch_cuda_randint(257, size, 1, &u8, NULL, NULL, -1, NULL,
                                      &r),
              "aoti_torch_cuda_randint: 'high' - 1 = 256 is out of range for "
              "dtype uint8 [0, 255]");
  expect_fail(aoti_torch_cuda_randint_low(-129, 0, size, 1, &i8, NULL, NULL,
                                          -1, NULL, &r),
              "aoti_torch_cuda_randint_low: 'low' = -129 is out of range for "
              "dtype int8 [-128, 127]");
  expect_fail(aoti_torch_cuda_randint(3, size, 1, &b, NULL, NULL, -1, NULL,
                                      &r),
              "'high' - 1 = 2 is out of range for dtype bool [0, 1]");
  expect_fail(aoti_torch_cuda_randint(70000, size, 1, &f16, NULL, NULL, -1,
                                      NULL, &r),
              "'high' - 1 = 69999 is out of range for dtype float16 [-65504, "
              "65504]");
  assert_null(r);
  /* In range: inductor_seeds' full int64 range, uint8's whole range. */
  assert_int_equal(aotrun_fb_randint_check_range("op", INT64_MIN, INT64_MAX,
                                                 I64),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(aotrun_fb_randint_check_range("op", 0, 256, U8),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(aotrun_fb_randint_check_range("op", 0, 2, BOOL),
                   AOTI_TORCH_SUCCESS);
  assert_int_equal(aotrun_fb_randint_check_range("op", -5, INT64_MAX, 29),
                   AOTI_TORCH_FAILURE);
}

static void test_randint_low_out_size(void **state) {
  (void)state;
  const int64_t s34[2] = {3, 4}, s12[1] = {12}, s43[2] = {4, 3};
  AtenTensorHandle o = fake(I64, CUDA, 2, s34);
  expect_fail(aoti_torch_cuda_randint_low_out(o, 0, 10, s12, 1),
              "aoti_torch_cuda_randint_low_out: 'out' has size [3, 4] but "
              "'size' is [12]");
  expect_fail(aoti_torch_cuda_randint_low_out(o, 0, 10, s43, 2),
              "'out' has size [3, 4] but 'size' is [4, 3]");
  expect_fail(aoti_torch_cuda_randint_low_out(o, 10, 0, s34, 2),
              "aoti_torch_cuda_randint_low_out: 'low' = 10 must be less than "
              "'high' = 0");
  aoti_torch_delete_tensor_object(o);
  const int64_t s4[1] = {4};
  AtenTensorHandle o8 = fake(U8, CUDA, 1, s4);
  expect_fail(aoti_torch_cuda_randint_low_out(o8, -1, 10, s4, 1),
              "'low' = -1 is out of range for dtype uint8 [0, 255]");
  aoti_torch_delete_tensor_object(o8);
}

/* ---- uniform, normal ---- */

static void test_uniform_normal_args(void **state) {
  (void)state;
  const int64_t size[1] = {4};
  AtenTensorHandle r = NULL;
  AtenTensorHandle x = fake(F32, CUDA, 1, size), h = fake(F16, CUDA, 1, size);
  expect_fail(aoti_torch_cuda_uniform(x, 2, 1, NULL, &r),
              "aoti_torch_cuda_uniform: uniform expects a [from, to) range, "
              "but 'from' = 2 > 'to' = 1");
  expect_fail(aoti_torch_cuda_uniform(h, 0, 1e5, NULL, &r),
              "aoti_torch_cuda_uniform: 'to' = 100000 is out of bounds for "
              "dtype float16");
  expect_fail(aoti_torch_cuda_uniform(h, -40000, 40000, NULL, &r),
              "'to' - 'from' = 80000 (to = 40000, from = -40000) exceeds the "
              "largest float16");
  expect_fail(aoti_torch_cuda_uniform(x, NAN, 1, NULL, &r),
              "aoti_torch_cuda_uniform: 'from' = ");
  expect_fail(aoti_torch_cuda_normal_functional(x, 0, -1, NULL, &r),
              "aoti_torch_cuda_normal_functional: normal expects 'std' >= "
              "0.0, but found std = -1");
  expect_fail(aoti_torch_cuda_normal_functional(x, 0, 1, NULL, NULL),
              "aoti_torch_cuda_normal_functional: the result pointer 'ret0' "
              "is NULL");
  assert_null(r);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(h);
}

/* from/to/range rounded as ATen rounds them. */
static void test_uniform_params_rounding(void **state) {
  (void)state;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  assert_int_equal(aotrun_fb_uniform_params("op", F16, 0.1, 1.0, &j), 0);
  assert_true(j.a == 0.0999755859375); /* float16(0.1) */
  assert_true(j.b == 1.0);
  assert_true(j.c == 0.89990234375); /* float16(1 - 0.0999755859375) */
  assert_int_equal(aotrun_fb_uniform_params("op", BF16, 0.0, 1.0, &j), 0);
  assert_true(j.a == 0.0 && j.b == 1.0 && j.c == 1.0);
  assert_int_equal(aotrun_fb_uniform_params("op", F64, 0.1, 0.3, &j), 0);
  assert_true(j.a == 0.1 && j.b == 0.3 && j.c == 0.3 - 0.1);
  assert_int_equal(aotrun_fb_uniform_params("op", F32, 0.1, 0.3, &j), 0);
  assert_true(j.a == (double)0.1f && j.c == (double)(0.3f - 0.1f));
}

/* ---- bernoulli ---- */

static void test_bernoulli_p(void **state) {
  (void)state;
  const int64_t s23[2] = {2, 3}, s4[1] = {4}, s3[1] = {3};
  AtenTensorHandle x = fake(F32, CUDA, 2, s23);
  expect_fail(aoti_torch_cuda_bernoulli__float(x, 1.5, NULL),
              "aoti_torch_cuda_bernoulli__float: bernoulli_ expects 'p' to be "
              "in [0, 1], but got p = 1.5");
  expect_fail(aoti_torch_cuda_bernoulli__float(x, -0.25, NULL),
              "but got p = -0.25");
  expect_fail(aoti_torch_cuda_bernoulli__float(x, NAN, NULL),
              "bernoulli_ expects 'p' to be in [0, 1], but got p = ");
  AtenTensorHandle p4 = fake(F32, CUDA, 1, s4);
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(x, p4, NULL),
              "aoti_torch_cuda_bernoulli__Tensor: 'p' of shape [4] is not "
              "broadcastable to 'self' of shape [2, 3]");
  /* p broadcasts to self, not the other way round. */
  AtenTensorHandle x3 = fake(F32, CUDA, 1, s3);
  AtenTensorHandle p23 = fake(F32, CUDA, 2, s23);
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(x3, p23, NULL),
              "'p' of shape [2, 3] is not broadcastable to 'self' of shape "
              "[3]");
  expect_fail(aoti_torch_cuda_bernoulli__Tensor(x, NULL, NULL),
              "aoti_torch_cuda_bernoulli__Tensor: argument 'p' is NULL");
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(p4);
  aoti_torch_delete_tensor_object(x3);
  aoti_torch_delete_tensor_object(p23);
}

/* ---- randperm ---- */

static void test_randperm_n(void **state) {
  (void)state;
  AtenTensorHandle r = NULL;
  int32_t i8 = I8, f16 = F16, u8 = U8;
  expect_fail(aoti_torch_cuda_randperm(-1, NULL, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_randperm: 'n' = -1 must be non-negative");
  expect_fail(aoti_torch_cuda_randperm(129, &i8, NULL, NULL, -1, NULL, &r),
              "aoti_torch_cuda_randperm: 'n' = 129 is too large for dtype "
              "int8 (at most 128)");
  expect_fail(aoti_torch_cuda_randperm(2050, &f16, NULL, NULL, -1, NULL, &r),
              "'n' = 2050 is too large for dtype float16 (at most 2049)");
  expect_fail(aoti_torch_cuda_randperm(257, &u8, NULL, NULL, -1, NULL, &r),
              "'n' = 257 is too large for dtype uint8 (at most 256)");
  assert_null(r);
}

/* ---- job geometry ---- */

static void test_per_block(void **state) {
  (void)state;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_UNIFORM;
  j.dtype = F64;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 2);
  j.dtype = F16;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 4);
  j.kind = AOTRUN_FB_RAND_INT;
  j.range = (uint64_t)1 << 32;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 4);
  j.range = ((uint64_t)1 << 32) + 1;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 2);
  j.kind = AOTRUN_FB_RAND_PERM_KEYS;
  j.key_bytes = 8;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 2);
  j.kind = AOTRUN_FB_RAND_BERNOULLI_P;
  assert_int_equal(aotrun_fb_rand_per_block(&j), 4);
  /* blocks and the fused / ticket split */
  j.kind = AOTRUN_FB_RAND_INT;
  j.range = UINT64_MAX; /* inductor_seeds */
  j.per_block = 2;
  j.n = 1024;
  assert_int_equal(aotrun_fb_rand_blocks(&j), 512);
  assert_false(aotrun_fb_rand_needs_ticket(&j));
  j.per_block = 4;
  j.n = 4 * AOTRUN_FB_RAND_FUSED_BLOCKS + 1;
  assert_int_equal(aotrun_fb_rand_blocks(&j), AOTRUN_FB_RAND_FUSED_BLOCKS + 1);
  assert_true(aotrun_fb_rand_needs_ticket(&j));
  j.n = 0;
  assert_int_equal(aotrun_fb_rand_blocks(&j), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      /* first: needs a process where no device is seeded yet */
      cmocka_unit_test(test_seed_failure_seam),
      cmocka_unit_test(test_bad_env_seed_fails_the_op),
      cmocka_unit_test(test_os_seed_differs),
      cmocka_unit_test(test_parse_seed),
      cmocka_unit_test(test_pick_seed),
      cmocka_unit_test(test_generator_refused),
      cmocka_unit_test(test_bad_dtype),
      cmocka_unit_test(test_bad_layout_device_pin),
      cmocka_unit_test(test_bad_sizes),
      cmocka_unit_test(test_randint_range),
      cmocka_unit_test(test_randint_low_out_size),
      cmocka_unit_test(test_uniform_normal_args),
      cmocka_unit_test(test_uniform_params_rounding),
      cmocka_unit_test(test_bernoulli_p),
      cmocka_unit_test(test_randperm_n),
      cmocka_unit_test(test_per_block),
      /* last: fixes the seed of this process */
      cmocka_unit_test(test_set_seed_without_seeded_devices),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
