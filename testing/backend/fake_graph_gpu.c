/* fake_graph_gpu.c: see fake_graph_gpu.h. */
#include "testing/backend/fake_graph_gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IN 8
#define MAX_NODES 8

fake_gpu FAKE;

typedef struct node {
  void *dst;
  const void *src;
  size_t bytes;
  int on;
  int after; /* an output node: runs after the kernel */
} node;

typedef struct graph {
  const float *in[MAX_IN]; /* the static buffers the kernel reads */
  size_t num_in, numel;
  float *out;              /* the output tensor's values */
  node nodes[MAX_NODES];
  size_t num_nodes;
} graph;

typedef struct exec {
  graph *g;
  node nodes[MAX_NODES]; /* instantiated copies, changed by the setters */
} exec;

/* An output handle: its element count, then the values. */
typedef struct output {
  size_t numel;
  float v[];
} output;

void fake_gpu_reset(void) { memset(&FAKE, 0, sizeof FAKE); }

/* Where a tensor's bytes start (DLPack: data + byte_offset). */
static void *at(const DLTensor *t) { return (char *)t->data + t->byte_offset; }

static aotrun_status fails(fake_fault f, aotrun_error *err,
                           const char *what) {
  if (FAKE.fault != f) return AOTRUN_OK;
  FAKE.fault = FAKE_OK;
  return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED, "fake %s failed",
                          what);
}

static size_t numel_of(const DLTensor *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

void fake_gpu_model(const float *const *in, size_t n, size_t numel,
                    float *out) {
  for (size_t j = 0; j < numel; j++) {
    out[j] = 1;
    for (size_t i = 0; i < n; i++) out[j] += in[i][j];
  }
}

static aotrun_status run_direct(void *ctx, const DLTensor *in, size_t ni,
                                DLTensor *out, size_t no, aotrun_error *err) {
  (void)ctx, (void)no;
  aotrun_status st = fails(FAKE_RUN_DIRECT, err, "model run");
  if (st != AOTRUN_OK) return st;
  const float *p[MAX_IN];
  for (size_t i = 0; i < ni && i < MAX_IN; i++) p[i] = at(&in[i]);
  fake_gpu_model(p, ni, numel_of(&in[0]), out[0].data);
  return AOTRUN_OK;
}

static aotrun_status run_capture(void *ctx, const DLTensor *st, size_t ni,
                                 AtenTensorHandle *out, size_t no,
                                 aotrun_error *err) {
  (void)ctx, (void)no;
  aotrun_status s = fails(FAKE_RUN_CAPTURE, err, "shim inside the capture");
  if (s != AOTRUN_OK) return s;
  graph *g = FAKE.capturing;
  g->num_in = ni < MAX_IN ? ni : MAX_IN;
  g->numel = numel_of(&st[0]);
  for (size_t i = 0; i < g->num_in; i++) g->in[i] = st[i].data;
  output *o = malloc(sizeof *o + g->numel * sizeof(float));
  o->numel = g->numel;
  g->out = o->v;
  out[0] = (AtenTensorHandle)o;
  FAKE.outputs_made++;
  return AOTRUN_OK;
}

static aotrun_status begin(void *ctx, aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fails(FAKE_BEGIN, err, "cudaStreamBeginCapture");
  if (st == AOTRUN_OK) FAKE.capturing = calloc(1, sizeof(graph));
  return st;
}

/* As cudaStreamEndCapture: the capture ends even when the call fails. */
static aotrun_status end(void *ctx, void **g, aotrun_error *err) {
  (void)ctx;
  *g = FAKE.capturing;
  FAKE.capturing = NULL;
  if (*g != NULL) FAKE.graphs_made++;
  return fails(FAKE_END, err, "cudaStreamEndCapture");
}

static int is_capturing(void *ctx) {
  (void)ctx;
  return FAKE.capturing != NULL;
}

static aotrun_status instantiate(void *ctx, void *g, void **out,
                                 aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fails(FAKE_INSTANTIATE, err, "cudaGraphInstantiate");
  if (st != AOTRUN_OK) return st;
  exec *e = calloc(1, sizeof *e);
  e->g = g;
  memcpy(e->nodes, e->g->nodes, sizeof e->nodes);
  *out = e;
  FAKE.execs_made++;
  return AOTRUN_OK;
}

static void run_nodes(const exec *e, int after) {
  for (size_t i = 0; i < e->g->num_nodes; i++)
    if (e->nodes[i].on && e->nodes[i].after == after)
      memcpy(e->nodes[i].dst, e->nodes[i].src, e->nodes[i].bytes);
}

static aotrun_status launch(void *ctx, void *x, aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fails(FAKE_LAUNCH, err, "cudaGraphLaunch");
  if (st != AOTRUN_OK) return st;
  exec *e = x;
  FAKE.launches++;
  run_nodes(e, 0);
  fake_gpu_model(e->g->in, e->g->num_in, e->g->numel, e->g->out);
  run_nodes(e, 1);
  return AOTRUN_OK;
}

static aotrun_status synchronize(void *ctx, aotrun_error *err) {
  (void)ctx;
  return fails(FAKE_SYNC, err, "cudaStreamSynchronize");
}

static void destroy_graph(void *ctx, void *g) {
  (void)ctx;
  FAKE.graphs_destroyed++;
  free(g);
}

static void destroy_exec(void *ctx, void *e) {
  (void)ctx;
  FAKE.execs_destroyed++;
  free(e);
}

static void clear_error(void *ctx) { (void)ctx; }

static aotrun_status static_alloc(void *ctx, size_t bytes, void **ptr,
                                  aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fails(FAKE_STATIC_ALLOC, err, "cudaMalloc");
  if (st != AOTRUN_OK) return st;
  *ptr = malloc(bytes);
  FAKE.static_allocs++;
  return AOTRUN_OK;
}

static void static_free(void *ctx, void *p) {
  (void)ctx;
  FAKE.static_frees++;
  free(p);
}

static aotrun_status copy_inputs(void *ctx, const DLTensor *in,
                                 const DLTensor *st, size_t n,
                                 aotrun_error *err) {
  (void)ctx;
  aotrun_status s = fails(FAKE_COPY_INPUTS, err, "cudaMemcpyAsync");
  if (s != AOTRUN_OK) return s;
  FAKE.copy_inputs++;
  for (size_t i = 0; i < n; i++)
    memcpy(st[i].data, at(&in[i]), numel_of(&in[i]) * sizeof(float));
  return AOTRUN_OK;
}

/* The runner's check of the caller's output, as far as the fake goes. */
static aotrun_status fits(const output *o, const DLTensor *out,
                          aotrun_error *err) {
  if (o->numel != numel_of(out))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "fake: output of %zu values into %zu", o->numel,
                            numel_of(out));
  return AOTRUN_OK;
}

static aotrun_status copy_outputs(void *ctx, AtenTensorHandle *src,
                                  DLTensor *out, size_t n,
                                  aotrun_error *err) {
  (void)ctx, (void)n;
  aotrun_status s = fails(FAKE_COPY_OUTPUTS, err, "output copy");
  if (s != AOTRUN_OK) return s;
  FAKE.copy_outputs++;
  if (FAKE.armed) FAKE.copies_while_armed++;
  const output *o = (const output *)src[0];
  s = fits(o, &out[0], err);
  if (s != AOTRUN_OK) return s;
  memcpy(out[0].data, o->v, o->numel * sizeof(float));
  return AOTRUN_OK;
}

static void delete_outputs(void *ctx, AtenTensorHandle *h, size_t n) {
  (void)ctx;
  for (size_t i = 0; i < n; i++)
    if (h[i] != NULL) {
      FAKE.outputs_deleted++;
      free(h[i]);
    }
}

static aotrun_status pool_create(void *ctx, size_t reserve, void **pool,
                                 aotrun_error *err) {
  (void)ctx, (void)reserve;
  aotrun_status st = fails(FAKE_POOL_CREATE, err, "pool");
  if (st != AOTRUN_OK) return st;
  *pool = malloc(1);
  FAKE.pools_made++;
  return AOTRUN_OK;
}

static void pool_install(void *ctx, void *pool) { (void)ctx, (void)pool; }

static void pool_destroy(void *ctx, void *pool) {
  (void)ctx;
  FAKE.pools_destroyed++;
  free(pool);
}

static size_t pool_bytes(void *ctx, void *pool) {
  (void)ctx, (void)pool;
  return 512;
}

static void log_message(void *ctx, int32_t level, const char *message) {
  (void)ctx, (void)level;
  snprintf(FAKE.last_log, sizeof FAKE.last_log, "%s", message);
  size_t used = strlen(FAKE.logs);
  snprintf(FAKE.logs + used, sizeof FAKE.logs - used, "%s\n", message);
}

static aotrun_status add_input_nodes(void *ctx, void *x, const DLTensor *in,
                                     const DLTensor *st, size_t n,
                                     void **nodes, aotrun_error *err) {
  (void)ctx;
  FAKE.add_nodes++;
  graph *g = x;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 == n) {
      aotrun_status s = fails(FAKE_ADD_NODES, err, "cudaGraphAddMemcpyNode1D");
      if (s != AOTRUN_OK) return s;
    }
    if (g->num_nodes == MAX_NODES)
      return aotrun_error_set(err, AOTRUN_ERR_INTERNAL, "fake: nodes full");
    g->nodes[g->num_nodes] =
        (node){st[i].data, at(&in[i]), numel_of(&in[i]) * sizeof(float), 1, 0};
    nodes[i] = (void *)(uintptr_t)(g->num_nodes + 1); /* index + 1 */
    g->num_nodes++;
  }
  return AOTRUN_OK;
}

static node *node_of(void *x, void *n) {
  return &((exec *)x)->nodes[(uintptr_t)n - 1];
}

static aotrun_status point_input_node(void *ctx, void *x, void *n,
                                      const DLTensor *in, const DLTensor *st,
                                      aotrun_error *err) {
  (void)ctx;
  FAKE.points++;
  aotrun_status s = fails(FAKE_POINT, err,
                          "cudaGraphExecMemcpyNodeSetParams1D (invalid "
                          "argument)");
  if (s != AOTRUN_OK) return s;
  if (at(in) == FAKE.refuse_src)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGraphExecMemcpyNodeSetParams1D failed: "
                            "invalid argument");
  node *p = node_of(x, n);
  p->src = at(in);
  p->dst = st->data;
  p->bytes = numel_of(in) * sizeof(float);
  return AOTRUN_OK;
}

static aotrun_status enable_input_node(void *ctx, void *x, void *n, int on,
                                       aotrun_error *err) {
  (void)ctx;
  FAKE.enables++;
  aotrun_status s = fails(FAKE_ENABLE, err, "cudaGraphNodeSetEnabled");
  if (s != AOTRUN_OK) return s;
  node_of(x, n)->on = on;
  return AOTRUN_OK;
}

/* ---- output nodes ---- */

static aotrun_status plan_outputs(void *ctx, AtenTensorHandle *src,
                                  DLTensor *out, size_t n,
                                  aotrun_output_copy *plan,
                                  aotrun_error *err) {
  (void)ctx, (void)n;
  FAKE.plans++;
  aotrun_status s = fails(FAKE_PLAN, err, "output plan");
  if (s != AOTRUN_OK) return s;
  const output *o = (const output *)src[0];
  s = fits(o, &out[0], err);
  if (s != AOTRUN_OK) return s;
  int direct = out[0].device.device_type == kDLCUDA && out[0].data != NULL;
  plan[0] = (aotrun_output_copy){o->v, direct ? at(&out[0]) : NULL,
                                 o->numel * sizeof(float), direct};
  return AOTRUN_OK;
}

static aotrun_status finish_outputs(void *ctx, aotrun_error *err) {
  (void)ctx;
  FAKE.finishes++;
  if (FAKE.armed) FAKE.flag_waits++;
  FAKE.armed = 0;
  return fails(FAKE_FINISH, err, "cudaStreamSynchronize");
}

static aotrun_status add_output_nodes(void *ctx, void *x,
                                      const aotrun_output_copy *plan,
                                      size_t n, void **nodes,
                                      aotrun_error *err) {
  (void)ctx;
  FAKE.add_out_nodes++;
  graph *g = x;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 == n) {
      aotrun_status s =
          fails(FAKE_ADD_OUT_NODES, err, "cudaGraphAddMemcpyNode1D");
      if (s != AOTRUN_OK) return s;
    }
    if (g->num_nodes == MAX_NODES)
      return aotrun_error_set(err, AOTRUN_ERR_INTERNAL, "fake: nodes full");
    g->nodes[g->num_nodes] =
        (node){plan[i].dst, plan[i].src, plan[i].bytes, 1, 1};
    nodes[i] = (void *)(uintptr_t)(g->num_nodes + 1); /* index + 1 */
    g->num_nodes++;
  }
  return AOTRUN_OK;
}

static aotrun_status point_output_node(void *ctx, void *x, void *n,
                                       const aotrun_output_copy *copy,
                                       aotrun_error *err) {
  (void)ctx;
  FAKE.out_points++;
  aotrun_status s = fails(FAKE_OUT_POINT, err,
                          "cudaGraphExecMemcpyNodeSetParams1D (invalid "
                          "argument)");
  if (s != AOTRUN_OK) return s;
  if (copy->dst == FAKE.refuse_dst)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGraphExecMemcpyNodeSetParams1D failed: "
                            "invalid argument");
  node *p = node_of(x, n);
  p->dst = copy->dst;
  p->src = copy->src;
  p->bytes = copy->bytes;
  return AOTRUN_OK;
}

static aotrun_status enable_output_node(void *ctx, void *x, void *n, int on,
                                        aotrun_error *err) {
  (void)ctx;
  FAKE.out_enables++;
  aotrun_status s = fails(FAKE_OUT_ENABLE, err, "cudaGraphNodeSetEnabled");
  if (s != AOTRUN_OK) return s;
  node_of(x, n)->on = on;
  return AOTRUN_OK;
}

static aotrun_status add_done_node(void *ctx, void *x, int *added,
                                   aotrun_error *err) {
  (void)ctx, (void)x;
  *added = 0;
  if (!FAKE.done_flag) return AOTRUN_OK;
  aotrun_status s = fails(FAKE_ADD_DONE, err, "cudaGraphAddKernelNode");
  if (s != AOTRUN_OK) return s;
  if (FAKE.done_refuse != NULL) {
    aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED, "%s", FAKE.done_refuse);
    return AOTRUN_OK;
  }
  FAKE.done_nodes++;
  *added = 1;
  return AOTRUN_OK;
}

static void done_launched(void *ctx, int awaitable) {
  (void)ctx;
  FAKE.done_launches++;
  FAKE.done_awaitable += awaitable != 0;
  FAKE.armed = awaitable;
}

aotrun_graph_ops fake_gpu_ops(void) {
  aotrun_graph_ops o = {
      .run_direct = run_direct,
      .run_capture = run_capture,
      .begin_capture = begin,
      .end_capture = end,
      .is_capturing = is_capturing,
      .instantiate = instantiate,
      .launch = launch,
      .synchronize = synchronize,
      .destroy_graph = destroy_graph,
      .destroy_exec = destroy_exec,
      .clear_error = clear_error,
      .static_alloc = static_alloc,
      .static_free = static_free,
      .copy_inputs = copy_inputs,
      .copy_outputs = copy_outputs,
      .delete_outputs = delete_outputs,
      .pool_create = pool_create,
      .pool_install = pool_install,
      .pool_destroy = pool_destroy,
      .pool_bytes = pool_bytes,
      .log = log_message,
      .add_input_nodes = add_input_nodes,
      .point_input_node = point_input_node,
      .enable_input_node = enable_input_node,
      .plan_outputs = plan_outputs,
      .finish_outputs = finish_outputs,
      .add_output_nodes = add_output_nodes,
      .point_output_node = point_output_node,
      .enable_output_node = enable_output_node,
      .add_done_node = add_done_node,
      .done_launched = done_launched,
  };
  return o;
}

int fake_gpu_balanced(char *why, size_t why_size) {
  const struct {
    const char *what;
    int made, freed;
  } pairs[] = {
      {"graphs", FAKE.graphs_made, FAKE.graphs_destroyed},
      {"execs", FAKE.execs_made, FAKE.execs_destroyed},
      {"static buffers", FAKE.static_allocs, FAKE.static_frees},
      {"pools", FAKE.pools_made, FAKE.pools_destroyed},
      {"outputs", FAKE.outputs_made, FAKE.outputs_deleted},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    if (pairs[i].made != pairs[i].freed) {
      snprintf(why, why_size, "%s: %d made, %d freed", pairs[i].what,
               pairs[i].made, pairs[i].freed);
      return 0;
    }
  if (FAKE.capturing != NULL) {
    snprintf(why, why_size, "a capture is still open");
    return 0;
  }
  return 1;
}
