/*
 * test_gemm_algo_cache.c: the cache of cuBLASLt heuristic answers
 * (shim_lib/fallback/gemm_algo_cache.h) and the rule for sending plain
 * GEMMs to cuBLASLt (gemm_lt.h), on the CPU: unknown / found / "no
 * algorithm" answers, keys that differ only in the batch or a batch stride
 * kept apart, a full table caching nothing more, clear; AOTRUN_GEMM_LT=1
 * turns plain cuBLASLt on (float64, broadcast batches and batch counts past
 * int32 stay on cublasGemmEx), unset it is off.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim_lib/fallback/gemm_algo_cache.h"
#include "shim_lib/fallback/gemm_lt.h"

static aotrun_fb_algo_key make_key(int64_t m) {
  aotrun_fb_algo_key k;
  memset(&k, 0, sizeof k);
  k.dtype = 6;
  k.out_dtype = 6;
  k.m = m;
  k.n = 32;
  k.k = 64;
  k.lda = k.ldb = k.ldc = 64;
  k.batch = 1;
  k.align_a = k.align_b = k.align_c = 256;
  k.workspace_bytes = 1 << 22;
  return k;
}

static cublasLtMatmulAlgo_t make_algo(unsigned char fill) {
  cublasLtMatmulAlgo_t a;
  memset(&a, fill, sizeof a);
  return a;
}

static int setup(void **state) {
  (void)state;
  aotrun_fb_algo_cache_clear();
  return 0;
}

static void test_unknown_found_none(void **state) {
  (void)state;
  aotrun_fb_algo_key k = make_key(4), none = make_key(5);
  cublasLtMatmulAlgo_t got = make_algo(0), want = make_algo(0xab);
  assert_int_equal(aotrun_fb_algo_cache_find(&k, &got), AOTRUN_FB_ALGO_UNKNOWN);
  aotrun_fb_algo_cache_put(&k, &want);
  assert_int_equal(aotrun_fb_algo_cache_find(&k, &got), AOTRUN_FB_ALGO_FOUND);
  assert_memory_equal(&got, &want, sizeof got);
  aotrun_fb_algo_cache_put(&none, NULL);
  got = make_algo(0x11);
  assert_int_equal(aotrun_fb_algo_cache_find(&none, &got), AOTRUN_FB_ALGO_NONE);
  cublasLtMatmulAlgo_t untouched = make_algo(0x11);
  assert_memory_equal(&got, &untouched, sizeof got); /* NONE fills nothing */
  /* A second put of a cached key changes nothing. */
  aotrun_fb_algo_cache_put(&none, &want);
  assert_int_equal(aotrun_fb_algo_cache_find(&none, &got), AOTRUN_FB_ALGO_NONE);
  assert_int_equal(aotrun_fb_algo_cache_size(), 2);
  assert_int_equal(aotrun_fb_algo_cache_hits(), 3); /* the cached answers */
}

static void test_batch_and_strides_are_part_of_the_key(void **state) {
  (void)state;
  aotrun_fb_algo_key one = make_key(8);
  aotrun_fb_algo_key batched = one, strided = one;
  batched.batch = 3;
  batched.stride_a = batched.stride_b = batched.stride_c = 2048;
  strided = batched;
  strided.stride_c = 4096;
  cublasLtMatmulAlgo_t a1 = make_algo(1), a2 = make_algo(2), got;
  aotrun_fb_algo_cache_put(&one, &a1);
  assert_int_equal(aotrun_fb_algo_cache_find(&batched, &got),
                   AOTRUN_FB_ALGO_UNKNOWN);
  aotrun_fb_algo_cache_put(&batched, &a2);
  assert_int_equal(aotrun_fb_algo_cache_find(&strided, &got),
                   AOTRUN_FB_ALGO_UNKNOWN);
  assert_int_equal(aotrun_fb_algo_cache_find(&batched, &got),
                   AOTRUN_FB_ALGO_FOUND);
  assert_memory_equal(&got, &a2, sizeof got);
  assert_int_equal(aotrun_fb_algo_cache_find(&one, &got), AOTRUN_FB_ALGO_FOUND);
  assert_memory_equal(&got, &a1, sizeof got);
}

static void test_full_table_caches_nothing_more(void **state) {
  (void)state;
  cublasLtMatmulAlgo_t a = make_algo(7), got;
  /* One slot stays free: SLOTS - 1 entries at most. */
  for (int64_t m = 0; m < AOTRUN_FB_ALGO_CACHE_SLOTS + 10; m++) {
    aotrun_fb_algo_key k = make_key(1000 + m);
    aotrun_fb_algo_cache_put(&k, m % 2 ? &a : NULL);
  }
  assert_int_equal(aotrun_fb_algo_cache_size(), AOTRUN_FB_ALGO_CACHE_SLOTS - 1);
  aotrun_fb_algo_key last = make_key(1000 + AOTRUN_FB_ALGO_CACHE_SLOTS + 5);
  assert_int_equal(aotrun_fb_algo_cache_find(&last, &got),
                   AOTRUN_FB_ALGO_UNKNOWN);
  aotrun_fb_algo_key first = make_key(1001);
  assert_int_equal(aotrun_fb_algo_cache_find(&first, &got),
                   AOTRUN_FB_ALGO_FOUND);
  aotrun_fb_algo_cache_clear();
  assert_int_equal(aotrun_fb_algo_cache_size(), 0);
  assert_int_equal(aotrun_fb_algo_cache_find(&first, &got),
                   AOTRUN_FB_ALGO_UNKNOWN);
}

static void test_plain_lt_rules(void **state) {
  (void)state;
  assert_true(aotrun_fb_plain_lt_enabled()); /* main set AOTRUN_GEMM_LT=1 */
  aotrun_fb_gemm g;
  memset(&g, 0, sizeof g);
  g.dtype = AOTRUN_FB_FLOAT32;
  g.batch = 1;
  aotrun_fb_operand a = {NULL, 64, 0, 0}, b = {NULL, 64, 0, 0};
  assert_true(aotrun_fb_plain_lt_ok(&g, &a, &b, 0));
  g.dtype = AOTRUN_FB_BFLOAT16;
  assert_true(aotrun_fb_plain_lt_ok(&g, &a, &b, 0));
  g.dtype = AOTRUN_FB_FLOAT64;
  assert_false(aotrun_fb_plain_lt_ok(&g, &a, &b, 0));
  g.dtype = AOTRUN_FB_FLOAT16;
  g.batch = 4;
  a.batch_stride = b.batch_stride = 4096;
  assert_true(aotrun_fb_plain_lt_ok(&g, &a, &b, 2048));
  b.batch_stride = 0; /* a broadcast operand */
  assert_false(aotrun_fb_plain_lt_ok(&g, &a, &b, 2048));
  b.batch_stride = 4096;
  g.batch = (int64_t)INT32_MAX + 1;
  assert_false(aotrun_fb_plain_lt_ok(&g, &a, &b, 2048));
}

/* Unset, the option is off (a fresh process: it is read once). */
static void test_plain_lt_off_by_default(void **state) {
  (void)state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    unsetenv("AOTRUN_GEMM_LT");
    _exit(aotrun_fb_plain_lt_enabled() ? 1 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
  /* Before any read: the rules test needs the option on. The fork test's
   * child unsets it before its first read. */
  setenv("AOTRUN_GEMM_LT", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_lt_off_by_default),
      cmocka_unit_test_setup(test_unknown_found_none, setup),
      cmocka_unit_test_setup(test_batch_and_strides_are_part_of_the_key, setup),
      cmocka_unit_test_setup(test_full_table_caches_nothing_more, setup),
      cmocka_unit_test(test_plain_lt_rules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
