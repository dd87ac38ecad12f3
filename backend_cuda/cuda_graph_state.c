/*
 * cuda_graph_state.c: the CUDA graph state machine (phase diagram in
 * cuda_graph_state.h and docs/cuda-graphs.md).
 */
#include "backend_cuda/cuda_graph_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner.h"
#include "backend_cuda/graph_input_nodes.h"
#include "backend_cuda/graph_shape_cache.h"

#define METHOD_NAME_MAX 128
#define REASON_MAX 512
#define REPORT_MAX 2048

/* What one capture holds. Nothing here is the graph's until commit (the
 * first launch succeeded; s->shapes records that, with the slot's shapes). */
typedef struct capture {
  DLTensor *static_inputs;   /* shapes = the capture call's (owned arrays) */
  int64_t *static_shapes;    /* num_inputs * AOTRUN_MAX_DIMS */
  void **static_buffers;     /* num_inputs device buffers */
  AtenTensorHandle *outputs; /* num_outputs handles into the pool */
  void *pool;
  void *graph;
  void *exec;
  aotrun_graph_input_nodes input_nodes; /* count 0: copies on the stream */
  size_t static_bytes; /* bytes of the static buffers */
  int have_shapes;   /* static_inputs describe a capture call */
  int capturing;     /* begin_capture succeeded, end_capture not yet called */
  int pool_installed;
} capture;

struct aotrun_graph_state {
  aotrun_graph_ops ops;
  char method[METHOD_NAME_MAX];
  DLDevice device;
  size_t num_inputs;
  size_t num_outputs;
  aotrun_graph_phase phase;
  int enabled;   /* requested by the option */
  int forbidden; /* host-memory constant: never leaves Disabled */
  int failed;    /* a capture failed: off until recapture */
  int warmup_left;
  int max_graphs; /* option cuda_graph_shapes; 0: one graph, refusal */
  int input_nodes; /* option cuda_graph_input_nodes */
  char reason[REASON_MAX];
  capture slots[AOTRUN_GRAPH_MAX_SHAPES];
  aotrun_graph_shape_cache shapes; /* slot i's shapes, LRU clock, commit */
  size_t num_releases;
  size_t num_replays;
  size_t num_evictions;
  char report[REPORT_MAX];
};

/* ---- logging ---- */

static void logf_(aotrun_graph_state *s, int32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void logf_(aotrun_graph_state *s, int32_t level, const char *fmt,
                  ...) {
  char buf[AOTRUN_ERROR_MESSAGE_SIZE + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  s->ops.log(s->ops.ctx, level, buf);
}

const char *aotrun_graph_phase_name(aotrun_graph_phase phase) {
  switch (phase) {
    case AOTRUN_GRAPH_DISABLED: return "Disabled";
    case AOTRUN_GRAPH_WARMUP: return "Warmup";
    case AOTRUN_GRAPH_REPLAY: return "Replay";
  }
  return "unknown";
}

static size_t slot_of(const aotrun_graph_state *s, const capture *c) {
  return (size_t)(c - s->slots);
}

/* ---- release(): the one way capture state is undone ---- */

static int capture_holds_something(const capture *c) {
  if (c->pool || c->graph || c->exec || c->capturing || c->pool_installed ||
      c->have_shapes)
    return 1;
  return 0;
}

/* Ends a capture still in progress so the stream leaves capture mode; the
 * graph it returns (complete or not) is destroyed. */
static void end_open_capture(aotrun_graph_state *s, capture *c) {
  if (!c->capturing && !s->ops.is_capturing(s->ops.ctx)) return;
  void *graph = NULL;
  aotrun_error ignored;
  aotrun_error_clear(&ignored);
  (void)s->ops.end_capture(s->ops.ctx, &graph, &ignored);
  if (graph != NULL) s->ops.destroy_graph(s->ops.ctx, graph);
  c->capturing = 0;
}

static void free_static_buffers(aotrun_graph_state *s, capture *c) {
  for (size_t i = 0; c->static_buffers && i < s->num_inputs; i++) {
    if (c->static_buffers[i] != NULL)
      s->ops.static_free(s->ops.ctx, c->static_buffers[i]);
    c->static_buffers[i] = NULL;
    c->static_inputs[i].data = NULL;
  }
  c->static_bytes = 0;
  c->have_shapes = 0;
}

/* Undoes one slot (its host arrays stay for the next capture). */
static void release_slot(aotrun_graph_state *s, capture *c) {
  if (!capture_holds_something(c)) return;
  end_open_capture(s, c);
  if (c->pool_installed) s->ops.pool_install(s->ops.ctx, NULL);
  c->pool_installed = 0;
  /* Output handles first: their storage is freed through the pool. */
  s->ops.delete_outputs(s->ops.ctx, c->outputs, s->num_outputs);
  memset(c->outputs, 0, s->num_outputs * sizeof *c->outputs);
  if (c->exec != NULL) s->ops.destroy_exec(s->ops.ctx, c->exec);
  if (c->graph != NULL) s->ops.destroy_graph(s->ops.ctx, c->graph);
  c->exec = c->graph = NULL;
  aotrun_graph_input_nodes_forget(&c->input_nodes);
  if (c->pool != NULL) s->ops.pool_destroy(s->ops.ctx, c->pool);
  c->pool = NULL;
  free_static_buffers(s, c);
  aotrun_graph_shape_cache_drop(&s->shapes, slot_of(s, c));
  s->ops.clear_error(s->ops.ctx); /* sticky error of a failed capture */
  if (s->ops.is_capturing(s->ops.ctx))
    logf_(s, AOTRUN_LOG_ERROR,
          "method %s: the stream is still capturing after the CUDA graph "
          "was released",
          s->method);
}

/* Every graph and every remembered shape. */
static void release(aotrun_graph_state *s) {
  aotrun_graph_shape_cache_forget_seen(&s->shapes);
  int any = 0;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    any |= capture_holds_something(&s->slots[i]);
  if (!any) return;
  s->num_releases++;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    release_slot(s, &s->slots[i]);
}

/* ---- create / destroy / phase changes ---- */

static void free_capture_arrays(capture *c) {
  free(c->static_inputs);
  free(c->static_shapes);
  free(c->static_buffers);
  free(c->outputs);
  free(c->input_nodes.nodes);
  memset(c, 0, sizeof *c);
}

static void free_arrays(aotrun_graph_state *s) {
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    free_capture_arrays(&s->slots[i]);
  aotrun_graph_shape_cache_free(&s->shapes);
}

/* A slot's host arrays, made when it is first used. calloc(0) may return
 * NULL: allocate at least one element. */
static int capture_arrays(aotrun_graph_state *s, capture *c) {
  if (c->static_inputs != NULL) return 1;
  size_t ni = s->num_inputs + 1;
  c->static_inputs = calloc(ni, sizeof(DLTensor));
  c->static_shapes = calloc(ni * AOTRUN_MAX_DIMS, sizeof(int64_t));
  c->static_buffers = calloc(ni, sizeof(void *));
  c->outputs = calloc(s->num_outputs + 1, sizeof(AtenTensorHandle));
  c->input_nodes.nodes = calloc(ni, sizeof(void *));
  if (c->static_inputs && c->static_shapes && c->static_buffers &&
      c->outputs && c->input_nodes.nodes &&
      aotrun_graph_shape_cache_reserve(&s->shapes, slot_of(s, c)))
    return 1;
  free_capture_arrays(c);
  return 0;
}

static int ops_complete(const aotrun_graph_ops *o) {
  return o->run_direct && o->run_capture && o->begin_capture &&
         o->end_capture && o->is_capturing && o->instantiate && o->launch &&
         o->synchronize && o->destroy_graph && o->destroy_exec &&
         o->clear_error && o->static_alloc && o->static_free &&
         o->copy_inputs && o->copy_outputs && o->delete_outputs &&
         o->pool_create && o->pool_install && o->pool_destroy &&
         o->pool_bytes && o->log;
}

aotrun_status aotrun_graph_state_create(const aotrun_graph_ops *ops,
                                        const char *method_name,
                                        DLDevice device, size_t num_inputs,
                                        size_t num_outputs,
                                        aotrun_graph_state **out,
                                        aotrun_error *err) {
  if (out == NULL || ops == NULL || method_name == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "graph state: NULL argument");
  *out = NULL;
  if (!ops_complete(ops))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "graph state for method %s: an ops member is "
                            "NULL",
                            method_name);
  aotrun_graph_state *s = calloc(1, sizeof *s);
  if (s == NULL) goto oom;
  s->ops = *ops;
  snprintf(s->method, sizeof s->method, "%s", method_name);
  s->device = device;
  s->num_inputs = num_inputs;
  s->num_outputs = num_outputs;
  s->phase = AOTRUN_GRAPH_DISABLED;
  if (!aotrun_graph_shape_cache_init(&s->shapes, num_inputs) ||
      !capture_arrays(s, &s->slots[0])) {
    free_arrays(s);
    free(s);
    goto oom;
  }
  *out = s;
  return AOTRUN_OK;
oom:
  return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory creating the CUDA graph state of "
                          "method %s",
                          method_name);
}

void aotrun_graph_state_destroy(aotrun_graph_state *s) {
  if (s == NULL) return;
  release(s);
  free_arrays(s);
  free(s);
}

static void start_warmup(aotrun_graph_state *s, int calls) {
  s->phase = AOTRUN_GRAPH_WARMUP;
  s->warmup_left = calls;
  s->failed = 0;
  s->reason[0] = '\0';
}

void aotrun_graph_state_set_enabled(aotrun_graph_state *s, int enabled) {
  if (s == NULL) return;
  if (!enabled) {
    s->enabled = 0;
    release(s);
    s->phase = AOTRUN_GRAPH_DISABLED;
    s->warmup_left = 0;
    return;
  }
  if (s->forbidden) {
    /* Said once, when graphs are first asked for (forbid() says it when
     * they were asked for before). */
    if (!s->enabled)
      logf_(s, AOTRUN_LOG_INFO, "method %s runs without a CUDA graph: %s",
            s->method, s->reason);
    s->enabled = 1;
    return;
  }
  if (s->enabled) return; /* already on (or off after a failed capture) */
  s->enabled = 1;
  start_warmup(s, AOTRUN_GRAPH_WARMUP_CALLS);
}

int aotrun_graph_state_enabled(const aotrun_graph_state *s) {
  return s != NULL && s->enabled;
}

void aotrun_graph_state_forbid(aotrun_graph_state *s, const char *reason) {
  if (s == NULL) return;
  release(s);
  s->forbidden = 1;
  s->phase = AOTRUN_GRAPH_DISABLED;
  s->warmup_left = 0;
  snprintf(s->reason, sizeof s->reason, "%s", reason ? reason : "");
  if (s->enabled) /* otherwise set_enabled says it, if graphs are asked for */
    logf_(s, AOTRUN_LOG_INFO, "method %s runs without a CUDA graph: %s",
          s->method, s->reason);
}

aotrun_status aotrun_graph_state_recapture(aotrun_graph_state *s,
                                           aotrun_error *err) {
  if (s == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "recapture: no graph state");
  if (s->forbidden)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "recapture: method %s runs without a CUDA graph: "
                            "%s",
                            s->method, s->reason);
  if (!s->enabled)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "recapture: CUDA graphs are not enabled for "
                            "method %s (enable_cuda_graph_for_method)",
                            s->method);
  release(s);
  start_warmup(s, AOTRUN_GRAPH_RECAPTURE_WARMUP_CALLS);
  logf_(s, AOTRUN_LOG_INFO,
        "method %s: CUDA graph dropped; warming up %d call, then capturing "
        "again",
        s->method, AOTRUN_GRAPH_RECAPTURE_WARMUP_CALLS);
  return AOTRUN_OK;
}

/* ---- graph per shape: eviction and the slot of a new capture ---- */

static void evict(aotrun_graph_state *s, capture *c) {
  release_slot(s, c);
  s->num_evictions++;
  logf_(s, AOTRUN_LOG_DEBUG,
        "method %s: evicted the least recently used CUDA graph "
        "(cuda_graph_shapes = %d)",
        s->method, s->max_graphs);
}

/* A slot for a new capture: an unused one within the limit, else the least
 * recently used graph's, evicted first (its memory freed before the new
 * capture allocates). NULL when a slot's host arrays cannot be made. */
static capture *slot_for_capture(aotrun_graph_state *s) {
  capture *c = NULL;
  size_t limit = aotrun_graph_shape_cache_limit(&s->shapes);
  for (size_t i = 0; i < limit && c == NULL; i++)
    if (!capture_holds_something(&s->slots[i])) c = &s->slots[i];
  if (c == NULL) {
    int lru = aotrun_graph_shape_cache_lru(&s->shapes);
    if (lru < 0) return NULL;
    c = &s->slots[lru];
    evict(s, c);
  }
  return capture_arrays(s, c) ? c : NULL;
}

aotrun_status aotrun_graph_state_set_max_graphs(aotrun_graph_state *s,
                                                int64_t max_graphs,
                                                aotrun_error *err) {
  if (s == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "cuda_graph_shapes: no graph state");
  if (max_graphs < 0 || max_graphs > AOTRUN_GRAPH_MAX_SHAPES)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "option 'cuda_graph_shapes' is %lld, must be 0 "
                            "(one graph, other shapes refused) to %d",
                            (long long)max_graphs, AOTRUN_GRAPH_MAX_SHAPES);
  s->max_graphs = (int)max_graphs;
  aotrun_graph_shape_cache *shapes = &s->shapes;
  size_t limit = max_graphs > 0 ? (size_t)max_graphs : 1; /* K = 0: one */
  aotrun_graph_shape_cache_set_limit(shapes, limit);
  while (aotrun_graph_shape_cache_num_graphs(shapes) > limit)
    evict(s, &s->slots[aotrun_graph_shape_cache_lru(shapes)]);
  /* The graphs left move below the limit (lookups scan only there). */
  for (size_t i = limit, j = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) {
    if (!aotrun_graph_shape_cache_committed(shapes, i)) continue;
    while (j < limit && capture_holds_something(&s->slots[j])) j++;
    capture tmp = s->slots[j];
    s->slots[j] = s->slots[i];
    s->slots[i] = tmp;
    aotrun_graph_shape_cache_swap(shapes, i, j);
  }
  return AOTRUN_OK;
}

void aotrun_graph_state_set_input_nodes(aotrun_graph_state *s, int on) {
  if (s != NULL) s->input_nodes = on != 0;
}

/* ---- one call ---- */

/* A call without a graph. Its failure goes back to the caller as the
 * status and message (the host prints it); logged at Debug only, so the
 * user sees it once. */
static aotrun_status run_plain(aotrun_graph_state *s, const DLTensor *in,
                               size_t n_in, DLTensor *out, size_t n_out,
                               aotrun_error *err) {
  aotrun_status st = s->ops.run_direct(s->ops.ctx, in, n_in, out, n_out, err);
  if (st != AOTRUN_OK)
    logf_(s, AOTRUN_LOG_DEBUG, "method %s failed: %s", s->method,
          err ? err->message : aotrun_status_string(st));
  return st;
}

/* Step 1: the capture call's shapes and a static buffer per input, filled
 * with a copy of the inputs. */
static aotrun_status make_static_inputs(aotrun_graph_state *s, capture *c,
                                        const DLTensor *in,
                                        aotrun_error *err) {
  c->have_shapes = 1;
  aotrun_status st =
      aotrun_graph_shape_cache_key_slot(&s->shapes, slot_of(s, c), in, err);
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
static aotrun_status record(aotrun_graph_state *s, capture *c,
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

/* Steps 1-7. Any failure here happened before the graph ran. */
static aotrun_status capture_until_launch(aotrun_graph_state *s, capture *c,
                                          const DLTensor *in,
                                          aotrun_error *err) {
  aotrun_status st = make_static_inputs(s, c, in, err);
  if (st == AOTRUN_OK) {
    st = s->ops.pool_create(s->ops.ctx, &c->pool, err);
    if (st != AOTRUN_OK) c->pool = NULL;
  }
  if (st == AOTRUN_OK) st = record(s, c, err);
  if (st == AOTRUN_OK && s->input_nodes &&
      aotrun_graph_input_nodes_usable(&s->ops, in, s->num_inputs, s->device))
    st = aotrun_graph_input_nodes_attach(&s->ops, c->graph, in,
                                         c->static_inputs, s->num_inputs,
                                         &c->input_nodes, err);
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
  return st;
}

/* Every graph of the method goes: a capture failure turns graphs off. */
static void turn_off_after_failure(aotrun_graph_state *s, const char *why) {
  release(s);
  s->failed = 1;
  s->phase = AOTRUN_GRAPH_DISABLED;
  s->warmup_left = 0;
  /* Bounded so the reason always fits (the rest stays in the log). */
  snprintf(s->reason, sizeof s->reason, "CUDA graph capture failed: %.400s",
           why);
}

/* F8: the graph ran; running the call again could apply it twice. */
static aotrun_status failed_after_launch(aotrun_graph_state *s,
                                         aotrun_status st,
                                         const aotrun_error *cerr,
                                         aotrun_error *err) {
  turn_off_after_failure(s, cerr->message);
  /* Returned, not logged: the host prints the message once. */
  return aotrun_error_set(err, st,
                          "method %s: first launch of the CUDA graph "
                          "failed: %s (not retried; graphs stay off for "
                          "this method)",
                          s->method, cerr->message);
}

/* A capture call into slot c (NULL: no slot could be made, an F1 edge). */
static aotrun_status capture_call(aotrun_graph_state *s, capture *c,
                                  const DLTensor *in, size_t n_in,
                                  DLTensor *out, size_t n_out,
                                  aotrun_error *err) {
  aotrun_error cerr;
  aotrun_error_clear(&cerr);
  aotrun_status st =
      c != NULL ? capture_until_launch(s, c, in, &cerr)
                : aotrun_error_set(&cerr, AOTRUN_ERR_OUT_OF_MEMORY,
                                   "out of memory for a capture slot");
  if (st != AOTRUN_OK) {
    /* F1..F7: nothing ran, so the same call can run again without a graph. */
    turn_off_after_failure(s, cerr.message);
    logf_(s, AOTRUN_LOG_INFO,
          "method %s: CUDA graph capture failed (%s); running this call "
          "without a graph, graphs stay off for this method",
          s->method, cerr.message);
    return run_plain(s, in, n_in, out, n_out, err);
  }
  st = s->ops.synchronize(s->ops.ctx, &cerr);
  if (st != AOTRUN_OK) return failed_after_launch(s, st, &cerr, err);
  /* The pool and outputs are now the graph's. */
  aotrun_graph_shape_cache_commit(&s->shapes, slot_of(s, c));
  s->phase = AOTRUN_GRAPH_REPLAY;
  logf_(s, AOTRUN_LOG_DEBUG, "method %s: CUDA graph captured (%zu held)",
        s->method, aotrun_graph_shape_cache_num_graphs(&s->shapes));
  st = s->ops.copy_outputs(s->ops.ctx, c->outputs, out, n_out, err);
  if (st != AOTRUN_OK)
    logf_(s, AOTRUN_LOG_DEBUG, "method %s failed: %s", s->method,
          err ? err->message : aotrun_status_string(st));
  return st;
}

/* Replay's check with one graph (K = 0): every input against the capture
 * call's, before any copy. */
static aotrun_status check_captured_shapes(const aotrun_graph_state *s,
                                           const capture *cap,
                                           const DLTensor *in,
                                           aotrun_error *err) {
  for (size_t i = 0; i < s->num_inputs; i++) {
    const DLTensor *c = &cap->static_inputs[i];
    if (in[i].ndim != c->ndim)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu has %d dims, captured with %d", i,
                              (int)in[i].ndim, (int)c->ndim);
    for (int32_t d = 0; d < c->ndim; d++)
      if (in[i].shape[d] != c->shape[d])
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "input %zu has size %lld in dim %d, "
                                "captured with %lld",
                                i, (long long)in[i].shape[d], (int)d,
                                (long long)c->shape[d]);
    if (in[i].dtype.code != c->dtype.code ||
        in[i].dtype.bits != c->dtype.bits ||
        in[i].dtype.lanes != c->dtype.lanes) {
      char got[64], want[64];
      return aotrun_error_set(
          err, AOTRUN_ERR_INVALID_ARGUMENT,
          "input %zu has dtype %s, captured with %s", i,
          aotrun_dl_dtype_describe(in[i].dtype, got, sizeof got),
          aotrun_dl_dtype_describe(c->dtype, want, sizeof want));
    }
  }
  return AOTRUN_OK;
}

/* Inputs in (nodes of the graph or stream copies), launches graph c,
 * copies out. */
static aotrun_status replay(aotrun_graph_state *s, capture *c,
                            const DLTensor *in, DLTensor *out, size_t n_out,
                            aotrun_error *err) {
  aotrun_status st = aotrun_graph_input_nodes_stage(
      &s->ops, c->exec, &c->input_nodes, in, c->static_inputs,
      s->num_inputs, s->device, err);
  if (st == AOTRUN_OK) st = s->ops.launch(s->ops.ctx, c->exec, err);
  if (st == AOTRUN_OK)
    st = s->ops.copy_outputs(s->ops.ctx, c->outputs, out, n_out, err);
  if (st != AOTRUN_OK) {
    logf_(s, AOTRUN_LOG_DEBUG, "method %s: CUDA graph replay failed: %s",
          s->method, err ? err->message : aotrun_status_string(st));
    return st;
  }
  aotrun_graph_shape_cache_touch(&s->shapes, slot_of(s, c));
  s->num_replays++;
  return AOTRUN_OK;
}

/* A shape no graph has (K > 0): its first call runs without a graph and is
 * remembered; its next call captures. */
static aotrun_status new_shape_call(aotrun_graph_state *s, const DLTensor *in,
                                    size_t n_in, DLTensor *out, size_t n_out,
                                    aotrun_error *err) {
  if (!aotrun_graph_shape_cache_take_seen(&s->shapes)) {
    aotrun_status st = run_plain(s, in, n_in, out, n_out, err);
    if (st == AOTRUN_OK) /* failures: no */
      aotrun_graph_shape_cache_remember_call(&s->shapes);
    return st;
  }
  return capture_call(s, slot_for_capture(s), in, n_in, out, n_out, err);
}

static aotrun_status replay_phase_call(aotrun_graph_state *s,
                                       const DLTensor *in, size_t n_in,
                                       DLTensor *out, size_t n_out,
                                       aotrun_error *err) {
  if (s->max_graphs == 0) {
    aotrun_status st = check_captured_shapes(s, &s->slots[0], in, err);
    if (st != AOTRUN_OK) return st; /* the caller's mistake: no Error log */
    return replay(s, &s->slots[0], in, out, n_out, err);
  }
  aotrun_status st = aotrun_graph_shape_cache_key_call(&s->shapes, in, err);
  if (st != AOTRUN_OK) return st;
  int i = aotrun_graph_shape_cache_find_graph(&s->shapes);
  if (i >= 0) return replay(s, &s->slots[i], in, out, n_out, err);
  return new_shape_call(s, in, n_in, out, n_out, err);
}

aotrun_status aotrun_graph_state_execute(aotrun_graph_state *s,
                                         const DLTensor *inputs,
                                         size_t num_inputs, DLTensor *outputs,
                                         size_t num_outputs,
                                         aotrun_error *err) {
  if (s == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute: no graph state");
  if (num_inputs != s->num_inputs || num_outputs != s->num_outputs ||
      (num_inputs && !inputs) || (num_outputs && !outputs))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s takes %zu inputs and %zu outputs, "
                            "got %zu and %zu",
                            s->method, s->num_inputs, s->num_outputs,
                            num_inputs, num_outputs);
  switch (s->phase) {
    case AOTRUN_GRAPH_DISABLED:
      return run_plain(s, inputs, num_inputs, outputs, num_outputs, err);
    case AOTRUN_GRAPH_WARMUP:
      if (s->warmup_left > 0) {
        aotrun_status st =
            run_plain(s, inputs, num_inputs, outputs, num_outputs, err);
        if (st == AOTRUN_OK) s->warmup_left--;
        return st;
      }
      return capture_call(s, slot_for_capture(s), inputs, num_inputs,
                          outputs, num_outputs, err);
    case AOTRUN_GRAPH_REPLAY:
      return replay_phase_call(s, inputs, num_inputs, outputs, num_outputs,
                               err);
  }
  return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                          "method %s: unknown CUDA graph phase %d", s->method,
                          (int)s->phase);
}

/* ---- introspection ---- */

aotrun_graph_phase aotrun_graph_state_phase(const aotrun_graph_state *s) {
  return s ? s->phase : AOTRUN_GRAPH_DISABLED;
}

int aotrun_graph_state_warmup_left(const aotrun_graph_state *s) {
  return s && s->phase == AOTRUN_GRAPH_WARMUP ? s->warmup_left : 0;
}

int aotrun_graph_state_has_capture(const aotrun_graph_state *s) {
  if (s == NULL) return 0;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    if (s->slots[i].have_shapes) return 1;
  return 0;
}

size_t aotrun_graph_state_num_releases(const aotrun_graph_state *s) {
  return s ? s->num_releases : 0;
}

size_t aotrun_graph_state_num_replays(const aotrun_graph_state *s) {
  return s ? s->num_replays : 0;
}

size_t aotrun_graph_state_num_input_node_graphs(const aotrun_graph_state *s) {
  size_t n = 0;
  for (size_t i = 0; s != NULL && i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    n += s->slots[i].exec != NULL && s->slots[i].input_nodes.count > 0;
  return n;
}

size_t aotrun_graph_state_num_evictions(const aotrun_graph_state *s) {
  return s ? s->num_evictions : 0;
}

size_t aotrun_graph_state_num_graphs(const aotrun_graph_state *s) {
  return s ? aotrun_graph_shape_cache_num_graphs(&s->shapes) : 0;
}

static size_t capture_bytes(const aotrun_graph_state *s, const capture *c) {
  return c->static_bytes +
         (c->pool != NULL ? s->ops.pool_bytes(s->ops.ctx, c->pool) : 0);
}

size_t aotrun_graph_state_graph_bytes(const aotrun_graph_state *s) {
  size_t n = 0;
  for (size_t i = 0; s != NULL && i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    if (aotrun_graph_shape_cache_committed(&s->shapes, i))
      n += capture_bytes(s, &s->slots[i]);
  return n;
}

const char *aotrun_graph_state_disabled_reason(const aotrun_graph_state *s) {
  if (s == NULL || s->phase != AOTRUN_GRAPH_DISABLED) return "";
  return s->reason;
}

const char *aotrun_graph_state_memory_report(aotrun_graph_state *s) {
  if (s == NULL) return "";
  char *buf = s->report;
  const aotrun_graph_shape_cache *shapes = &s->shapes;
  size_t size = sizeof s->report;
  size_t n = aotrun_graph_shape_cache_num_graphs(shapes);
  size_t used = (size_t)snprintf(buf, size, "%zu graph%s, %zu bytes", n,
                                 n == 1 ? "" : "s",
                                 aotrun_graph_state_graph_bytes(s));
  const char *sep = ": ";
  for (int i = aotrun_graph_shape_cache_next_mru(shapes, -1);
       i >= 0 && used < size;
       i = aotrun_graph_shape_cache_next_mru(shapes, i)) {
    used += (size_t)snprintf(buf + used, size - used, "%s", sep);
    if (used < size)
      used += aotrun_graph_shape_cache_put_shapes(shapes, (size_t)i,
                                                  buf + used, size - used);
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, " %zu",
                               capture_bytes(s, &s->slots[i]));
    sep = "; ";
  }
  return buf; /* truncated at REPORT_MAX - 1 characters when long */
}
