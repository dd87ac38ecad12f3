/*
 * graph_slot.c: one capture slot's life (cuda_graph_state_impl.h): its
 * host arrays, the capture up to its first launch, release and eviction.
 */
#include <stdlib.h>
#include <string.h>

#include "aot_loader/dl_dtype.h"
#include "backend_cuda/cuda_graph_state_impl.h"

size_t aotrun_graph_slot_index(const aotrun_graph_state *s,
                               const aotrun_graph_slot *c) {
  return (size_t)(c - s->slots);
}

/* ---- release(): the one way capture state is undone ---- */

int aotrun_graph_slot_holds_something(const aotrun_graph_slot *c) {
  if (c->pool || c->graph || c->exec || c->capturing || c->pool_installed ||
      c->have_shapes)
    return 1;
  return 0;
}

/* Ends a capture still in progress so the stream leaves capture mode; the
 * graph it returns (complete or not) is destroyed. */
static void end_open_capture(aotrun_graph_state *s, aotrun_graph_slot *c) {
  if (!c->capturing && !s->ops.is_capturing(s->ops.ctx)) return;
  void *graph = NULL;
  aotrun_error ignored;
  aotrun_error_clear(&ignored);
  (void)s->ops.end_capture(s->ops.ctx, &graph, &ignored);
  if (graph != NULL) s->ops.destroy_graph(s->ops.ctx, graph);
  c->capturing = 0;
}

static void free_static_buffers(aotrun_graph_state *s, aotrun_graph_slot *c) {
  for (size_t i = 0; c->static_buffers && i < s->num_inputs; i++) {
    if (c->static_buffers[i] != NULL)
      s->ops.static_free(s->ops.ctx, c->static_buffers[i]);
    c->static_buffers[i] = NULL;
    c->static_inputs[i].data = NULL;
  }
  c->static_bytes = 0;
  c->have_shapes = 0;
}

void aotrun_graph_slot_release(aotrun_graph_state *s, aotrun_graph_slot *c) {
  if (!aotrun_graph_slot_holds_something(c)) return;
  end_open_capture(s, c);
  if (c->pool_installed) s->ops.pool_install(s->ops.ctx, NULL);
  c->pool_installed = 0;
  /* Output handles first: their storage is freed through the pool. */
  s->ops.delete_outputs(s->ops.ctx, c->outputs, s->num_outputs);
  memset(c->outputs, 0, s->num_outputs * sizeof *c->outputs);
  if (c->exec != NULL) s->ops.destroy_exec(s->ops.ctx, c->exec);
  if (c->graph != NULL) s->ops.destroy_graph(s->ops.ctx, c->graph);
  c->exec = c->graph = NULL;
  c->done_node = 0;
  aotrun_graph_input_nodes_forget(&c->input_nodes);
  aotrun_graph_output_nodes_forget(&c->output_nodes);
  if (c->pool != NULL) s->ops.pool_destroy(s->ops.ctx, c->pool);
  c->pool = NULL;
  free_static_buffers(s, c);
  aotrun_graph_shape_cache_drop(&s->shapes, aotrun_graph_slot_index(s, c));
  s->ops.clear_error(s->ops.ctx); /* sticky error of a failed capture */
  if (s->ops.is_capturing(s->ops.ctx))
    aotrun_graph_state_logf(
        s, AOTRUN_LOG_ERROR,
        "method %s: the stream is still capturing after the CUDA graph "
        "was released",
        s->method);
}

void aotrun_graph_slots_release_all(aotrun_graph_state *s) {
  aotrun_graph_shape_cache_forget_seen(&s->shapes);
  int any = 0;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    any |= aotrun_graph_slot_holds_something(&s->slots[i]);
  if (!any) return;
  s->num_releases++;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    aotrun_graph_slot_release(s, &s->slots[i]);
}

/* ---- host arrays ---- */

void aotrun_graph_slot_free_arrays(aotrun_graph_slot *c) {
  free(c->static_inputs);
  free(c->static_shapes);
  free(c->static_buffers);
  free(c->outputs);
  free(c->input_nodes.nodes);
  free(c->input_nodes.pointed);
  free(c->output_nodes.nodes);
  free(c->output_nodes.plan);
  free(c->output_nodes.pointed);
  memset(c, 0, sizeof *c);
}

void aotrun_graph_slots_free_arrays(aotrun_graph_state *s) {
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    aotrun_graph_slot_free_arrays(&s->slots[i]);
  aotrun_graph_shape_cache_free(&s->shapes);
}

/* calloc(0) may return NULL: at least one element. */
int aotrun_graph_slot_arrays(aotrun_graph_state *s, aotrun_graph_slot *c) {
  if (c->static_inputs != NULL) return 1;
  size_t ni = s->num_inputs + 1;
  c->static_inputs = calloc(ni, sizeof(DLTensor));
  c->static_shapes = calloc(ni * AOTRUN_MAX_DIMS, sizeof(int64_t));
  c->static_buffers = calloc(ni, sizeof(void *));
  c->outputs = calloc(s->num_outputs + 1, sizeof(AtenTensorHandle));
  c->input_nodes.nodes = calloc(ni, sizeof(void *));
  c->input_nodes.pointed = calloc(ni, sizeof(void *));
  size_t no = s->num_outputs + 1;
  c->output_nodes.nodes = calloc(no, sizeof(void *));
  c->output_nodes.plan = calloc(no, sizeof(aotrun_output_copy));
  c->output_nodes.pointed = calloc(no, sizeof(aotrun_output_copy));
  if (c->static_inputs && c->static_shapes && c->static_buffers && c->outputs &&
      c->input_nodes.nodes && c->input_nodes.pointed &&
      c->output_nodes.nodes && c->output_nodes.plan &&
      c->output_nodes.pointed &&
      aotrun_graph_shape_cache_reserve(&s->shapes,
                                       aotrun_graph_slot_index(s, c)))
    return 1;
  aotrun_graph_slot_free_arrays(c);
  return 0;
}

/* ---- graph per shape: eviction and the slot of a new capture ---- */

void aotrun_graph_slot_evict(aotrun_graph_state *s, aotrun_graph_slot *c) {
  aotrun_graph_slot_release(s, c);
  s->num_evictions++;
  aotrun_graph_state_logf(
      s, AOTRUN_LOG_DEBUG,
      "method %s: evicted the least recently used CUDA graph "
      "(cuda_graph_shapes = %d)",
      s->method, s->max_graphs);
}

/* An unused slot within the limit, else the least recently used graph's,
 * evicted first (its memory freed before the new capture allocates). */
aotrun_graph_slot *aotrun_graph_slot_for_capture(aotrun_graph_state *s) {
  aotrun_graph_slot *c = NULL;
  size_t limit = aotrun_graph_shape_cache_limit(&s->shapes);
  for (size_t i = 0; i < limit && c == NULL; i++)
    if (!aotrun_graph_slot_holds_something(&s->slots[i])) c = &s->slots[i];
  if (c == NULL) {
    int lru = aotrun_graph_shape_cache_lru(&s->shapes);
    if (lru < 0) return NULL;
    c = &s->slots[lru];
    aotrun_graph_slot_evict(s, c);
  }
  return aotrun_graph_slot_arrays(s, c) ? c : NULL;
}

/* ---- the capture ---- */

/* Step 1: the capture call's shapes and a static buffer per input, filled
 * with a copy of the inputs. */
static aotrun_status make_static_inputs(aotrun_graph_state *s,
                                        aotrun_graph_slot *c,
                                        const DLTensor *in, aotrun_error *err) {
  c->have_shapes = 1;
  aotrun_status st = aotrun_graph_shape_cache_key_slot(
      &s->shapes, aotrun_graph_slot_index(s, c), in, err);
  for (size_t i = 0; i < s->num_inputs && st == AOTRUN_OK; i++) {
    DLTensor *t = &c->static_inputs[i];
    int64_t *shape = c->static_shapes + i * AOTRUN_MAX_DIMS;
    memset(t, 0, sizeof *t);
    for (int32_t d = 0; d < in[i].ndim; d++) shape[d] = in[i].shape[d];
    t->ndim = in[i].ndim;
    t->shape = shape;
    t->dtype = in[i].dtype;
    t->device = s->device;
    size_t bytes = aotrun_dl_nbytes(t);
    st = s->ops.static_alloc(s->ops.ctx, bytes ? bytes : 1,
                             &c->static_buffers[i], err);
    if (st != AOTRUN_OK) {
      c->static_buffers[i] = NULL;
      return aotrun_error_prefix(err, "static buffer of input %zu: ", i);
    }
    t->data = c->static_buffers[i];
    c->static_bytes += bytes ? bytes : 1;
  }
  if (st != AOTRUN_OK) return st;
  return s->ops.copy_inputs(s->ops.ctx, in, c->static_inputs, s->num_inputs,
                            err);
}

/* Steps 3-4: the model recorded into the capture with the pool installed. */
static aotrun_status record(aotrun_graph_state *s, aotrun_graph_slot *c,
                            aotrun_error *err) {
  aotrun_status st = s->ops.begin_capture(s->ops.ctx, err);
  if (st != AOTRUN_OK) return st;
  c->capturing = 1;
  s->ops.pool_install(s->ops.ctx, c->pool);
  c->pool_installed = 1;
  st = s->ops.run_capture(s->ops.ctx, c->static_inputs, s->num_inputs,
                          c->outputs, s->num_outputs, err);
  s->ops.pool_install(s->ops.ctx, NULL);
  c->pool_installed = 0;
  if (st != AOTRUN_OK) {
    /* Never trust out values of a failed run. */
    memset(c->outputs, 0, s->num_outputs * sizeof *c->outputs);
    return aotrun_error_prefix(err, "the model failed inside the capture: ");
  }
  void *graph = NULL;
  c->capturing = 0;
  st = s->ops.end_capture(s->ops.ctx, &graph, err);
  c->graph = graph; /* release() destroys it either way */
  if (st != AOTRUN_OK) return aotrun_error_prefix(err, "end capture: ");
  return AOTRUN_OK;
}

/* The done counter's node (option cuda_graph_done_flag), after the output
 * nodes: the graph's last. */
static aotrun_status add_done_node(aotrun_graph_state *s, aotrun_graph_slot *c,
                                   aotrun_error *err) {
  c->done_node = 0;
  if (s->ops.add_done_node == NULL || s->ops.done_launched == NULL)
    return AOTRUN_OK;
  int added = 0;
  aotrun_error why;
  aotrun_error_clear(&why);
  aotrun_status st = s->ops.add_done_node(s->ops.ctx, c->graph, &added, &why);
  if (st != AOTRUN_OK) {
    aotrun_error_set(err, st, "%s", why.message);
    return aotrun_error_prefix(err, "done counter node: ");
  }
  if (!added && why.message[0] != '\0')
    aotrun_graph_state_logf(s, AOTRUN_LOG_INFO,
                            "method %s: %s; its replays end in "
                            "cudaStreamSynchronize",
                            s->method, why.message);
  c->done_node = added;
  return AOTRUN_OK;
}

/* The capture's pool, with reserve bytes taken before it begins. */
static aotrun_status create_pool(aotrun_graph_state *s, aotrun_graph_slot *c,
                                 size_t reserve, aotrun_error *err) {
  aotrun_status st = s->ops.pool_create(s->ops.ctx, reserve, &c->pool, err);
  if (st != AOTRUN_OK) c->pool = NULL;
  return st;
}

/* A recorded capture undone before instantiate: outputs, graph, pool. */
static void discard_recording(aotrun_graph_state *s, aotrun_graph_slot *c) {
  s->ops.delete_outputs(s->ops.ctx, c->outputs, s->num_outputs);
  memset(c->outputs, 0, s->num_outputs * sizeof *c->outputs);
  if (c->graph != NULL) s->ops.destroy_graph(s->ops.ctx, c->graph);
  c->graph = NULL;
  s->ops.pool_destroy(s->ops.ctx, c->pool);
  c->pool = NULL;
}

/* Steps 2-4, once more where the pool had to take device memory while the
 * capture recorded (cudaMalloc inside a capture: the graphs whose replays
 * compute-sanitizer died on, docs/reliability.md). The second recording
 * runs over a pool that took all of it first; the same shapes make the
 * same allocations, so it takes nothing. Each capture starts from one
 * chunk, not from another capture's need: graphs of smaller shapes would
 * hold memory they never use; a second recording costs host time only. */
static aotrun_status record_with_pool(aotrun_graph_state *s,
                                      aotrun_graph_slot *c,
                                      aotrun_error *err) {
  aotrun_status st = create_pool(s, c, 0, err);
  if (st != AOTRUN_OK) return st;
  size_t before = s->ops.pool_bytes(s->ops.ctx, c->pool);
  st = record(s, c, err);
  size_t need = c->pool ? s->ops.pool_bytes(s->ops.ctx, c->pool) : 0;
  if (st != AOTRUN_OK || need <= before) return st;
  s->num_rerecords++;
  aotrun_graph_state_logf(s, AOTRUN_LOG_DEBUG,
                          "method %s: the graph's pool took device memory "
                          "inside the capture (%zu bytes reserved, %zu "
                          "needed); recorded again with %zu reserved first",
                          s->method, before, need, need);
  discard_recording(s, c);
  st = create_pool(s, c, need, err);
  if (st != AOTRUN_OK) return st;
  st = record(s, c, err);
  size_t again = c->pool ? s->ops.pool_bytes(s->ops.ctx, c->pool) : 0;
  if (st == AOTRUN_OK && again > need)
    aotrun_graph_state_logf(s, AOTRUN_LOG_INFO,
                            "method %s: the graph's pool grew inside the "
                            "second capture too (%zu bytes, %zu the first "
                            "time): the model allocates differently each "
                            "capture",
                            s->method, again, need);
  return st;
}

aotrun_status aotrun_graph_slot_capture_until_launch(aotrun_graph_state *s,
                                                     aotrun_graph_slot *c,
                                                     const DLTensor *in,
                                                     DLTensor *out,
                                                     aotrun_error *err) {
  aotrun_status st = make_static_inputs(s, c, in, err);
  if (st == AOTRUN_OK) st = record_with_pool(s, c, err);
  if (st == AOTRUN_OK && s->input_nodes &&
      aotrun_graph_input_nodes_usable(&s->ops, in, s->num_inputs, s->device))
    st = aotrun_graph_input_nodes_attach(&s->ops, c->graph, in,
                                         c->static_inputs, s->num_inputs,
                                         &c->input_nodes, err);
  if (st == AOTRUN_OK && s->output_nodes)
    st = aotrun_graph_output_nodes_attach(&s->ops, c->graph, c->outputs, out,
                                          s->num_outputs, &c->output_nodes,
                                          err);
  if (st == AOTRUN_OK) st = add_done_node(s, c, err);
  if (st == AOTRUN_OK) {
    void *exec = NULL;
    st = s->ops.instantiate(s->ops.ctx, c->graph, &exec, err);
    c->exec = exec;
    if (st != AOTRUN_OK) aotrun_error_prefix(err, "instantiate: ");
  }
  if (st == AOTRUN_OK) {
    st = s->ops.launch(s->ops.ctx, c->exec, err);
    if (st != AOTRUN_OK) aotrun_error_prefix(err, "first launch: ");
  }
  /* Counted, not awaited: the capture call synchronises the stream. */
  if (st == AOTRUN_OK && c->done_node) s->ops.done_launched(s->ops.ctx, 0);
  return st;
}

size_t aotrun_graph_slot_bytes(const aotrun_graph_state *s,
                               const aotrun_graph_slot *c) {
  return c->static_bytes +
         (c->pool != NULL ? s->ops.pool_bytes(s->ops.ctx, c->pool) : 0);
}
