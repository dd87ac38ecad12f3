/*
 * test_graph_input_nodes.c: option cuda_graph_input_nodes
 * (backend_cuda/graph_input_nodes.h) through the graph state machine, on
 * the CPU. The fake ops simulate a GPU closely enough to catch a stale
 * pointer: "device" memory is host memory, a graph is the kernel
 * out = in0 + in1 + 1 over the static buffers, an executable graph keeps
 * its own copy of the copy nodes (pointer, size, on/off) as CUDA does, and
 * a launch runs the enabled nodes, then the kernel. Every call's output is
 * checked against its own inputs, so a node left pointing at a previous
 * call's buffer, or left on while the stream copy ran, shows as a wrong
 * value.
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

#define N 4 /* floats per tensor */
#define MAX_IN 2
#define MAX_NODES 8

typedef struct fake_node {
  void *dst;
  const void *src;
  size_t bytes;
  int on;
} fake_node;

typedef struct fake_graph {
  const float *in[MAX_IN]; /* the static buffers the kernel reads */
  size_t num_in;
  float *out;              /* the output buffer it writes */
  fake_node nodes[MAX_NODES];
  size_t num_nodes;
} fake_graph;

typedef struct fake_exec {
  fake_graph *graph;
  fake_node nodes[MAX_NODES]; /* instantiated copies, updated by setters */
} fake_exec;

static struct {
  fake_graph *capturing; /* the graph being recorded */
  int copy_inputs, add_nodes, points, enables, launches;
  int graphs_made, graphs_destroyed;
  const void *refuse_src;    /* point_input_node refuses this source */
  int fail_add, fail_enable; /* the next add_input_nodes / enable fails */
  char last_log[AOTRUN_ERROR_MESSAGE_SIZE + 256];
} F;

static size_t nbytes(const DLTensor *t) {
  size_t n = (size_t)t->dtype.bits / 8;
  for (int32_t d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

static void kernel(const float *const *in, size_t num_in, float *out) {
  for (size_t j = 0; j < N; j++) {
    out[j] = 1;
    for (size_t i = 0; i < num_in; i++) out[j] += in[i][j];
  }
}

static aotrun_status f_run_direct(void *ctx, const DLTensor *in, size_t ni,
                                  DLTensor *out, size_t no,
                                  aotrun_error *err) {
  (void)ctx, (void)no, (void)err;
  const float *p[MAX_IN];
  for (size_t i = 0; i < ni; i++) p[i] = in[i].data;
  kernel(p, ni, out[0].data);
  return AOTRUN_OK;
}

static aotrun_status f_run_capture(void *ctx, const DLTensor *st, size_t ni,
                                   AtenTensorHandle *out, size_t no,
                                   aotrun_error *err) {
  (void)ctx, (void)no, (void)err;
  fake_graph *g = F.capturing;
  for (size_t i = 0; i < ni; i++) g->in[i] = st[i].data;
  g->num_in = ni;
  g->out = calloc(N, sizeof(float));
  out[0] = (AtenTensorHandle)g->out;
  return AOTRUN_OK;
}

static aotrun_status f_begin(void *ctx, aotrun_error *err) {
  (void)ctx, (void)err;
  F.capturing = calloc(1, sizeof(fake_graph));
  return AOTRUN_OK;
}

static aotrun_status f_end(void *ctx, void **graph, aotrun_error *err) {
  (void)ctx, (void)err;
  *graph = F.capturing;
  F.capturing = NULL;
  F.graphs_made++;
  return AOTRUN_OK;
}

static int f_is_capturing(void *ctx) {
  (void)ctx;
  return F.capturing != NULL;
}

static aotrun_status f_instantiate(void *ctx, void *graph, void **exec,
                                   aotrun_error *err) {
  (void)ctx, (void)err;
  fake_exec *e = calloc(1, sizeof *e);
  e->graph = graph;
  memcpy(e->nodes, e->graph->nodes, sizeof e->nodes);
  *exec = e;
  return AOTRUN_OK;
}

static aotrun_status f_launch(void *ctx, void *exec, aotrun_error *err) {
  (void)ctx, (void)err;
  fake_exec *e = exec;
  F.launches++;
  for (size_t i = 0; i < e->graph->num_nodes; i++)
    if (e->nodes[i].on)
      memcpy(e->nodes[i].dst, e->nodes[i].src, e->nodes[i].bytes);
  kernel(e->graph->in, e->graph->num_in, e->graph->out);
  return AOTRUN_OK;
}

static aotrun_status f_ok(void *ctx, aotrun_error *err) {
  (void)ctx, (void)err;
  return AOTRUN_OK;
}

static void f_destroy_graph(void *ctx, void *graph) {
  (void)ctx;
  F.graphs_destroyed++;
  free(graph);
}

static void f_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static void f_nothing(void *ctx) { (void)ctx; }

static aotrun_status f_static_alloc(void *ctx, size_t bytes, void **ptr,
                                    aotrun_error *err) {
  (void)ctx, (void)err;
  *ptr = malloc(bytes);
  return AOTRUN_OK;
}

static aotrun_status f_copy_inputs(void *ctx, const DLTensor *in,
                                   const DLTensor *st, size_t n,
                                   aotrun_error *err) {
  (void)ctx, (void)err;
  F.copy_inputs++;
  for (size_t i = 0; i < n; i++) memcpy(st[i].data, in[i].data, nbytes(&in[i]));
  return AOTRUN_OK;
}

static aotrun_status f_copy_outputs(void *ctx, AtenTensorHandle *src,
                                    DLTensor *out, size_t n,
                                    aotrun_error *err) {
  (void)ctx, (void)n, (void)err;
  memcpy(out[0].data, src[0], N * sizeof(float));
  return AOTRUN_OK;
}

static void f_delete_outputs(void *ctx, AtenTensorHandle *h, size_t n) {
  (void)ctx;
  for (size_t i = 0; i < n; i++) free(h[i]);
}

static aotrun_status f_pool_create(void *ctx, void **pool,
                                   aotrun_error *err) {
  (void)ctx, (void)err;
  *pool = malloc(1);
  return AOTRUN_OK;
}

static void f_pool_install(void *ctx, void *pool) { (void)ctx, (void)pool; }

static size_t f_pool_bytes(void *ctx, void *pool) {
  (void)ctx, (void)pool;
  return 0;
}

static void f_log(void *ctx, int32_t level, const char *message) {
  (void)ctx, (void)level;
  snprintf(F.last_log, sizeof F.last_log, "%s", message);
}

static aotrun_status f_add_input_nodes(void *ctx, void *graph,
                                       const DLTensor *in,
                                       const DLTensor *st, size_t n,
                                       void **nodes, aotrun_error *err) {
  (void)ctx;
  F.add_nodes++;
  fake_graph *g = graph;
  for (size_t i = 0; i < n; i++) {
    if (F.fail_add && i == n - 1) { /* half made, as a real failure may be */
      F.fail_add = 0;
      return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                              "cudaGraphAddMemcpyNode1D failed: fake");
    }
    g->nodes[g->num_nodes] =
        (fake_node){st[i].data, in[i].data, nbytes(&in[i]), 1};
    nodes[i] = (void *)(uintptr_t)(g->num_nodes + 1); /* index + 1 */
    g->num_nodes++;
  }
  return AOTRUN_OK;
}

static fake_node *node_of(void *exec, void *node) {
  return &((fake_exec *)exec)->nodes[(uintptr_t)node - 1];
}

static aotrun_status f_point(void *ctx, void *exec, void *node,
                             const DLTensor *in, const DLTensor *st,
                             aotrun_error *err) {
  (void)ctx;
  F.points++;
  if (in->data == F.refuse_src)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGraphExecMemcpyNodeSetParams1D failed: "
                            "invalid argument");
  fake_node *x = node_of(exec, node);
  x->src = in->data;
  x->dst = st->data;
  x->bytes = nbytes(in);
  return AOTRUN_OK;
}

static aotrun_status f_enable(void *ctx, void *exec, void *node, int on,
                              aotrun_error *err) {
  (void)ctx;
  F.enables++;
  if (F.fail_enable) {
    F.fail_enable = 0;
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGraphNodeSetEnabled failed: fake");
  }
  node_of(exec, node)->on = on;
  return AOTRUN_OK;
}

static aotrun_graph_ops fake_ops(void) {
  aotrun_graph_ops o = {
      .run_direct = f_run_direct,
      .run_capture = f_run_capture,
      .begin_capture = f_begin,
      .end_capture = f_end,
      .is_capturing = f_is_capturing,
      .instantiate = f_instantiate,
      .launch = f_launch,
      .synchronize = f_ok,
      .destroy_graph = f_destroy_graph,
      .destroy_exec = f_free,
      .clear_error = f_nothing,
      .static_alloc = f_static_alloc,
      .static_free = f_free,
      .copy_inputs = f_copy_inputs,
      .copy_outputs = f_copy_outputs,
      .delete_outputs = f_delete_outputs,
      .pool_create = f_pool_create,
      .pool_install = f_pool_install,
      .pool_destroy = f_free,
      .pool_bytes = f_pool_bytes,
      .log = f_log,
      .add_input_nodes = f_add_input_nodes,
      .point_input_node = f_point,
      .enable_input_node = f_enable,
  };
  return o;
}

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
  memset(&F, 0, sizeof F);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  aotrun_graph_state_destroy(S);
  S = NULL;
  assert_int_equal(F.graphs_made, F.graphs_destroyed);
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
    snprintf(F.last_log, sizeof F.last_log, "%s", err.message);
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

/* ---- tests ---- */

static void test_nodes_follow_each_calls_inputs(void **state) {
  (void)state;
  start(1, 1, fake_ops());
  buf a, b, c;
  make(&a, 10, 1);
  make(&b, 20, 1);
  make(&c, 30, 1);
  capture(&a, NULL);
  assert_int_equal(F.add_nodes, 1);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 1);
  int copies = F.copy_inputs;
  buf *order[] = {&b, &c, &a, &c, &b, &b};
  for (int i = 0; i < 6; i++) assert_int_equal(call(order[i], NULL), AOTRUN_OK);
  assert_int_equal(F.copy_inputs, copies); /* no stream copy on replay */
  assert_int_equal(F.points, 6);
  assert_int_equal(F.enables, 0); /* on from the start, never switched */
  /* A buffer changed in place between calls is read at the launch. */
  a.v[0] = 99;
  assert_int_equal(call(&a, NULL), AOTRUN_OK);
}

static void test_host_inputs_turn_the_nodes_off_and_back_on(void **state) {
  (void)state;
  start(2, 1, fake_ops());
  buf a, b, h, g;
  make(&a, 1, 1);
  make(&b, 2, 1);
  make(&h, 50, 0); /* host memory */
  make(&g, 60, 1);
  capture(&a, &b);
  int copies = F.copy_inputs;
  assert_int_equal(call(&h, &b), AOTRUN_OK); /* off, copied on the stream */
  assert_int_equal(F.enables, 2);
  assert_int_equal(F.copy_inputs, copies + 1);
  assert_non_null(strstr(F.last_log, "an input is not in device memory"));
  assert_int_equal(call(&h, &g), AOTRUN_OK); /* stays off: no switching */
  assert_int_equal(F.enables, 2);
  assert_int_equal(call(&g, &a), AOTRUN_OK); /* on again, re-pointed */
  assert_int_equal(F.enables, 4);
  assert_int_equal(F.copy_inputs, copies + 2);
  assert_int_equal(call(&b, &g), AOTRUN_OK);
  assert_int_equal(F.copy_inputs, copies + 2);
}

static void test_a_refused_pointer_falls_back_to_stream_copies(void **state) {
  (void)state;
  start(2, 1, fake_ops());
  buf a, b, bad, d;
  make(&a, 1, 1);
  make(&b, 2, 1);
  make(&bad, 7, 1);
  make(&d, 9, 1);
  capture(&a, &b);
  F.refuse_src = bad.v;
  int copies = F.copy_inputs;
  /* input 0 is re-pointed, input 1 refused: both nodes go off. */
  assert_int_equal(call(&d, &bad), AOTRUN_OK);
  assert_int_equal(F.copy_inputs, copies + 1);
  assert_non_null(strstr(F.last_log, "input 1: "));
  assert_non_null(strstr(F.last_log, "invalid argument"));
  assert_int_equal(call(&b, &d), AOTRUN_OK); /* nodes again */
  assert_int_equal(F.copy_inputs, copies + 1);
}

static void test_a_node_that_cannot_be_turned_off_fails_the_call(
    void **state) {
  (void)state;
  start(1, 1, fake_ops());
  buf a, h, b;
  make(&a, 1, 1);
  make(&h, 5, 0);
  make(&b, 8, 1);
  capture(&a, NULL);
  F.fail_enable = 1;
  assert_int_equal(call(&h, NULL), AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(F.last_log, "turning input node 0 off"));
  /* Mixed state after the failure: the next host call switches again. */
  assert_int_equal(call(&h, NULL), AOTRUN_OK);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(call(&h, NULL), AOTRUN_OK);
}

static void test_a_node_that_cannot_be_turned_on_copies_instead(
    void **state) {
  (void)state;
  start(1, 1, fake_ops());
  buf a, h, b;
  make(&a, 1, 1);
  make(&h, 5, 0);
  make(&b, 8, 1);
  capture(&a, NULL);
  assert_int_equal(call(&h, NULL), AOTRUN_OK); /* off */
  F.fail_enable = 1;
  int copies = F.copy_inputs;
  assert_int_equal(call(&b, NULL), AOTRUN_OK); /* on fails: off, copied */
  assert_int_equal(F.copy_inputs, copies + 1);
  assert_non_null(strstr(F.last_log, "turning input node 0 on"));
  assert_int_equal(call(&a, NULL), AOTRUN_OK); /* on now */
  assert_int_equal(F.copy_inputs, copies + 1);
}

static void test_no_nodes_without_the_option_or_a_device_capture(
    void **state) {
  (void)state;
  buf a, h, b;
  make(&a, 1, 1);
  make(&h, 5, 0);
  make(&b, 8, 1);
  start(1, 0, fake_ops()); /* option off */
  capture(&a, NULL);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(F.add_nodes, 0);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 0);
  aotrun_graph_state_destroy(S);
  start(1, 1, fake_ops()); /* on, but the capture call's input is host */
  capture(&h, NULL);
  assert_int_equal(F.add_nodes, 0);
  int copies = F.copy_inputs;
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
  assert_int_equal(F.copy_inputs, copies + 1);
  aotrun_graph_state_destroy(S);
  aotrun_graph_ops no_node_ops = fake_ops(); /* a backend without them */
  no_node_ops.point_input_node = NULL;
  start(1, 1, no_node_ops);
  capture(&a, NULL);
  assert_int_equal(F.add_nodes, 0);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
}

static void test_attach_failure_is_a_capture_failure(void **state) {
  (void)state;
  start(2, 1, fake_ops());
  buf a, b;
  make(&a, 1, 1);
  make(&b, 2, 1);
  F.fail_add = 1;
  for (int i = 0; i < 4; i++) assert_int_equal(call(&a, &b), AOTRUN_OK);
  assert_string_equal(aotrun_graph_phase_name(aotrun_graph_state_phase(S)),
                      "Disabled");
  assert_non_null(strstr(aotrun_graph_state_disabled_reason(S),
                         "input copies as graph nodes: "
                         "cudaGraphAddMemcpyNode1D failed"));
  assert_int_equal(F.graphs_made, F.graphs_destroyed); /* half-made graph */
  assert_int_equal(call(&b, &a), AOTRUN_OK);
}

static void test_recapture_keeps_the_option(void **state) {
  (void)state;
  start(1, 1, fake_ops());
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
  assert_int_equal(F.add_nodes, 2);
  assert_int_equal(aotrun_graph_state_num_input_node_graphs(S), 1);
  assert_int_equal(call(&b, NULL), AOTRUN_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
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
