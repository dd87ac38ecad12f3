/*
 * test_upload_chunks.c: the chunk plan of staged weight uploads
 * (aot_loader/upload_chunks.h): sizes, offsets, alignment, the buffer
 * each chunk uses, and when a copy is not staged at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "aot_loader/upload_chunks.h"

#define MIB ((size_t)1 << 20)

/* The chunks cover [0, bytes) exactly once, in order, buffers alternate. */
static void assert_covers(const aotrun_upload_plan *p) {
  uint64_t next = 0;
  for (size_t i = 0; i < p->count; i++) {
    uint64_t off = 0;
    size_t size = 0;
    int buffer = -1;
    aotrun_upload_plan_chunk(p, i, &off, &size, &buffer);
    assert_int_equal(off, next);
    assert_true(size > 0 && size <= p->chunk);
    assert_int_equal(buffer, (int)(i % 2));
    if (i + 1 < p->count) assert_int_equal(size, p->chunk);
    next = off + size;
  }
  assert_int_equal(next, p->bytes);
}

static void test_large_copy_is_staged(void **state) {
  (void)state;
  aotrun_upload_plan p;
  /* 16 MiB of staging: two 8 MiB buffers; 100 MiB + 3 bytes. */
  assert_int_equal(aotrun_upload_plan_make(100 * MIB + 3, 16 * MIB, 4096, &p),
                   0);
  assert_true(p.staged);
  assert_int_equal(p.chunk, 8 * MIB);
  assert_int_equal(p.count, 13); /* 12 full, one of 4 MiB + 3 */
  assert_covers(&p);
  uint64_t off;
  size_t size;
  int buffer;
  aotrun_upload_plan_chunk(&p, 12, &off, &size, &buffer);
  assert_int_equal(off, 96 * MIB);
  assert_int_equal(size, 4 * MIB + 3);
  assert_int_equal(buffer, 0);
  assert_int_equal(off % 4096, 0);
}

static void test_exact_multiple(void **state) {
  (void)state;
  aotrun_upload_plan p;
  assert_int_equal(aotrun_upload_plan_make(32 * MIB, 16 * MIB, 4096, &p), 0);
  assert_int_equal(p.count, 4);
  assert_covers(&p);
}

/* Staging that is not a multiple of the alignment rounds down. */
static void test_chunk_rounded_to_alignment(void **state) {
  (void)state;
  aotrun_upload_plan p;
  assert_int_equal(aotrun_upload_plan_make(1000000, 100000, 4096, &p), 0);
  assert_int_equal(p.chunk, 49152); /* 50000 rounded down to 4096 */
  assert_int_equal(p.chunk % 4096, 0);
  assert_int_equal(p.count, 21);
  assert_covers(&p);
}

/* Less than two chunks: one direct copy (nothing would overlap). */
static void test_small_copy_is_direct(void **state) {
  (void)state;
  aotrun_upload_plan p;
  assert_int_equal(aotrun_upload_plan_make(16 * MIB - 1, 16 * MIB, 4096, &p),
                   0);
  assert_false(p.staged);
  assert_int_equal(p.count, 1);
  assert_int_equal(p.chunk, 16 * MIB - 1);
  assert_covers(&p);
  assert_int_equal(aotrun_upload_plan_make(0, 16 * MIB, 4096, &p), 0);
  assert_int_equal(p.count, 0);
  assert_false(p.staged);
}

static void test_bad_parameters_fall_back_to_direct(void **state) {
  (void)state;
  aotrun_upload_plan p;
  assert_int_equal(aotrun_upload_plan_make(64 * MIB, 16 * MIB, 3000, &p), -1);
  assert_false(p.staged);
  assert_int_equal(p.count, 1);
  assert_int_equal(aotrun_upload_plan_make(64 * MIB, 16 * MIB, 0, &p), -1);
  assert_int_equal(aotrun_upload_plan_make(64 * MIB, 4096, 4096, &p), -1);
  assert_false(p.staged); /* 2048 per buffer: less than the alignment */
  assert_covers(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_large_copy_is_staged),
      cmocka_unit_test(test_exact_multiple),
      cmocka_unit_test(test_chunk_rounded_to_alignment),
      cmocka_unit_test(test_small_copy_is_direct),
      cmocka_unit_test(test_bad_parameters_fall_back_to_direct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
