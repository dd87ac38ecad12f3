/*
 * test_capture_at_init.c: option cuda_graph_capture_at_init's decisions
 * (backend_cuda/capture_at_init.h) on the CPU: when a graph may be
 * captured at init and why not, and the warm-up's calls driven by them
 * through the real graph state machine over the fake GPU of
 * fake_graph_gpu.h: three warm-up calls, the capture, one replay, then
 * stop, with every output right.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "backend_cuda/capture_at_init.h"
#include "testing/backend/fake_graph_gpu.h"

#define N 4

/* A method with one input of `ndim` dims; dim `dyn` symbolic (-1: none). */
static aotrun_program_method method_with(aotrun_program_io *io, int dyn,
                                         char *symbol) {
  memset(io, 0, sizeof *io);
  io->name = "x";
  io->ndim = 2;
  for (int d = 0; d < AOTRUN_PROGRAM_MAX_DIMS; d++)
    io->exprs[d] = (aotrun_dim_expr){-1, 1, 0};
  io->dims[0] = 4;
  io->dims[1] = 16;
  if (dyn >= 0) {
    io->dims[dyn] = -1;
    io->symbols[dyn] = symbol;
    io->exprs[dyn] = (aotrun_dim_expr){0, 1, 0};
  }
  return (aotrun_program_method){.name = "forward", .num_inputs = 1,
                                 .inputs = io};
}

static void test_static_inputs_may_be_captured(void **state) {
  (void)state;
  aotrun_program_io io;
  aotrun_program_method pm = method_with(&io, -1, NULL);
  char why[256] = "untouched";
  assert_null(aotrun_capture_at_init_refusal(&pm, 0, AOTRUN_GRAPH_WARMUP, "",
                                             why, sizeof why));
}

static void test_dynamic_dim_refused_with_one_graph(void **state) {
  (void)state;
  aotrun_program_io io;
  char sym[] = "batch";
  aotrun_program_method pm = method_with(&io, 1, sym);
  char why[256];
  const char *r = aotrun_capture_at_init_refusal(&pm, 0, AOTRUN_GRAPH_WARMUP,
                                                 "", why, sizeof why);
  assert_non_null(r);
  assert_string_equal(r, "input 'x' has a dynamic dim 1 and "
                         "cuda_graph_shapes is 0: the one graph is captured "
                         "at a caller's shapes");
  /* A graph per shape takes the export's shapes as one of K. */
  assert_null(aotrun_capture_at_init_refusal(&pm, 4, AOTRUN_GRAPH_WARMUP, "",
                                             why, sizeof why));
}

static void test_graphs_off_say_why(void **state) {
  (void)state;
  aotrun_program_io io;
  aotrun_program_method pm = method_with(&io, -1, NULL);
  char why[256];
  assert_string_equal(
      aotrun_capture_at_init_refusal(&pm, 0, AOTRUN_GRAPH_DISABLED, "", why,
                                     sizeof why),
      "the method is not in enable_cuda_graph_for_method");
  assert_string_equal(
      aotrun_capture_at_init_refusal(
          &pm, 0, AOTRUN_GRAPH_DISABLED,
          "it keeps constant 'pred' in host memory", why, sizeof why),
      "it keeps constant 'pred' in host memory");
  /* Already captured (a second init path): nothing to do at init. */
  assert_non_null(aotrun_capture_at_init_refusal(
      &pm, 0, AOTRUN_GRAPH_REPLAY, "", why, sizeof why));
}

/* Set on: always tried; set off: never; left at its default (-1, on):
 * only for a method whose graph is enabled. */
static void test_asked_by_option_and_phase(void **state) {
  (void)state;
  assert_true(aotrun_capture_at_init_asked(1, AOTRUN_GRAPH_WARMUP));
  assert_true(aotrun_capture_at_init_asked(1, AOTRUN_GRAPH_DISABLED));
  assert_false(aotrun_capture_at_init_asked(0, AOTRUN_GRAPH_WARMUP));
  assert_true(aotrun_capture_at_init_asked(-1, AOTRUN_GRAPH_WARMUP));
  assert_false(aotrun_capture_at_init_asked(-1, AOTRUN_GRAPH_DISABLED));
  assert_false(aotrun_capture_at_init_asked(-1, AOTRUN_GRAPH_REPLAY));
}

static void test_more_until_one_replay(void **state) {
  (void)state;
  assert_true(aotrun_capture_at_init_more(AOTRUN_GRAPH_WARMUP, 0));
  assert_true(aotrun_capture_at_init_more(AOTRUN_GRAPH_REPLAY, 0));
  assert_false(aotrun_capture_at_init_more(AOTRUN_GRAPH_REPLAY, 1));
  assert_false(aotrun_capture_at_init_more(AOTRUN_GRAPH_DISABLED, 0));
}

/* One call of the fake model (out = in + 1) through the graph state. */
static aotrun_status call(aotrun_graph_state *s, float *in, float *out) {
  static int64_t shape[1] = {N};
  DLTensor x = {.data = in, .device = {kDLCUDA, 0}, .ndim = 1,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor y = x;
  y.data = out;
  aotrun_error err;
  aotrun_error_clear(&err);
  return aotrun_graph_state_execute(s, &x, 1, &y, 1, &err);
}

/* The warm-up's loop as cuda_warm_up_run.c runs it: a call, then more? */
static int warm_up_calls(aotrun_graph_state *s, float *in, float *out,
                         int limit) {
  int calls = 0;
  do {
    if (call(s, in, out) != AOTRUN_OK) break;
    calls++;
    for (int j = 0; j < N; j++) assert_float_equal(out[j], in[j] + 1, 0);
  } while (calls < limit &&
           aotrun_capture_at_init_more(aotrun_graph_state_phase(s),
                                       aotrun_graph_state_num_replays(s)));
  return calls;
}

/* A graph state with graphs on over a fresh fake GPU. */
static aotrun_graph_state *graphs_on(void) {
  fake_gpu_reset();
  aotrun_graph_ops ops = fake_gpu_ops();
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_create(&ops, "forward",
                                             (DLDevice){kDLCUDA, 0}, 1, 1, &s,
                                             &err),
                   AOTRUN_OK);
  aotrun_graph_state_set_enabled(s, 1);
  return s;
}

/* Destroys s; everything the fake GPU made must be freed. */
static void destroy_balanced(aotrun_graph_state *s) {
  aotrun_graph_state_destroy(s);
  char why[128];
  if (!fake_gpu_balanced(why, sizeof why)) fail_msg("leaked: %s", why);
}

static void test_loop_captures_and_replays_once(void **state) {
  (void)state;
  aotrun_graph_state *s = graphs_on();
  float in[N] = {1, 2, 3, 4}, out[N] = {0};
  assert_int_equal(warm_up_calls(s, in, out, 8), 5);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  assert_int_equal(aotrun_graph_state_num_replays(s), 1);
  assert_int_equal(FAKE.graphs_made, 1);
  /* A caller's first call is then a replay of the same graph. */
  float in2[N] = {10, 20, 30, 40};
  assert_int_equal(call(s, in2, out), AOTRUN_OK);
  for (int j = 0; j < N; j++) assert_float_equal(out[j], in2[j] + 1, 0);
  assert_int_equal(aotrun_graph_state_num_replays(s), 2);
  assert_int_equal(FAKE.graphs_made, 1);
  destroy_balanced(s);
}

static void test_failed_capture_stops_with_graphs_off(void **state) {
  (void)state;
  aotrun_graph_state *s = graphs_on();
  float in[N] = {1, 2, 3, 4}, out[N] = {0};
  assert_int_equal(warm_up_calls(s, in, out, 3), 3); /* the warm-up calls */
  FAKE.fault = FAKE_INSTANTIATE;  /* the capture fails (F6): the call runs
                                   * once more without a graph */
  assert_int_equal(warm_up_calls(s, in, out, 8), 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_non_null(strstr(aotrun_graph_state_disabled_reason(s),
                         "CUDA graph capture failed"));
  destroy_balanced(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static_inputs_may_be_captured),
      cmocka_unit_test(test_dynamic_dim_refused_with_one_graph),
      cmocka_unit_test(test_graphs_off_say_why),
      cmocka_unit_test(test_asked_by_option_and_phase),
      cmocka_unit_test(test_more_until_one_replay),
      cmocka_unit_test(test_loop_captures_and_replays_once),
      cmocka_unit_test(test_failed_capture_stops_with_graphs_off),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
