/*
 * test_graph_input_nodes.c: option cuda_graph_input_nodes
 * (backend_cuda/graph_input_nodes.h) through the graph state machine, on
 * the CPU, over the fake GPU of fake_graph_gpu.h (the model out = in0 +
 * in1 + 1; an executable graph keeps its own copy of the copy nodes, as
 * CUDA does). Every call's output is checked against its own inputs, so a
 * node left pointing at a previous call's buffer, or left on while the
 * stream copy ran, shows as a wrong value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda/cuda_graph_state.h"
#include "testing/backend/fake_graph_gpu.h"

#define N 4 /* floats per tensor */
#define MAX_IN 2

/* ---- tensors ---- */

static int64_t kShape[1] = {N};

typedef struct buf {
  float v[N];
  DLTensor t;
} buf;

/* A tensor of N floats v0, v0+1, ... in "device" (kDLCUDA) or host memory. */
static void make(buf *b, float v0, int device) {
  for (int j = 0; j < N; j++) b->v[j] = v0 + (float)j;
  b->t = (DLTensor){.data = b->v,
                    .device = {device ? kDLCUDA : kDLCPU, 0},
                    .ndim = 1,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = kShape};
}

static aotrun_graph_state *S;
static size_t NI;

static int setup(void **state) {
  (void)state;
  fake_gpu_reset();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  aotrun_graph_state_destroy(S);
  S = NULL;
  char why[128];
  if (!fake_gpu_balanced(why, sizeof why)) fail_msg("leaked: %s", why);
  return 0;
}

static void start(size_t num_inputs, int nodes_on, aotrun_graph_ops ops) {
  aotrun_error err;
  aotrun_error_clear(&err);
  NI = num_inputs;
  assert_int_equal(aotrun_graph_state_create(&ops, "forward",
                                             (DLDevice){kDLCUDA, 0},
                                             num_inputs, 1, &S, &err),
                   AOTRUN_OK);
  aotrun_graph_state_set_input_nodes(S, nodes_on);
  aotrun_graph_state_set_enabled(S, 1);
}

/* One call on inputs a (and b when NI == 2); checks its output against
 * its own inputs. Returns the status. */
static aotrun_status call(buf *a, buf *b) {
  DLTensor in[MAX_IN] = {a->t, b ? b->t : a->t};
  float got[N] = {0};
  DLTensor out = a->t;
  out.data = got;
  out.device = (DLDevice){kDLCUDA, 0};
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_graph_state_execute(S, in, NI, &out, 1, &err);
  if (st != AOTRUN_OK) {
    snprintf(FAKE.last_log, sizeof FAKE.last_log, "%s", err.message);
    return st;
  }
  for (int j = 0; j < N; j++) {
    float want = a->v[j] + 1 + (NI == 2 ? b->v[j] : 0);
    if (got[j] != want)
      fail_msg("output %d is %g, want %g (a stale or overwritten input)", j,
               (double)got[j], (double)want);
  }
  return st;
}

/* The three warm-up calls and the capture call, on device inputs. */
static void capture(buf *a, buf *b) {
  for (int i = 0; i < 4; i++) assert_int_equal(call(a, b), AOTRUN_OK);
  assert_string_equal(aotrun_graph_phase_name(aotrun_graph_state_phase(S)),
                      "Replay");
}

/* One input, nodes on: a (device) captured; h (host) and b (device) for
 * the calls that follow. */
static void captured_with_host_and_device(buf *a, buf *h, buf *b) {
  start(1, 1, fake_gpu_ops());
  make(a, 1, 1);
  make(h, 5, 0);
  make(b, 8, 1);
  capture(a, NULL);
}

/* ---- tests ---- */

static void test_nodes_follow_each_calls_inputs(void **state) {
  (void)state;
  start(1, 1, fake_gpu_ops());
  buf a, b, c;
  make(&a, 10, 1);
  make(&b, 20, 1);
  make(&c, 30, 1);
  capture(&a, NULL);
  assert_int_equal(FAKE.add_nodes, 1);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 1);
  int copies = FAKE.copy_inputs;
  buf *order[] = {&b, &c, &a, &c, &b, &b};
  for (int i = 0; i < 6; i++) assert_int_equal(call(order[i], NULL), AOTRUN_OK);
  assert_int_equal(FAKE.copy_inputs, copies); /* no stream copy on replay */
  assert_int_equal(FAKE.points, 5); /* b, c, a, c, b; the second b is kept */
  assert_int_equal(FAKE.enables, 0); /* on from the start, never switched */
  /* A buffer changed in place between calls is read at the launch. */
  a.v[0] = 99;
  assert_int_equal(call(&a, NULL), AOTRUN_OK);
}

/* A serving host passes the same buffers every call: after the capture
 * no setter runs at all, yet each call reads the buffers' new contents. */
static void test_the_same_buffers_again_cost_no_setter(void **state) {
  (void)state;
  start(2, 1, fake_gpu_ops());
  buf a, b, c;
  make(&a, 1, 1);
  make(&b, 2, 1);
  make(&c, 3, 1);
  capture(&a, &b);
  for (int i = 0; i < 5; i++) {
    a.v[1] = (float)(10 * i); /* new values, same address */
    b.v[2] = (float)(-3 * i);
    assert_int_equal(call(&a, &b), AOTRUN_OK);
  }
  assert_int_equal(FAKE.points, 0);
  /* One input moves: only its node is set; back again: set again. */
  assert_int_equal(call(&a, &c), AOTRUN_OK);
  assert_int_equal(FAKE.points, 1);
  assert_int_equal(call(&a, &b), AOTRUN_OK);
  assert_int_equal(FAKE.points, 2);
  /* The address a node reads is data + byte_offset: w[1]'s values spelled
   * as w[0]'s allocation at an offset are the same address (kept); w[0]
   * itself is another (set). */
  buf w[2];
  make(&w[0], 40, 1);
  make(&w[1], 50, 1);
  assert_int_equal(call(&w[1], &b), AOTRUN_OK);
  assert_int_equal(FAKE.points, 3);
  w[1].t.data = w[0].v;
  w[1].t.byte_offset = (uint64_t)((char *)w[1].v - (char *)w[0].v);
  assert_int_equal(call(&w[1], &b), AOTRUN_OK);
  assert_int_equal(FAKE.points, 3);
  assert_int_equal(call(&w[0], &b), AOTRUN_OK);
  assert_int_equal(FAKE.points, 4);
}

/* A refused setter forgets what its node reads: the next call with any
 * buffer sets it again rather than trusting the half-done update. */
static void test_a_refused_setter_is_set_again_next_call(void **state) {
  (void)state;
  buf a, h, b;
  captured_with_host_and_device(&a, &h, &b);
  FAKE.fault = FAKE_POINT;
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* refused: stream copy */
  int points = FAKE.points;
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* the same b: set again */
  assert_int_equal(FAKE.points, points + 1);
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* now known: kept */
  assert_int_equal(FAKE.points, points + 1);
}

static void test_host_inputs_turn_the_nodes_off_and_back_on(void **state) {
  (void)state;
  start(2, 1, fake_gpu_ops());
  buf a, b, h, g;
  make(&a, 1, 1);
  make(&b, 2, 1);
  make(&h, 50, 0); /* host memory */
  make(&g, 60, 1);
  capture(&a, &b);
  int copies = FAKE.copy_inputs;
  assert_int_equal(call(&h, &b), AOTRUN_OK); /* off, copied on the stream */
  assert_int_equal(FAKE.enables, 2);
  assert_int_equal(FAKE.copy_inputs, copies + 1);
  assert_non_null(strstr(FAKE.last_log, "an input is not in device memory"));
  assert_int_equal(call(&h, &g), AOTRUN_OK); /* stays off: no switching */
  assert_int_equal(FAKE.enables, 2);
  assert_int_equal(call(&g, &a), AOTRUN_OK); /* on again, re-pointed */
  assert_int_equal(FAKE.enables, 4);
  assert_int_equal(FAKE.copy_inputs, copies + 2);
  assert_int_equal(call(&b, &g), AOTRUN_OK);
  assert_int_equal(FAKE.copy_inputs, copies + 2);
}

static void test_a_refused_pointer_falls_back_to_stream_copies(void **state) {
  (void)state;
  start(2, 1, fake_gpu_ops());
  buf a, b, bad, d;
  make(&a, 1, 1);
  make(&b, 2, 1);
  make(&bad, 7, 1);
  make(&d, 9, 1);
  capture(&a, &b);
  FAKE.refuse_src = bad.v;
  int copies = FAKE.copy_inputs;
  /* input 0 is re-pointed, input 1 refused: both nodes go off. */
  assert_int_equal(call(&d, &bad), AOTRUN_OK);
  assert_int_equal(FAKE.copy_inputs, copies + 1);
  assert_non_null(strstr(FAKE.last_log, "input 1: "));
  assert_non_null(strstr(FAKE.last_log, "invalid argument"));
  assert_int_equal(call(&b, &d), AOTRUN_OK); /* nodes again */
  assert_int_equal(FAKE.copy_inputs, copies + 1);
}

static void test_a_node_that_cannot_be_turned_off_fails_the_call(
    void **state) {
  (void)state;
  buf a, h, b;
  captured_with_host_and_device(&a, &h, &b);
  FAKE.fault = FAKE_ENABLE;
  assert_int_equal(call(&h, NULL), AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(FAKE.last_log, "turning input node 0 off"));
  /* Mixed state after the failure: the next host call switches again. */
  assert_int_equal(call(&h, NULL), AOTRUN_OK);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(call(&h, NULL), AOTRUN_OK);
}

static void test_a_node_that_cannot_be_turned_on_copies_instead(
    void **state) {
  (void)state;
  buf a, h, b;
  captured_with_host_and_device(&a, &h, &b);
  assert_int_equal(call(&h, NULL), AOTRUN_OK); /* off */
  FAKE.fault = FAKE_ENABLE;
  int copies = FAKE.copy_inputs;
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* on fails: off, copied */
  assert_int_equal(FAKE.copy_inputs, copies + 1);
  assert_non_null(strstr(FAKE.last_log, "turning input node 0 on"));
  assert_int_equal(call(&a, NULL), AOTRUN_OK); /* on now */
  assert_int_equal(FAKE.copy_inputs, copies + 1);
}

static void test_no_nodes_without_the_option_or_a_device_capture(
    void **state) {
  (void)state;
  buf a, h, b;
  make(&a, 1, 1);
  make(&h, 5, 0);
  make(&b, 8, 1);
  start(1, 0, fake_gpu_ops()); /* option off */
  capture(&a, NULL);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(FAKE.add_nodes, 0);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 0);
  aotrun_graph_state_destroy(S);
  start(1, 1, fake_gpu_ops()); /* on, but the capture call's input is host */
  capture(&h, NULL);
  assert_int_equal(FAKE.add_nodes, 0);
  int copies = FAKE.copy_inputs;
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(FAKE.copy_inputs, copies + 1);
  aotrun_graph_state_destroy(S);
  aotrun_graph_ops no_node_ops = fake_gpu_ops(); /* a backend without them */
  no_node_ops.point_input_node = NULL;
  start(1, 1, no_node_ops);
  capture(&a, NULL);
  assert_int_equal(FAKE.add_nodes, 0);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
}

static void test_attach_failure_is_a_capture_failure(void **state) {
  (void)state;
  start(2, 1, fake_gpu_ops());
  buf a, b;
  make(&a, 1, 1);
  make(&b, 2, 1);
  FAKE.fault = FAKE_ADD_NODES;
  for (int i = 0; i < 4; i++) assert_int_equal(call(&a, &b), AOTRUN_OK);
  assert_string_equal(aotrun_graph_phase_name(aotrun_graph_state_phase(S)),
                      "Disabled");
  assert_non_null(strstr(aotrun_graph_state_disabled_reason(S),
                         "input copies as graph nodes: "
                         "fake cudaGraphAddMemcpyNode1D failed"));
  assert_int_equal(FAKE.graphs_made, FAKE.graphs_destroyed); /* half made */
  assert_int_equal(call(&b, &a), AOTRUN_OK);
}

static void test_recapture_keeps_the_option(void **state) {
  (void)state;
  start(1, 1, fake_gpu_ops());
  buf a, b;
  make(&a, 1, 1);
  make(&b, 2, 1);
  capture(&a, NULL);
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_recapture(S, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 0);
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* one warm-up call */
  assert_int_equal(call(&a, NULL), AOTRUN_OK); /* capture */
  assert_int_equal(FAKE.add_nodes, 2);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 1);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_the_same_buffers_again_cost_no_setter, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_a_refused_setter_is_set_again_next_call, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nodes_follow_each_calls_inputs,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_host_inputs_turn_the_nodes_off_and_back_on, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_a_refused_pointer_falls_back_to_stream_copies, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          test_a_node_that_cannot_be_turned_off_fails_the_call, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          test_a_node_that_cannot_be_turned_on_copies_instead, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          test_no_nodes_without_the_option_or_a_device_capture, setup,
          teardown),
      cmocka_unit_test_setup_teardown(test_attach_failure_is_a_capture_failure,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_recapture_keeps_the_option, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
