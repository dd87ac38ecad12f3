/* test_graph_pool.c: the per-graph pool over fake raw memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "backend_cuda/graph_pool.h"

static int g_allocs, g_frees, g_fail;

static void *raw_alloc(void *ctx, size_t bytes) {
  (void)ctx;
  if (g_fail) return NULL;
  g_allocs++;
  return aligned_alloc(AOTRUN_GRAPH_POOL_ALIGNMENT,
                       (bytes + 255) / 256 * 256);
}

static void raw_free(void *ctx, void *ptr) {
  (void)ctx;
  g_frees++;
  free(ptr);
}

static const aotrun_pool_raw_ops kRaw = {NULL, raw_alloc, raw_free};

static aotrun_graph_pool *make(void) {
  g_allocs = g_frees = g_fail = 0;
  aotrun_graph_pool *p = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_graph_pool_create(&kRaw, &p, &err), AOTRUN_OK);
  return p;
}

static void test_carves_aligned_blocks_from_one_chunk(void **state) {
  (void)state;
  aotrun_graph_pool *p = make();
  char *a = aotrun_graph_pool_alloc(p, 10);
  char *b = aotrun_graph_pool_alloc(p, 300);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal((uintptr_t)a % AOTRUN_GRAPH_POOL_ALIGNMENT, 0);
  assert_int_equal((uintptr_t)b % AOTRUN_GRAPH_POOL_ALIGNMENT, 0);
  assert_ptr_equal(b, a + 256);
  assert_int_equal(g_allocs, 1);
  assert_int_equal(aotrun_graph_pool_reserved(p), AOTRUN_GRAPH_POOL_CHUNK);
  assert_int_equal(aotrun_graph_pool_in_use(p), 2);
  aotrun_graph_pool_destroy(p);
  assert_int_equal(g_frees, 1);
}

static void test_freed_block_reused_for_same_size(void **state) {
  (void)state;
  aotrun_graph_pool *p = make();
  aotrun_shim_allocator a = aotrun_graph_pool_allocator(p);
  void *x = a.alloc(a.ctx, 1000, NULL);
  a.free(a.ctx, x, NULL);
  assert_int_equal(aotrun_graph_pool_in_use(p), 0);
  void *y = a.alloc(a.ctx, 1024, NULL); /* same rounded size */
  assert_ptr_equal(x, y);
  void *z = a.alloc(a.ctx, 1000, NULL); /* x is taken again */
  assert_ptr_not_equal(z, y);
  a.free(a.ctx, NULL, NULL);            /* ignored */
  a.free(a.ctx, (char *)z + 1, NULL);   /* not a block: ignored */
  assert_int_equal(aotrun_graph_pool_in_use(p), 2);
  aotrun_graph_pool_destroy(p);
}

static void test_grows_and_frees_every_chunk(void **state) {
  (void)state;
  aotrun_graph_pool *p = make();
  assert_non_null(aotrun_graph_pool_alloc(p, AOTRUN_GRAPH_POOL_CHUNK - 256));
  assert_non_null(aotrun_graph_pool_alloc(p, 512)); /* needs a new chunk */
  assert_non_null(aotrun_graph_pool_alloc(p, 3 * AOTRUN_GRAPH_POOL_CHUNK));
  assert_int_equal(g_allocs, 3);
  assert_int_equal(aotrun_graph_pool_reserved(p),
                   5 * (size_t)AOTRUN_GRAPH_POOL_CHUNK);
  g_fail = 1;
  assert_null(aotrun_graph_pool_alloc(p, 4 * AOTRUN_GRAPH_POOL_CHUNK));
  assert_null(aotrun_graph_pool_alloc(p, SIZE_MAX));
  aotrun_graph_pool_destroy(p);
  assert_int_equal(g_frees, 3);
  aotrun_graph_pool_destroy(NULL);
}

/* Room made before a capture: one chunk now, and the allocations that
 * fit take no more from the device; a failing device says how much. */
static void test_reserve_before_capture(void **state) {
  (void)state;
  aotrun_graph_pool *p = make();
  aotrun_error err;
  assert_int_equal(aotrun_graph_pool_reserve(p, 1000, &err), AOTRUN_OK);
  assert_int_equal(g_allocs, 1);
  assert_int_equal(aotrun_graph_pool_reserved(p), AOTRUN_GRAPH_POOL_CHUNK);
  assert_int_equal(aotrun_graph_pool_in_use(p), 0);
  assert_int_equal(aotrun_graph_pool_reserve(p, 1000, &err), AOTRUN_OK);
  char *a = aotrun_graph_pool_alloc(p, 1000);
  char *b = aotrun_graph_pool_alloc(p, AOTRUN_GRAPH_POOL_CHUNK - 1024);
  assert_non_null(a);
  assert_ptr_equal(b, a + 1024); /* the reserved chunk, from its start */
  assert_int_equal(g_allocs, 1);
  g_fail = 1;
  assert_int_equal(aotrun_graph_pool_reserve(p, 1, &err),
                   AOTRUN_ERR_OUT_OF_MEMORY);
  assert_string_equal(err.message,
                      "graph pool: cannot reserve 2097152 bytes of device "
                      "memory before the capture");
  assert_int_equal(aotrun_graph_pool_reserve(p, SIZE_MAX, &err),
                   AOTRUN_ERR_OUT_OF_MEMORY);
  aotrun_graph_pool_destroy(p);
  assert_int_equal(g_frees, 1);
}

/* One recording's allocations (sizes, and frees by index) against a pool;
 * returns how many raw allocations they made. */
static int replay_sequence(aotrun_graph_pool *p) {
  static const size_t sizes[] = {1536u << 10, 1u << 20, 3u << 20, 1536u << 10,
                                 300, 5u << 20};
  void *got[6];
  int before = g_allocs;
  for (int i = 0; i < 6; i++) {
    got[i] = aotrun_graph_pool_alloc(p, sizes[i]);
    assert_non_null(got[i]);
    if (i == 2) aotrun_graph_pool_free(p, got[0]); /* reused by i == 3 */
  }
  return g_allocs - before;
}

/* What the re-recorded capture relies on (graph_slot.c): a pool that
 * reserves, as one chunk, the bytes another pool took for the same
 * sequence of allocations serves that sequence without taking more. */
static void test_reserving_a_recordings_bytes_fits_it(void **state) {
  (void)state;
  aotrun_graph_pool *first = make();
  aotrun_error err;
  assert_int_equal(aotrun_graph_pool_reserve(first, 1, &err), AOTRUN_OK);
  assert_true(replay_sequence(first) > 0); /* grew while "recording" */
  size_t need = aotrun_graph_pool_reserved(first);
  aotrun_graph_pool_destroy(first);
  aotrun_graph_pool *second = make();
  assert_int_equal(aotrun_graph_pool_reserve(second, need, &err), AOTRUN_OK);
  assert_int_equal(g_allocs, 1);
  assert_int_equal(replay_sequence(second), 0);
  assert_int_equal(aotrun_graph_pool_reserved(second), need);
  aotrun_graph_pool_destroy(second);
}

static void test_bad_raw_ops(void **state) {
  (void)state;
  aotrun_pool_raw_ops raw = {NULL, raw_alloc, NULL};
  aotrun_graph_pool *p = (aotrun_graph_pool *)&raw;
  aotrun_error err;
  assert_int_equal(aotrun_graph_pool_create(&raw, &p, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(err.message, "graph pool: raw memory ops are incomplete");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_carves_aligned_blocks_from_one_chunk),
      cmocka_unit_test(test_freed_block_reused_for_same_size),
      cmocka_unit_test(test_grows_and_frees_every_chunk),
      cmocka_unit_test(test_reserve_before_capture),
      cmocka_unit_test(test_reserving_a_recordings_bytes_fits_it),
      cmocka_unit_test(test_bad_raw_ops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
