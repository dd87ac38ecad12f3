/*
 * test_done_wait.c: the wait on a replay's done counter
 * (backend_cuda/done_wait.h) with a fake stream: the counter arriving
 * before any query, after some, with the stream's end; a failed stream; a
 * stream idle without the counter (a mismatch ends the wait, never hangs);
 * the counter's wrap at 2^32.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "backend_cuda/done_wait.h"

/* A stream that answers `answer` from query number `at` on (BUSY before)
 * and, at that query, sets the counter to `set` when `sets`. */
typedef struct fake_stream {
  volatile uint32_t *counter;
  uint32_t at, queries, set;
  int sets;
  aotrun_stream_query answer;
} fake_stream;

static aotrun_stream_query query(void *ctx) {
  fake_stream *s = ctx;
  s->queries++;
  if (s->queries < s->at) return AOTRUN_STREAM_BUSY;
  if (s->sets) *s->counter = s->set;
  return s->answer;
}

static void test_reached_compares_modulo_2_32(void **state) {
  (void)state;
  assert_true(aotrun_done_reached(5, 5));
  assert_true(aotrun_done_reached(6, 5));
  assert_false(aotrun_done_reached(4, 5));
  assert_true(aotrun_done_reached(0, UINT32_MAX)); /* wrapped past */
  assert_true(aotrun_done_reached(2, UINT32_MAX - 1));
  assert_false(aotrun_done_reached(UINT32_MAX, 0));
}

static void test_counter_already_there_asks_nothing(void **state) {
  (void)state;
  volatile uint32_t c = 7;
  fake_stream s = {&c, 1, 0, 0, 0, AOTRUN_STREAM_FAILED};
  uint32_t q = 99;
  assert_int_equal(aotrun_done_wait(&c, 7, 16, query, &s, &q),
                   AOTRUN_DONE_SEEN);
  assert_int_equal(q, 0);
  assert_int_equal(s.queries, 0);
}

/* The counter arrives while the stream is still busy (the bump kernel is
 * still finishing): seen, no error asked for. */
static void test_counter_arrives_after_some_queries(void **state) {
  (void)state;
  volatile uint32_t c = 2;
  fake_stream s = {&c, 3, 0, 3, 1, AOTRUN_STREAM_BUSY};
  uint32_t q = 0;
  assert_int_equal(aotrun_done_wait(&c, 3, 4, query, &s, &q),
                   AOTRUN_DONE_SEEN);
  assert_int_equal(q, 3);
}

/* The counter and the stream's end come together: seen, not missing. */
static void test_counter_with_the_streams_end_is_seen(void **state) {
  (void)state;
  volatile uint32_t c = 0;
  fake_stream s = {&c, 2, 0, 1, 1, AOTRUN_STREAM_IDLE};
  assert_int_equal(aotrun_done_wait(&c, 1, 1, query, &s, NULL),
                   AOTRUN_DONE_SEEN);
}

/* A kernel failed: the bump never runs, the stream reports it. */
static void test_failed_stream_ends_the_wait(void **state) {
  (void)state;
  volatile uint32_t c = 4;
  fake_stream s = {&c, 5, 0, 0, 0, AOTRUN_STREAM_FAILED};
  uint32_t q = 0;
  assert_int_equal(aotrun_done_wait(&c, 5, 8, query, &s, &q),
                   AOTRUN_DONE_FAILED);
  assert_int_equal(q, 5);
}

/* Idle without the count (a counting mismatch): ends, reported. */
static void test_idle_stream_without_the_counter_is_missing(void **state) {
  (void)state;
  volatile uint32_t c = 4;
  fake_stream s = {&c, 2, 0, 0, 0, AOTRUN_STREAM_IDLE};
  assert_int_equal(aotrun_done_wait(&c, 6, 3, query, &s, NULL),
                   AOTRUN_DONE_MISSING);
  assert_int_equal(s.queries, 2);
}

/* 0 spins between queries is taken as 1 (never a query without a read). */
static void test_zero_spins_is_one(void **state) {
  (void)state;
  volatile uint32_t c = 0;
  fake_stream s = {&c, 1, 0, 0, 0, AOTRUN_STREAM_IDLE};
  assert_int_equal(aotrun_done_wait(&c, 1, 0, query, &s, NULL),
                   AOTRUN_DONE_MISSING);
  assert_int_equal(s.queries, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reached_compares_modulo_2_32),
      cmocka_unit_test(test_counter_already_there_asks_nothing),
      cmocka_unit_test(test_counter_arrives_after_some_queries),
      cmocka_unit_test(test_counter_with_the_streams_end_is_seen),
      cmocka_unit_test(test_failed_stream_ends_the_wait),
      cmocka_unit_test(test_idle_stream_without_the_counter_is_missing),
      cmocka_unit_test(test_zero_spins_is_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
