/* test_block_cache: the default allocator's cache of freed device blocks
 * (shim_lib/block_cache.h), as host logic: no GPU needed (pointers are
 * host addresses standing in for device ones). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "shim_lib/block_cache.h"

static char g_mem[64]; /* distinct addresses to stand in for blocks */
#define P(i) ((void *)&g_mem[i])
static void *const S1 = (void *)0x1000, *const S2 = (void *)0x2000;

static int g_released;
static void count_release(void *ctx, int device, void *ptr) {
  (void)ctx;
  (void)device;
  (void)ptr;
  g_released++;
}

static int reset(void **state) {
  (void)state;
  aotrun_block_cache_set_limit((size_t)1 << 30);
  aotrun_block_cache_drain(-1, count_release, NULL);
  g_released = 0;
  return 0;
}

static void test_rounding(void **state) {
  (void)state;
  assert_int_equal(aotrun_block_cache_round(0), 512);
  assert_int_equal(aotrun_block_cache_round(1), 512);
  assert_int_equal(aotrun_block_cache_round(512), 512);
  assert_int_equal(aotrun_block_cache_round(513), 1024);
  assert_int_equal(aotrun_block_cache_round(1 << 20), 1 << 20);
  assert_int_equal(aotrun_block_cache_round((1 << 20) + 1), 2 << 20);
  assert_int_equal(aotrun_block_cache_round((5 << 20) + 3), 6 << 20);
  assert_int_equal(aotrun_block_cache_round(SIZE_MAX - 10), 0);
}

static void test_reuse_same_stream_and_size_only(void **state) {
  (void)state;
  assert_true(aotrun_block_cache_note_live(P(0), 1024));
  assert_null(aotrun_block_cache_take(0, S1, 1024)); /* nothing freed yet */
  assert_true(aotrun_block_cache_put(0, S1, P(0)));
  assert_int_equal(aotrun_block_cache_bytes(), 1024);
  /* Another stream, size or device never gets it (stream order). */
  assert_null(aotrun_block_cache_take(0, S2, 1024));
  assert_null(aotrun_block_cache_take(0, S1, 512));
  assert_null(aotrun_block_cache_take(1, S1, 1024));
  uint64_t hits = aotrun_block_cache_hits();
  assert_ptr_equal(aotrun_block_cache_take(0, S1, 1024), P(0));
  assert_int_equal(aotrun_block_cache_hits(), hits + 1);
  assert_int_equal(aotrun_block_cache_bytes(), 0);
  /* Handed out again, it is live: freeing it keeps it again. */
  assert_true(aotrun_block_cache_put(0, S1, P(0)));
}

static void test_unknown_pointer_not_kept(void **state) {
  (void)state;
  assert_false(aotrun_block_cache_put(0, S1, P(5)));
  assert_true(aotrun_block_cache_note_live(P(5), 512));
  assert_true(aotrun_block_cache_put(0, S1, P(5)));
  assert_false(aotrun_block_cache_put(0, S1, P(5))); /* freed twice */
}

static void test_limit_bounds_the_cache(void **state) {
  (void)state;
  aotrun_block_cache_set_limit(2048);
  for (int i = 0; i < 3; i++) assert_true(aotrun_block_cache_note_live(P(i), 1024));
  assert_true(aotrun_block_cache_put(0, S1, P(0)));
  assert_true(aotrun_block_cache_put(0, S1, P(1)));
  assert_false(aotrun_block_cache_put(0, S1, P(2))); /* over the limit */
  assert_int_equal(aotrun_block_cache_bytes(), 2048);
  aotrun_block_cache_set_limit(0); /* off: nothing more is kept */
  assert_true(aotrun_block_cache_note_live(P(3), 512));
  assert_false(aotrun_block_cache_put(0, S1, P(3)));
}

static void test_drain_by_device(void **state) {
  (void)state;
  for (int i = 0; i < 4; i++) assert_true(aotrun_block_cache_note_live(P(i), 512));
  assert_true(aotrun_block_cache_put(0, S1, P(0)));
  assert_true(aotrun_block_cache_put(0, S2, P(1)));
  assert_true(aotrun_block_cache_put(1, S1, P(2)));
  assert_true(aotrun_block_cache_put(1, S1, P(3)));
  assert_int_equal(aotrun_block_cache_drain(1, count_release, NULL), 1024);
  assert_int_equal(g_released, 2);
  assert_null(aotrun_block_cache_take(1, S1, 512));
  assert_ptr_equal(aotrun_block_cache_take(0, S2, 512), P(1));
  assert_int_equal(aotrun_block_cache_drain(-1, count_release, NULL), 512);
  assert_int_equal(aotrun_block_cache_bytes(), 0);
}

static void test_many_blocks_one_bin(void **state) {
  (void)state;
  for (int i = 0; i < 40; i++) {
    assert_true(aotrun_block_cache_note_live(P(i), 512));
    assert_true(aotrun_block_cache_put(0, S1, P(i)));
  }
  for (int i = 39; i >= 0; i--) /* last freed, first reused */
    assert_ptr_equal(aotrun_block_cache_take(0, S1, 512), P(i));
  assert_null(aotrun_block_cache_take(0, S1, 512));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_rounding, reset),
      cmocka_unit_test_setup(test_reuse_same_stream_and_size_only, reset),
      cmocka_unit_test_setup(test_unknown_pointer_not_kept, reset),
      cmocka_unit_test_setup(test_limit_bounds_the_cache, reset),
      cmocka_unit_test_setup(test_drain_by_device, reset),
      cmocka_unit_test_setup(test_many_blocks_one_bin, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
