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

#define METHOD_NAME_MAX 128
#define REASON_MAX 512

/* What one capture holds. Nothing here is the graph's until commit. */
typedef struct capture {
  DLTensor *static_inputs;   /* shapes = the capture call's (owned arrays) */
  int64_t *static_shapes;    /* num_inputs * AOTRUN_MAX_DIMS */
  void **static_buffers;     /* num_inputs device buffers */
  AtenTensorHandle *outputs; /* num_outputs handles into the pool */
  void *pool;
  void *graph;
  void *exec;
  int have_shapes;   /* static_inputs describe a capture call */
  int capturing;     /* begin_capture succeeded, end_capture not yet called */
  int pool_installed;
  int committed;     /* first launch succeeded: memory is the graph's */
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
  char reason[REASON_MAX];
  capture cap;
  size_t num_releases;
  size_t num_replays;
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

/* ---- release(): the one way capture state is undone ---- */

static int capture_holds_something(const capture *c) {
  if (c->pool || c->graph || c->exec || c->capturing || c->pool_installed ||
      c->have_shapes)
    return 1;
  return 0;
}

/* Ends a capture still in progress so the stream leaves capture mode; the
 * graph it returns (complete or not) is destroyed. */
static void end_open_capture(aotrun_graph_state *s) {
  capture *c = &s->cap;
  if (!c->capturing && !s->ops.is_capturing(s->ops.ctx)) return;
  void *graph = NULL;
  aotrun_error ignored;
  aotrun_error_clear(&ignored);
  (void)s->ops.end_capture(s->ops.ctx, &graph, &ignored);
  if (graph != NULL) s->ops.destroy_graph(s->ops.ctx, graph);
  c->capturing = 0;
}

static void free_static_buffers(aotrun_graph_state *s) {
  capture *c = &s->cap;
  for (size_t i = 0; i < s->num_inputs; i++) {
    if (c->static_buffers[i] != NULL)
      s->ops.static_free(s->ops.ctx, c->static_buffers[i]);
    c->static_buffers[i] = NULL;
    c->static_inputs[i].data = NULL;
  }
  c->have_shapes = 0;
}

static void release(aotrun_graph_state *s) {
  capture *c = &s->cap;
  if (!capture_holds_something(c)) return;
  s->num_releases++;
  end_open_capture(s);
  if (c->pool_installed) s->ops.pool_install(s->ops.ctx, NULL);
  c->pool_installed = 0;
  /* Output handles first: their storage is freed through the pool. */
  s->ops.delete_outputs(s->ops.ctx, c->outputs, s->num_outputs);
  memset(c->outputs, 0, s->num_outputs * sizeof *c->outputs);
  if (c->exec != NULL) s->ops.destroy_exec(s->ops.ctx, c->exec);
  if (c->graph != NULL) s->ops.destroy_graph(s->ops.ctx, c->graph);
  c->exec = c->graph = NULL;
  if (c->pool != NULL) s->ops.pool_destroy(s->ops.ctx, c->pool);
  c->pool = NULL;
  free_static_buffers(s);
  c->committed = 0;
  s->ops.clear_error(s->ops.ctx); /* sticky error of a failed capture */
  if (s->ops.is_capturing(s->ops.ctx))
    logf_(s, AOTRUN_LOG_ERROR,
          "method %s: the stream is still capturing after the CUDA graph "
          "was released",
          s->method);
}

/* ---- create / destroy / phase changes ---- */

static void free_arrays(aotrun_graph_state *s) {
  free(s->cap.static_inputs);
  free(s->cap.static_shapes);
  free(s->cap.static_buffers);
  free(s->cap.outputs);
}

static int ops_complete(const aotrun_graph_ops *o) {
  return o->run_direct && o->run_capture && o->begin_capture &&
         o->end_capture && o->is_capturing && o->instantiate && o->launch &&
         o->synchronize && o->destroy_graph && o->destroy_exec &&
         o->clear_error && o->static_alloc && o->static_free &&
         o->copy_inputs && o->copy_outputs && o->delete_outputs &&
         o->pool_create && o->pool_install && o->pool_destroy && o->log;
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
  /* calloc(0) may return NULL: allocate at least one element. */
  s->cap.static_inputs = calloc(num_inputs + 1, sizeof(DLTensor));
  s->cap.static_shapes =
      calloc((num_inputs + 1) * AOTRUN_MAX_DIMS, sizeof(int64_t));
  s->cap.static_buffers = calloc(num_inputs + 1, sizeof(void *));
  s->cap.outputs = calloc(num_outputs + 1, sizeof(AtenTensorHandle));
  if (!s->cap.static_inputs || !s->cap.static_shapes ||
      !s->cap.static_buffers || !s->cap.outputs) {
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

/* ---- one call ---- */

/* A call without a graph; its failure is an Error. */
static aotrun_status run_plain(aotrun_graph_state *s, const DLTensor *in,
                               size_t n_in, DLTensor *out, size_t n_out,
                               aotrun_error *err) {
  aotrun_status st = s->ops.run_direct(s->ops.ctx, in, n_in, out, n_out, err);
  if (st != AOTRUN_OK)
    logf_(s, AOTRUN_LOG_ERROR, "method %s failed: %s", s->method,
          err ? err->message : aotrun_status_string(st));
  return st;
}

static size_t numel_of(const DLTensor *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

static size_t nbytes_of(const DLTensor *t) {
  return numel_of(t) * (((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8);
}

/* Step 1: the capture call's shapes and a static buffer per input, filled
 * with a copy of the inputs. */
static aotrun_status make_static_inputs(aotrun_graph_state *s,
                                        const DLTensor *in,
                                        aotrun_error *err) {
  capture *c = &s->cap;
  c->have_shapes = 1;
  for (size_t i = 0; i < s->num_inputs; i++) {
    if (in[i].ndim < 0 || in[i].ndim > AOTRUN_MAX_DIMS)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu has %d dims (at most %d)", i,
                              (int)in[i].ndim, AOTRUN_MAX_DIMS);
    DLTensor *t = &c->static_inputs[i];
    int64_t *shape = c->static_shapes + i * AOTRUN_MAX_DIMS;
    memset(t, 0, sizeof *t);
    for (int32_t d = 0; d < in[i].ndim; d++) shape[d] = in[i].shape[d];
    t->ndim = in[i].ndim;
    t->shape = shape;
    t->dtype = in[i].dtype;
    t->device = s->device;
    size_t bytes = nbytes_of(t);
    aotrun_status st = s->ops.static_alloc(s->ops.ctx, bytes ? bytes : 1,
                                           &c->static_buffers[i], err);
    if (st != AOTRUN_OK) {
      c->static_buffers[i] = NULL;
      return aotrun_error_prefix(err, "static buffer of input %zu: ", i);
    }
    t->data = c->static_buffers[i];
  }
  return s->ops.copy_inputs(s->ops.ctx, in, c->static_inputs, s->num_inputs,
                            err);
}

/* Steps 3-4: the model recorded into the capture with the pool installed. */
static aotrun_status record(aotrun_graph_state *s, aotrun_error *err) {
  capture *c = &s->cap;
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
static aotrun_status capture_until_launch(aotrun_graph_state *s,
                                          const DLTensor *in,
                                          aotrun_error *err) {
  capture *c = &s->cap;
  aotrun_status st = make_static_inputs(s, in, err);
  if (st == AOTRUN_OK) {
    st = s->ops.pool_create(s->ops.ctx, &c->pool, err);
    if (st != AOTRUN_OK) c->pool = NULL;
  }
  if (st == AOTRUN_OK) st = record(s, err);
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

static void turn_off_after_failure(aotrun_graph_state *s, const char *why) {
  release(s);
  s->failed = 1;
  s->phase = AOTRUN_GRAPH_DISABLED;
  s->warmup_left = 0;
  /* Bounded so the reason always fits (the rest stays in the log). */
  snprintf(s->reason, sizeof s->reason, "CUDA graph capture failed: %.400s",
           why);
}

/* The capture call (phase Warmup, no calls left). */
static aotrun_status capture_call(aotrun_graph_state *s, const DLTensor *in,
                                  size_t n_in, DLTensor *out, size_t n_out,
                                  aotrun_error *err) {
  aotrun_error cerr;
  aotrun_error_clear(&cerr);
  aotrun_status st = capture_until_launch(s, in, &cerr);
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
  if (st != AOTRUN_OK) {
    /* F8: the graph ran; running the call again could apply it twice. */
    turn_off_after_failure(s, cerr.message);
    logf_(s, AOTRUN_LOG_ERROR,
          "method %s: the first launch of its CUDA graph failed while "
          "running (%s); not retried, graphs stay off for this method",
          s->method, cerr.message);
    return aotrun_error_set(err, st,
                            "method %s: first launch of the CUDA graph "
                            "failed: %s",
                            s->method, cerr.message);
  }
  s->cap.committed = 1; /* the pool and outputs are now the graph's */
  s->phase = AOTRUN_GRAPH_REPLAY;
  logf_(s, AOTRUN_LOG_DEBUG, "method %s: CUDA graph captured", s->method);
  st = s->ops.copy_outputs(s->ops.ctx, s->cap.outputs, out, n_out, err);
  if (st != AOTRUN_OK)
    logf_(s, AOTRUN_LOG_ERROR, "method %s failed: %s", s->method,
          err ? err->message : aotrun_status_string(st));
  return st;
}

/* Replay's check: every input against the capture call's, before any copy. */
static aotrun_status check_captured_shapes(const aotrun_graph_state *s,
                                           const DLTensor *in,
                                           aotrun_error *err) {
  for (size_t i = 0; i < s->num_inputs; i++) {
    const DLTensor *c = &s->cap.static_inputs[i];
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

static aotrun_status replay(aotrun_graph_state *s, const DLTensor *in,
                            DLTensor *out, size_t n_out, aotrun_error *err) {
  aotrun_status st = check_captured_shapes(s, in, err);
  if (st != AOTRUN_OK) return st; /* the caller's mistake: no Error log */
  st = s->ops.copy_inputs(s->ops.ctx, in, s->cap.static_inputs, s->num_inputs,
                          err);
  if (st == AOTRUN_OK) st = s->ops.launch(s->ops.ctx, s->cap.exec, err);
  if (st == AOTRUN_OK)
    st = s->ops.copy_outputs(s->ops.ctx, s->cap.outputs, out, n_out, err);
  if (st != AOTRUN_OK) {
    logf_(s, AOTRUN_LOG_ERROR, "method %s: CUDA graph replay failed: %s",
          s->method, err ? err->message : aotrun_status_string(st));
    return st;
  }
  s->num_replays++;
  return AOTRUN_OK;
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
      return capture_call(s, inputs, num_inputs, outputs, num_outputs, err);
    case AOTRUN_GRAPH_REPLAY:
      return replay(s, inputs, outputs, num_outputs, err);
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
  return s != NULL && s->cap.have_shapes;
}

size_t aotrun_graph_state_num_releases(const aotrun_graph_state *s) {
  return s ? s->num_releases : 0;
}

size_t aotrun_graph_state_num_replays(const aotrun_graph_state *s) {
  return s ? s->num_replays : 0;
}

const char *aotrun_graph_state_disabled_reason(const aotrun_graph_state *s) {
  if (s == NULL || s->phase != AOTRUN_GRAPH_DISABLED) return "";
  return s->reason;
}
