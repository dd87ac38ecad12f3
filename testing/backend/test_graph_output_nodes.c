/*
 * test_graph_output_nodes.c: option cuda_graph_output_nodes
 * (backend_cuda/graph_output_nodes.h) through the graph state machine, on
 * the CPU, over the fake GPU of fake_graph_gpu.h (the model out = in + 1;
 * an executable graph keeps its own copy of its copy nodes and runs the
 * output nodes after the kernel, as CUDA does). Every call's output is
 * checked against its input, and the buffers of earlier calls are checked
 * untouched, so a node left pointing at a previous call's output, or left
 * on while the copy after the launch ran, shows as a wrong value.
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
#include "testing/backend/graph_call_fixture.h"

/* ---- tests ---- */

static void test_nodes_copy_into_each_calls_outputs(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, b, o1, o2, o3;
  gf_make(&a, 10, 1);
  gf_make(&b, 20, 1);
  gf_make(&o1, 0, 1);
  gf_make(&o2, 0, 1);
  gf_make(&o3, 0, 1);
  gf_capture(&a, &o1);
  assert_int_equal(FAKE.add_out_nodes, 1);
  assert_int_equal(aotrun_graph_state_num_output_node_graphs(GF_STATE), 1);
  int copies = FAKE.copy_outputs, finishes = FAKE.finishes;
  gf_buf *in[] = {&b, &a, &b, &a, &a};
  gf_buf *out[] = {&o2, &o3, &o1, &o2, &o2};
  for (int i = 0; i < 5; i++)
    assert_int_equal(gf_call(in[i], out[i]), AOTRUN_OK);
  assert_int_equal(FAKE.copy_outputs, copies); /* none after the launch */
  assert_int_equal(FAKE.finishes, finishes + 5);
  assert_int_equal(FAKE.out_points, 4); /* o2, o3, o1, o2; o2 again kept */
  assert_int_equal(FAKE.out_enables, 0);
}

/* The capture call's own output came through the node of its first launch. */
static void test_the_capture_call_is_copied_by_its_nodes(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 3, 1);
  gf_make(&o, 0, 1);
  for (int i = 0; i < 3; i++) assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  int copies = FAKE.copy_outputs;
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK); /* the capture call */
  assert_int_equal(FAKE.copy_outputs, copies);
  assert_int_equal(FAKE.add_out_nodes, 1);
}

static void test_host_outputs_turn_the_nodes_off_and_back_on(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o, h, p;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&h, 0, 0); /* host memory */
  gf_make(&p, 0, 1);
  gf_capture(&a, &o);
  int copies = FAKE.copy_outputs;
  assert_int_equal(gf_call(&a, &h), AOTRUN_OK); /* off, copied after */
  assert_int_equal(FAKE.copy_outputs, copies + 1);
  assert_int_equal(FAKE.out_enables, 1);
  assert_non_null(strstr(FAKE.last_log, "not a plain device-to-device"));
  for (int j = 0; j < GF_N; j++) o.v[j] = -1000;
  assert_int_equal(gf_call(&a, &h), AOTRUN_OK); /* stays off */
  gf_untouched(&o, 0); /* the node that pointed at o did not run */
  assert_int_equal(FAKE.out_enables, 1);
  assert_int_equal(gf_call(&a, &p), AOTRUN_OK); /* on again, re-pointed */
  assert_int_equal(FAKE.out_enables, 2);
  assert_int_equal(FAKE.copy_outputs, copies + 2);
}

static void test_a_refused_destination_copies_after_the_launch(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o, bad, p;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&bad, 0, 1);
  gf_make(&p, 0, 1);
  gf_capture(&a, &o);
  FAKE.refuse_dst = bad.v;
  int copies = FAKE.copy_outputs;
  assert_int_equal(gf_call(&a, &bad), AOTRUN_OK);
  assert_int_equal(FAKE.copy_outputs, copies + 1);
  assert_non_null(strstr(FAKE.last_log, "output 0: "));
  assert_non_null(strstr(FAKE.last_log, "invalid argument"));
  assert_int_equal(gf_call(&a, &p), AOTRUN_OK); /* nodes again */
  assert_int_equal(FAKE.copy_outputs, copies + 1);
}

/* A caller's tensor that does not fit fails before anything is launched. */
static void test_an_output_that_does_not_fit_fails_before_the_launch(
    void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o, wide;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&wide, 0, 1);
  wide.t.shape = gf_long_shape;
  gf_capture(&a, &o);
  int launches = FAKE.launches;
  assert_int_equal(gf_call(&a, &wide), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(FAKE.last_log, "4 values into 5"));
  assert_int_equal(FAKE.launches, launches);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
}

static void test_a_node_that_cannot_be_turned_off_fails_the_call(
    void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o, h;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&h, 0, 0);
  gf_capture(&a, &o);
  FAKE.fault = FAKE_OUT_ENABLE;
  int launches = FAKE.launches;
  assert_int_equal(gf_call(&a, &h), AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(FAKE.last_log, "turning output node 0 off"));
  assert_int_equal(FAKE.launches, launches);
  /* Mixed state after the failure: the next calls switch again. */
  assert_int_equal(gf_call(&a, &h), AOTRUN_OK);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(gf_call(&a, &h), AOTRUN_OK);
}

/* A plan or a wait that fails is the call's error, reported as such. */
static void test_plan_and_finish_failures_are_the_calls(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_capture(&a, &o);
  FAKE.fault = FAKE_PLAN;
  assert_int_equal(gf_call(&a, &o), AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(FAKE.last_log, "output plan"));
  FAKE.fault = FAKE_FINISH;
  assert_int_equal(gf_call(&a, &o), AOTRUN_ERR_ACCESS_FAILED);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
}

static void test_no_nodes_without_the_option_ops_or_device_output(
    void **state) {
  (void)state;
  gf_buf a, o, h;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  gf_make(&h, 0, 0);
  gf_start(0, fake_gpu_ops()); /* option off */
  gf_capture(&a, &o);
  int copies = FAKE.copy_outputs;
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_int_equal(FAKE.copy_outputs, copies + 1);
  assert_int_equal(aotrun_graph_state_num_output_node_graphs(GF_STATE), 0);
  aotrun_graph_state_destroy(GF_STATE);
  gf_start(1, fake_gpu_ops()); /* on, but the capture call's output is host */
  gf_capture(&a, &h);
  assert_int_equal(FAKE.add_out_nodes, 0);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  aotrun_graph_state_destroy(GF_STATE);
  aotrun_graph_ops no_node_ops = fake_gpu_ops(); /* a backend without them */
  no_node_ops.finish_outputs = NULL;
  gf_start(1, no_node_ops);
  gf_capture(&a, &o);
  assert_int_equal(FAKE.add_out_nodes, 0);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
}

static void test_attach_failure_is_a_capture_failure(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, o;
  gf_make(&a, 1, 1);
  gf_make(&o, 0, 1);
  FAKE.fault = FAKE_ADD_OUT_NODES;
  for (int i = 0; i < 4; i++) assert_int_equal(gf_call(&a, &o), AOTRUN_OK);
  assert_string_equal(aotrun_graph_phase_name(aotrun_graph_state_phase(GF_STATE)),
                      "Disabled");
  assert_int_equal(aotrun_graph_state_num_output_node_graphs(GF_STATE), 0);
  assert_int_equal(gf_call(&a, &o), AOTRUN_OK); /* without a graph */
}

/* With input nodes too: both kinds of node in one graph, each call's
 * input read and output written, the same buffers costing no setter. */
static void test_input_and_output_nodes_together(void **state) {
  (void)state;
  gf_start(1, fake_gpu_ops());
  gf_buf a, b, o, p;
  gf_make(&a, 1, 1);
  gf_make(&b, 50, 1);
  gf_make(&o, 0, 1);
  gf_make(&p, 0, 1);
  gf_capture(&a, &o);
  assert_int_equal(FAKE.add_nodes, 1);
  assert_int_equal(FAKE.add_out_nodes, 1);
  int copies = FAKE.copy_inputs + FAKE.copy_outputs;
  for (int i = 0; i < 3; i++) {
    b.v[0] = (float)(7 * i);
    assert_int_equal(gf_call(&b, &p), AOTRUN_OK);
  }
  assert_int_equal(FAKE.points, 1);
  assert_int_equal(FAKE.out_points, 1);
  assert_int_equal(FAKE.copy_inputs + FAKE.copy_outputs, copies);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_nodes_copy_into_each_calls_outputs,
                                      gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_the_capture_call_is_copied_by_its_nodes, gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_host_outputs_turn_the_nodes_off_and_back_on, gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_a_refused_destination_copies_after_the_launch, gf_setup,
          gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_an_output_that_does_not_fit_fails_before_the_launch, gf_setup,
          gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_a_node_that_cannot_be_turned_off_fails_the_call, gf_setup,
          gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_plan_and_finish_failures_are_the_calls, gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(
          test_no_nodes_without_the_option_ops_or_device_output, gf_setup,
          gf_teardown),
      cmocka_unit_test_setup_teardown(test_attach_failure_is_a_capture_failure,
                                      gf_setup, gf_teardown),
      cmocka_unit_test_setup_teardown(test_input_and_output_nodes_together,
                                      gf_setup, gf_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
