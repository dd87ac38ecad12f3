/*
 * test_graph_done_node.c: option cuda_graph_done_flag through the graph
 * state machine (backend_cuda/cuda_done_flag.h) over the fake GPU: the
 * node is added at capture after the output nodes, every launch of its
 * graph is counted (the host's expected count must match the device's),
 * and only a launch whose outputs were copied by nodes is awaited by the
 * counter; a copy queued after an awaited launch would let the wait end
 * before it, so the fake counts any such copy and every test expects 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "backend_cuda/cuda_graph_state.h"
#include "testing/backend/fake_graph_gpu.h"
#include "testing/backend/graph_call_fixture.h"

static void test_replays_by_nodes_wait_on_the_counter(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  gf_start(1, fake_gpu_ops());
  gf_buf a, b, o, p;
  gf_make(&a, 10, 1);
  gf_make(&b, 20, 1);
  gf_make(&o, 0, 1);
  gf_make(&p, 0, 1);
  gf_capture(&a, &o);
  assert_int_equal(FAKE.done_nodes, 1);
  /* The capture's first launch is counted, not awaited. */
  assert_int_equal(FAKE.done_launches, 1);
  assert_int_equal(FAKE.done_awaitable, 0);
  for (int i = 0; i < 5; i++)
    assert_int_equal(gf_call(i % 2 ? &a : &b, i % 2 ? &o : &p), AOTRUN_OK);
  assert_int_equal(FAKE.done_launches, 6);
  assert_int_equal(FAKE.done_awaitable, 5);
  assert_int_equal(FAKE.flag_waits, 5);
  assert_int_equal(FAKE.copies_while_armed, 0);
}

/* Outputs copied on the stream after the launch: counted, never awaited. */
static void test_copies_after_the_launch_are_not_awaited(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  gf_buf a, o, h;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&h, 0, 0); /* host memory: no output node can write it */
  gf_start(0, fake_gpu_ops()); /* output nodes off */
  gf_capture(&a, &o);
  for (int i = 0; i < 3; i++) assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_nodes, 1);
  assert_int_equal(FAKE.done_launches, 4);
  assert_int_equal(FAKE.done_awaitable, 0);
  aotrun_graph_state_destroy(GF_STATE);
  fake_gpu_reset();
  FAKE.done_flag = 1;
  gf_start(1, fake_gpu_ops()); /* nodes on, then a host output */
  gf_capture(&a, &o);
  assert_int_equal(gf_call(&a, &h), AOTRUN_OK);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK); /* by nodes again */
  assert_int_equal(FAKE.done_launches, 3);
  assert_int_equal(FAKE.done_awaitable, 1);
  assert_int_equal(FAKE.flag_waits, 1);
  assert_int_equal(FAKE.copies_while_armed, 0);
}

/* A refused destination falls back to a copy: not awaited either. */
static void test_a_refused_node_is_not_awaited(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o, bad;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&bad, 0, 1);
  gf_capture(&a, &o);
  FAKE.refuse_dst = bad.v;
  assert_int_equal(gf_call(&a, &bad), AOTRUN_OK);
  assert_int_equal(FAKE.done_awaitable, 0);
  assert_int_equal(FAKE.copies_while_armed, 0);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_awaitable, 1);
}

/* Option off, or a backend without the ops: no node, nothing counted. */
static void test_no_node_without_the_option_or_ops(void **state) {
  (void)state;
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_start(1, fake_gpu_ops()); /* FAKE.done_flag 0 */
  gf_capture(&a, &o);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_nodes + FAKE.done_launches, 0);
  aotrun_graph_state_destroy(GF_STATE);
  fake_gpu_reset();
  FAKE.done_flag = 1;
  aotrun_graph_ops ops = fake_gpu_ops();
  ops.done_launched = NULL; /* one of the pair: neither is used */
  gf_start(1, ops);
  gf_capture(&a, &o);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_nodes + FAKE.done_launches, 0);
}

/* Its memory could not be made: the graph goes on without the node, and
 * the log says why. */
static void test_a_node_not_made_is_logged_and_skipped(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  FAKE.done_refuse = "cuda_graph_done_flag: the counter's memory could not "
                     "be made: out of memory";
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_capture(&a, &o);
  assert_non_null(strstr(FAKE.logs, "method forward: cuda_graph_done_flag: "
                                    "the counter's memory could not be "
                                    "made: out of memory; its replays end "
                                    "in cudaStreamSynchronize"));
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_launches, 0);
}

/* Adding the node failed: a capture failure (graphs off, the call right). */
static void test_a_failed_add_is_a_capture_failure(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  FAKE.fault = FAKE_ADD_DONE;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  for (int i = 0; i < 4; i++) assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_string_equal(
      aotrun_graph_phase_name(aotrun_graph_state_phase(GF_STATE)),
      "Disabled");
  assert_non_null(strstr(aotrun_graph_state_disabled_reason(GF_STATE),
                         "done counter node: fake cudaGraphAddKernelNode"));
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_launches, 0);
}

/* A recapture counts the new graph's launches on (the device's count
 * never restarts, so neither does the host's). */
static void test_recapture_keeps_counting(void **state) {
  (void)state;
  FAKE.done_flag = 1;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_capture(&a, &o);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_recapture(GF_STATE, &err), AOTRUN_OK);
  gf_capture(&a, &o);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.done_nodes, 2);
  /* Every launch was of a graph with the node, and each was counted. */
  assert_int_equal(FAKE.done_launches, FAKE.launches);
  assert_true(FAKE.done_awaitable >= 2);
  assert_int_equal(FAKE.done_awaitable, FAKE.flag_waits);
  assert_int_equal(FAKE.copies_while_armed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_replays_by_nodes_wait_on_the_counter, gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_copies_after_the_launch_are_not_awaited, gf_setup,
          gf_teardown),
      cmocka_unit_test_setup_teardown(test_a_refused_node_is_not_awaited,
                                      gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(test_no_node_without_the_option_or_ops,
                                      gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_a_node_not_made_is_logged_and_skipped, gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(test_a_failed_add_is_a_capture_failure,
                                      gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(test_recapture_keeps_counting, gf_setup,
                                      gf_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
