/*
 * test_output_placement.c: outputs written by the model straight into the
 * caller's tensors (aot_loader/output_placement.h) on a CPU runner over the
 * fixture model (y = f(x) [N, 3], N dynamic; calls [1], a counter): in
 * place from the third call with the same shapes, every result checked;
 * not lent where unsafe (misaligned, another shape, overlapping an input);
 * a model whose outputs turn out aliased gets right results and turns
 * placement off; a failing call leaves it on; AOTRUN_OUTPUT_PLACEMENT=0
 * turns it off, 1 on (the tests' runner), unset the default.
 *   test_output_placement FIXTURE_MODEL.so
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/output_placement.h"
#include "testing/backend/runner_fixture.h"

static const char *g_model_path;

typedef runner_fixture fixture;
typedef runner_fixture_outs outs;

static fixture g_f;

static aotrun_method_runner *new_runner(fixture *f) {
  return runner_fixture_new_runner(f, NULL);
}

static void set_x(fixture *f, int64_t rows) {
  runner_fixture_set_rows(f, rows);
}

static void outs_init(outs *o, int64_t rows) {
  runner_fixture_outs_init(o, rows);
}

/* The tests' runner has placement on whatever the default. */
static int setup(void **state) {
  setenv("AOTRUN_OUTPUT_PLACEMENT", "1", 1);
  int rc = runner_fixture_open(&g_f, g_model_path);
  unsetenv("AOTRUN_OUTPUT_PLACEMENT");
  *state = &g_f;
  return rc;
}

static int teardown(void **state) {
  runner_fixture_close(*state);
  return 0;
}

static aotrun_status run(fixture *f, outs *o, aotrun_error *err) {
  aotrun_error_clear(err);
  return aotrun_method_runner_run_checked_call(f->runner, &f->in, 1, o->t, 2,
                                               NULL, NULL, err);
}

/* One call that must succeed with right values; returns outputs placed. */
static size_t call_ok(fixture *f, int64_t rows, float *last_calls) {
  outs o;
  outs_init(&o, rows);
  aotrun_error err;
  aotrun_status st = run(f, &o, &err);
  if (st != AOTRUN_OK) print_error("call: %s\n", err.message);
  assert_int_equal(st, AOTRUN_OK);
  float want[5][3];
  program_fixture_expected(&f->x[0][0], rows, &want[0][0]);
  assert_memory_equal(o.y, want, (size_t)rows * 3 * sizeof(float));
  if (last_calls != NULL) {
    if (*last_calls > 0) assert_true(o.calls[0] == *last_calls + 1.0f);
    *last_calls = o.calls[0];
  }
  return aotrun_method_runner_placed_outputs(f->runner);
}

static void test_in_place_from_the_third_call(void **state) {
  fixture *f = *state;
  float calls = 0;
  assert_true(aotrun_method_runner_places_outputs(f->runner));
  assert_int_equal(call_ok(f, 5, &calls), 0); /* learns */
  assert_int_equal(call_ok(f, 5, &calls), 0); /* agrees: the plan */
  for (int i = 0; i < 4; i++) assert_int_equal(call_ok(f, 5, &calls), 2);
  /* Another batch size: copied until two calls agree again. */
  set_x(f, 3);
  assert_int_equal(call_ok(f, 3, &calls), 1); /* calls [1] still fits */
  assert_int_equal(call_ok(f, 3, &calls), 1);
  assert_int_equal(call_ok(f, 3, &calls), 2);
  assert_true(aotrun_method_runner_places_outputs(f->runner));
}

/* A wrapper that returns a reused buffer of another shape (the fixture's
 * 777 hook: y allocated as [15], returned as a [5, 3] view of the whole)
 * gets it written in place too, with right values. */
static void test_output_in_a_buffer_of_another_shape(void **state) {
  fixture *f = *state;
  f->x[0][0] = 777.0f;
  float calls = 0;
  assert_int_equal(call_ok(f, 5, &calls), 0);
  assert_int_equal(call_ok(f, 5, &calls), 0);
  for (int i = 0; i < 3; i++) assert_int_equal(call_ok(f, 5, &calls), 2);
  assert_true(aotrun_method_runner_places_outputs(f->runner));
  set_x(f, 5);
}

static void warm(fixture *f) {
  call_ok(f, 5, NULL);
  call_ok(f, 5, NULL);
  assert_int_equal(call_ok(f, 5, NULL), 2);
}

/* Misaligned, another layout, overlapping the input: copied as before. */
static void test_not_lent_where_unsafe(void **state) {
  fixture *f = *state;
  warm(f);
  outs o;
  aotrun_error err;
  float want[5][3];
  program_fixture_expected(&f->x[0][0], 5, &want[0][0]);
  /* y 4 bytes into the caller's buffer: not 64-byte aligned. */
  outs_init(&o, 5);
  o.t[0].byte_offset = 4;
  assert_int_equal(run(f, &o, &err), AOTRUN_OK);
  assert_int_equal(aotrun_method_runner_placed_outputs(f->runner), 1);
  assert_memory_equal(&o.y[0][1], want, sizeof want);
  /* calls as a [1,1] tensor: not the plan's sizes (a size mismatch the
   * model's [1] fails as before). */
  outs_init(&o, 5);
  int64_t one_one[2] = {1, 1};
  o.t[1].ndim = 2;
  o.t[1].shape = one_one;
  assert_int_equal(run(f, &o, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "output 1 (calls) has 1 dims"));
  /* calls overlapping the input x (the ABI forbids it; not lent). */
  outs_init(&o, 5);
  float saved[5][4];
  memcpy(saved, f->x, sizeof saved);
  o.t[1].data = &f->x[4][0];
  assert_int_equal(run(f, &o, &err), AOTRUN_OK);
  assert_int_equal(aotrun_method_runner_placed_outputs(f->runner), 1);
  memcpy(f->x, saved, sizeof saved);
  assert_true(aotrun_method_runner_places_outputs(f->runner));
  assert_int_equal(call_ok(f, 5, NULL), 2);
}

/* After the plan, a call whose output 1 is a view of y (the fixture's
 * 54321 hook): the results match the copying path, placement goes off. */
static void test_aliased_outputs_turn_it_off(void **state) {
  fixture *f = *state;
  warm(f);
  f->x[0][0] = 54321.0f;
  outs o;
  outs_init(&o, 5);
  aotrun_error err;
  assert_int_equal(run(f, &o, &err), AOTRUN_OK);
  float want[5][3];
  program_fixture_expected(&f->x[0][0], 5, &want[0][0]);
  assert_memory_equal(o.y, want, sizeof want);
  assert_true(o.calls[0] == want[0][1]);
  assert_false(aotrun_method_runner_places_outputs(f->runner));
  set_x(f, 5);
  for (int i = 0; i < 3; i++) assert_int_equal(call_ok(f, 5, NULL), 0);
}

/* One handle in both slots (the 12345 hook): output 1 is y [5,3], which the
 * caller's [1] cannot take: the same error as without placement. */
static void test_one_handle_in_two_slots(void **state) {
  fixture *f = *state;
  warm(f);
  f->x[0][0] = 12345.0f;
  outs o;
  outs_init(&o, 5);
  aotrun_error err;
  assert_int_equal(run(f, &o, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "output 1 (calls) has 2 dims, the caller's tensor has 1");
  assert_false(aotrun_method_runner_places_outputs(f->runner));
  set_x(f, 5);
  assert_int_equal(call_ok(f, 5, NULL), 0);
}

/* A model that fails after writing output 0 (the infinity hook) leaves
 * placement on: nothing kept the caller's memory. */
static void test_failed_call_keeps_it_on(void **state) {
  fixture *f = *state;
  warm(f);
  f->x[0][0] = INFINITY;
  outs o;
  outs_init(&o, 5);
  aotrun_error err;
  assert_int_not_equal(run(f, &o, &err), AOTRUN_OK);
  assert_true(aotrun_method_runner_places_outputs(f->runner));
  set_x(f, 5);
  assert_int_equal(call_ok(f, 5, NULL), 2);
}

static void test_environment_turns_it_off(void **state) {
  fixture *f = *state;
  setenv("AOTRUN_OUTPUT_PLACEMENT", "0", 1);
  aotrun_method_runner *r = new_runner(f);
  unsetenv("AOTRUN_OUTPUT_PLACEMENT");
  assert_non_null(r);
  /* Unset: the default. */
  aotrun_method_runner *d = new_runner(f);
  assert_non_null(d);
  assert_int_equal(aotrun_method_runner_places_outputs(d),
                   AOTRUN_OUTPUT_PLACEMENT_DEFAULT);
  aotrun_method_runner_destroy(d);
  aotrun_method_runner *mine = f->runner;
  f->runner = r;
  assert_false(aotrun_method_runner_places_outputs(r));
  for (int i = 0; i < 3; i++) assert_int_equal(call_ok(f, 5, NULL), 0);
  f->runner = mine;
  aotrun_method_runner_destroy(r);
}

/* The runner's switch (option output_placement): off copies every output
 * from the next call, on learns anew (placed from its third call), also
 * after a call turned it off. */
static void test_switched_off_and_on(void **state) {
  fixture *f = *state;
  warm(f);
  aotrun_error err;
  assert_int_equal(
      aotrun_method_runner_set_output_placement(f->runner, 0, &err),
      AOTRUN_OK);
  assert_false(aotrun_method_runner_places_outputs(f->runner));
  for (int i = 0; i < 3; i++) assert_int_equal(call_ok(f, 5, NULL), 0);
  assert_int_equal(
      aotrun_method_runner_set_output_placement(f->runner, 1, &err),
      AOTRUN_OK);
  assert_true(aotrun_method_runner_places_outputs(f->runner));
  assert_int_equal(call_ok(f, 5, NULL), 0);
  assert_int_equal(call_ok(f, 5, NULL), 0);
  assert_int_equal(call_ok(f, 5, NULL), 2);
  /* On while on: the learned plan stays. */
  assert_int_equal(
      aotrun_method_runner_set_output_placement(f->runner, 1, &err),
      AOTRUN_OK);
  assert_int_equal(call_ok(f, 5, NULL), 2);
  assert_int_equal(
      aotrun_method_runner_set_output_placement(NULL, 1, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "output placement: runner is NULL");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURE_MODEL.so\n", argv[0]);
    return 2;
  }
  g_model_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_in_place_from_the_third_call,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_lent_where_unsafe, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_output_in_a_buffer_of_another_shape,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_aliased_outputs_turn_it_off, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_one_handle_in_two_slots, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_failed_call_keeps_it_on, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_switched_off_and_on, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_environment_turns_it_off, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
