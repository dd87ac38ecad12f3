/*
 * test_graph_shape_cache.c: the shape bookkeeping of a CUDA graph per shape
 * (backend_cuda/graph_shape_cache.h) on its own: signatures, lookup within
 * the limit, LRU, seen shapes, the report's order and text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "backend_cuda/graph_shape_cache.h"

static const DLDataType kF32 = {kDLFloat, 32, 1};

/* Two inputs: (2,3) and (n). */
typedef struct io {
  int64_t shape[2][AOTRUN_MAX_DIMS];
  DLTensor in[2];
} io;

static void make_io(io *t, int64_t n) {
  memset(t, 0, sizeof *t);
  t->shape[0][0] = 2;
  t->shape[0][1] = 3;
  t->shape[1][0] = n;
  t->in[0] = (DLTensor){NULL, {kDLCUDA, 0}, 2, kF32, t->shape[0], NULL, 0};
  t->in[1] = (DLTensor){NULL, {kDLCUDA, 0}, 1, kF32, t->shape[1], NULL, 0};
}

/* Each test's cache: two inputs, limit 1 until the test sets it. */
static aotrun_graph_shape_cache C;

static int setup(void **state) {
  (void)state;
  return aotrun_graph_shape_cache_init(&C, 2) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  aotrun_graph_shape_cache_free(&C);
  return 0;
}

/* Slot's graph captured with input 1 of size n. */
static void capture(size_t slot, int64_t n) {
  io t;
  make_io(&t, n);
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_shape_cache_reserve(&C, slot), 1);
  assert_int_equal(aotrun_graph_shape_cache_key_slot(&C, slot, t.in, &err),
                   AOTRUN_OK);
  aotrun_graph_shape_cache_commit(&C, slot);
}

static void key_call(const io *t) {
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_shape_cache_key_call(&C, t->in, &err),
                   AOTRUN_OK);
}

/* The slot whose graph replays this call, or -1. */
static int find_io(const io *t) {
  key_call(t);
  return aotrun_graph_shape_cache_find_graph(&C);
}

/* The same for a call with input 1 of size n. */
static int find(int64_t n) {
  io t;
  make_io(&t, n);
  return find_io(&t);
}

static void test_find_needs_same_shapes(void **state) {
  (void)state;
  assert_int_equal(aotrun_graph_shape_cache_limit(&C), 1);
  aotrun_graph_shape_cache_set_limit(&C, 4);
  assert_int_equal(find(5), -1);
  capture(1, 5);
  assert_int_equal(find(5), 1);
  assert_int_equal(find(6), -1);
  io t;
  make_io(&t, 5);
  t.in[1].ndim = 2; /* (5, 0) */
  assert_int_equal(find_io(&t), -1);
  make_io(&t, 5);
  t.in[0].dtype.bits = 16;
  assert_int_equal(find_io(&t), -1);
  make_io(&t, 5);
  t.in[0].dtype.lanes = 2;
  assert_int_equal(find_io(&t), -1);
  make_io(&t, 5);
  t.in[0].dtype.code = kDLInt;
  assert_int_equal(find_io(&t), -1);
  /* A dropped (released) graph is not found; nor one beyond the limit. */
  aotrun_graph_shape_cache_drop(&C, 1);
  assert_int_equal(find(5), -1);
  capture(3, 7);
  assert_int_equal(find(7), 3);
  aotrun_graph_shape_cache_set_limit(&C, 3);
  assert_int_equal(find(7), -1);
  assert_int_equal(aotrun_graph_shape_cache_num_graphs(&C), 1);
  aotrun_graph_shape_cache_swap(&C, 3, 0); /* the state moves it below */
  assert_int_equal(find(7), 0);
  assert_true(aotrun_graph_shape_cache_committed(&C, 0));
  assert_false(aotrun_graph_shape_cache_committed(&C, 3));
}

static void test_bad_rank(void **state) {
  (void)state;
  aotrun_graph_shape_cache_set_limit(&C, 2);
  io t;
  make_io(&t, 5);
  aotrun_error err;
  t.in[1].ndim = AOTRUN_MAX_DIMS + 1;
  assert_int_equal(aotrun_graph_shape_cache_key_call(&C, t.in, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "input 1 has 17 dims (at most 16)");
  t.in[1].ndim = -1;
  assert_int_equal(aotrun_graph_shape_cache_key_call(&C, t.in, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "input 1 has -1 dims (at most 16)");
}

static void test_lru(void **state) {
  (void)state;
  aotrun_graph_shape_cache_set_limit(&C, 3);
  assert_int_equal(aotrun_graph_shape_cache_lru(&C), -1);
  capture(0, 5);
  capture(1, 6);
  capture(2, 7);
  assert_int_equal(aotrun_graph_shape_cache_num_graphs(&C), 3);
  assert_int_equal(aotrun_graph_shape_cache_lru(&C), 0);
  aotrun_graph_shape_cache_touch(&C, 0); /* a replay */
  assert_int_equal(aotrun_graph_shape_cache_lru(&C), 1);
  aotrun_graph_shape_cache_drop(&C, 1);
  assert_int_equal(aotrun_graph_shape_cache_lru(&C), 2);
  assert_int_equal(aotrun_graph_shape_cache_num_graphs(&C), 2);
}

/* Whether a call with input 1 of size n was seen once (and is forgotten). */
static int take(int64_t n) {
  io t;
  make_io(&t, n);
  key_call(&t);
  return aotrun_graph_shape_cache_take_seen(&C);
}

static void remember(int64_t n) {
  io t;
  make_io(&t, n);
  key_call(&t);
  aotrun_graph_shape_cache_remember_call(&C);
}

static void test_seen_shapes(void **state) {
  (void)state;
  aotrun_graph_shape_cache_set_limit(&C, 2);
  assert_false(take(5));
  remember(5);
  assert_true(take(5));
  assert_false(take(5)); /* taken: new again */
  /* At most limit shapes: the least recently seen is replaced. */
  remember(5);
  remember(6);
  remember(7);
  assert_false(take(5));
  assert_true(take(6));
  assert_true(take(7));
  /* Lowering the limit forgets the shapes beyond it; forget_seen, all. */
  remember(5);
  remember(6);
  aotrun_graph_shape_cache_set_limit(&C, 1);
  aotrun_graph_shape_cache_set_limit(&C, 2);
  assert_true(take(5));
  assert_false(take(6));
  remember(8);
  aotrun_graph_shape_cache_forget_seen(&C);
  assert_false(take(8));
}

static void test_report_order_and_text(void **state) {
  (void)state;
  aotrun_graph_shape_cache_set_limit(&C, 3);
  assert_int_equal(aotrun_graph_shape_cache_next_mru(&C, -1), -1);
  capture(0, 5);
  capture(2, 7);
  capture(1, 6);
  aotrun_graph_shape_cache_touch(&C, 0);
  int order[4], n = 0;
  for (int i = aotrun_graph_shape_cache_next_mru(&C, -1); i >= 0 && n < 4;
       i = aotrun_graph_shape_cache_next_mru(&C, i))
    order[n++] = i;
  assert_int_equal(n, 3);
  assert_int_equal(order[0], 0);
  assert_int_equal(order[1], 1);
  assert_int_equal(order[2], 2);
  char buf[64];
  size_t used = aotrun_graph_shape_cache_put_shapes(&C, 2, buf, sizeof buf);
  assert_string_equal(buf, "[2,3] [7]");
  assert_int_equal(used, strlen("[2,3] [7]"));
  /* Cut short: what fits, and a count of at least the size. */
  used = aotrun_graph_shape_cache_put_shapes(&C, 2, buf, 4);
  assert_string_equal(buf, "[2,");
  assert_true(used >= 4);
}

static void test_rank_zero_and_no_inputs(void **state) {
  (void)state;
  io t;
  make_io(&t, 5);
  aotrun_error err;
  aotrun_error_clear(&err);
  t.in[1].ndim = 0; /* a scalar */
  assert_int_equal(aotrun_graph_shape_cache_reserve(&C, 0), 1);
  assert_int_equal(aotrun_graph_shape_cache_key_slot(&C, 0, t.in, &err),
                   AOTRUN_OK);
  aotrun_graph_shape_cache_commit(&C, 0);
  char buf[64];
  aotrun_graph_shape_cache_put_shapes(&C, 0, buf, sizeof buf);
  assert_string_equal(buf, "[2,3] []");
  assert_int_equal(find_io(&t), 0);
  aotrun_graph_shape_cache_free(&C);
  /* No inputs: every call has the same (empty) signature. */
  assert_int_equal(aotrun_graph_shape_cache_init(&C, 0), 1);
  assert_int_equal(aotrun_graph_shape_cache_reserve(&C, 0), 1);
  assert_int_equal(aotrun_graph_shape_cache_key_slot(&C, 0, NULL, &err),
                   AOTRUN_OK);
  aotrun_graph_shape_cache_commit(&C, 0);
  assert_int_equal(aotrun_graph_shape_cache_key_call(&C, NULL, &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_graph_shape_cache_find_graph(&C), 0);
  assert_int_equal(aotrun_graph_shape_cache_put_shapes(&C, 0, buf, 1), 0);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_find_needs_same_shapes),
      TEST(test_bad_rank),
      TEST(test_lru),
      TEST(test_seen_shapes),
      TEST(test_report_order_and_text),
      TEST(test_rank_zero_and_no_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
