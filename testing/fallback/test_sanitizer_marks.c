/*
 * test_sanitizer_marks.c: the byte ranges a GEMM result is marked
 * initialised by for compute-sanitizer (shim_lib/fallback/sanitizer_marks.h),
 * on the CPU: one range for a packed result, one per matrix for a batch
 * with gaps between matrices, one per row for rows with gaps (the gaps
 * never marked), chunks of a long list, empty results; and the mark itself
 * is skipped without a tool attached (no GPU, no stream work).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shim_lib/fallback/sanitizer_marks.h"

static char g_data[1 << 16];

static void assert_range(aotrun_fb_range r, size_t offset, size_t bytes) {
  assert_ptr_equal(r.ptr, g_data + offset);
  assert_int_equal(r.bytes, bytes);
}

static void packed_result_is_one_range(void **state) {
  (void)state;
  aotrun_fb_range r[4];
  /* [3, 4, 5] float32, rows and matrices back to back. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 3, 4, 5, 5, 20, 4, 0, r, 4), 1);
  assert_range(r[0], 0, 3 * 4 * 5 * 4);
  /* One matrix: its batch stride does not matter. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 1, 4, 5, 5, 0, 2, 0, r, 4), 1);
  assert_range(r[0], 0, 4 * 5 * 2);
  /* One row per matrix: its leading dimension does not matter. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 2, 1, 8, 100, 8, 4, 0, r, 4), 1);
  assert_range(r[0], 0, 2 * 8 * 4);
}

static void batch_with_gaps_is_one_range_per_matrix(void **state) {
  (void)state;
  aotrun_fb_range r[4];
  /* Packed 4x5 matrices 32 elements apart: the 12 between are not marked. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 3, 4, 5, 5, 32, 4, 0, r, 4), 3);
  assert_range(r[0], 0, 80);
  assert_range(r[1], 32 * 4, 80);
  assert_range(r[2], 64 * 4, 80);
}

static void rows_with_gaps_are_one_range_each(void **state) {
  (void)state;
  aotrun_fb_range r[8];
  /* 2 matrices of 3 rows of 5 bfloat16, rows 8 apart, matrices 30 apart. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 2, 3, 5, 8, 30, 2, 0, r, 8), 6);
  size_t want[6] = {0, 8, 16, 30, 38, 46};
  for (int i = 0; i < 6; i++) assert_range(r[i], want[i] * 2, 10);
}

static void long_lists_come_in_chunks(void **state) {
  (void)state;
  aotrun_fb_range r[4];
  /* 10 rows with gaps, asked for 4 at a time from range 8: 2 written. */
  r[2].ptr = NULL;
  assert_int_equal(aotrun_fb_result_ranges(g_data, 1, 10, 3, 7, 0, 4, 8, r, 4), 10);
  assert_range(r[0], 8 * 7 * 4, 12);
  assert_range(r[1], 9 * 7 * 4, 12);
  assert_null(r[2].ptr);
  /* Past the end: nothing written, the count still said. */
  assert_int_equal(aotrun_fb_result_ranges(g_data, 1, 10, 3, 7, 0, 4, 10, r, 4), 10);
  assert_null(r[2].ptr);
}

static void empty_results_have_no_ranges(void **state) {
  (void)state;
  aotrun_fb_range r[1];
  assert_int_equal(aotrun_fb_result_ranges(g_data, 0, 4, 5, 5, 20, 4, 0, r, 1), 0);
  assert_int_equal(aotrun_fb_result_ranges(g_data, 2, 0, 5, 5, 20, 4, 0, r, 1), 0);
  assert_int_equal(aotrun_fb_result_ranges(g_data, 2, 4, 0, 5, 20, 4, 0, r, 1), 0);
}

static void marking_without_a_tool_does_nothing(void **state) {
  (void)state;
  /* No sanitizer attached (the test runs without NVTX_INJECTION64_PATH):
   * no mark is made, and neither the (null) stream nor the (host) memory
   * is touched; many chunks, twice. */
  assert_int_equal(aotrun_fb_nvtx_tool_attached(), 0);
  for (int i = 0; i < 2; i++) {
    aotrun_fb_mark_written(NULL, g_data, 2, 100, 5, 8, 1000, 4);
    aotrun_fb_mark_written(NULL, g_data, 1, 4, 5, 5, 0, 4);
    aotrun_fb_mark_written(NULL, g_data, 0, 4, 5, 5, 0, 4);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(packed_result_is_one_range),
      cmocka_unit_test(batch_with_gaps_is_one_range_per_matrix),
      cmocka_unit_test(rows_with_gaps_are_one_range_each),
      cmocka_unit_test(long_lists_come_in_chunks),
      cmocka_unit_test(empty_results_have_no_ranges),
      cmocka_unit_test(marking_without_a_tool_does_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
