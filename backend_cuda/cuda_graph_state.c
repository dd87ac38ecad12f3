/*
 * cuda_graph_state.c: the CUDA graph state machine (phase diagram in
 * cuda_graph_state.h and docs/cuda-graphs.md): create/destroy, phases,
 * options, one call. A slot's life is graph_slot.c, the queries
 * cuda_graph_state_query.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner.h"
#include "backend_cuda/cuda_graph_state_impl.h"

/* ---- logging ---- */

void aotrun_graph_state_logf(aotrun_graph_state *s, int32_t level,
                             const char *fmt, ...) {
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

/* ---- create / destroy / phase changes ---- */

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
      !aotrun_graph_slot_arrays(s, &s->slots[0])) {
    aotrun_graph_slots_free_arrays(s);
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
  aotrun_graph_slots_release_all(s);
  aotrun_graph_slots_free_arrays(s);
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
    aotrun_graph_slots_release_all(s);
    s->phase = AOTRUN_GRAPH_DISABLED;
    s->warmup_left = 0;
    return;
  }
  if (s->forbidden) {
    /* Said once, when graphs are first asked for (forbid() says it when
     * they were asked for before). */
    if (!s->enabled)
      aotrun_graph_state_logf(s, AOTRUN_LOG_INFO,
                              "method %s runs without a CUDA graph: %s",
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
  aotrun_graph_slots_release_all(s);
  s->forbidden = 1;
  s->phase = AOTRUN_GRAPH_DISABLED;
  s->warmup_left = 0;
  snprintf(s->reason, sizeof s->reason, "%s", reason ? reason : "");
  if (s->enabled) /* otherwise set_enabled says it, if graphs are asked for */
    aotrun_graph_state_logf(s, AOTRUN_LOG_INFO,
                            "method %s runs without a CUDA graph: %s",
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
  aotrun_graph_slots_release_all(s);
  start_warmup(s, AOTRUN_GRAPH_RECAPTURE_WARMUP_CALLS);
  aotrun_graph_state_logf(
      s, AOTRUN_LOG_INFO,
      "method %s: CUDA graph dropped; warming up %d call, then capturing "
      "again",
      s->method, AOTRUN_GRAPH_RECAPTURE_WARMUP_CALLS);
  return AOTRUN_OK;
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
    aotrun_graph_slot_evict(s, &s->slots[aotrun_graph_shape_cache_lru(shapes)]);
  /* The graphs left move below the limit (lookups scan only there). */
  for (size_t i = limit, j = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) {
    if (!aotrun_graph_shape_cache_committed(shapes, i)) continue;
    while (j < limit && aotrun_graph_slot_holds_something(&s->slots[j])) j++;
    aotrun_graph_slot tmp = s->slots[j];
    s->slots[j] = s->slots[i];
    s->slots[i] = tmp;
    aotrun_graph_shape_cache_swap(shapes, i, j);
  }
  return AOTRUN_OK;
}

void aotrun_graph_state_set_input_nodes(aotrun_graph_state *s, int on) {
  if (s != NULL) s->input_nodes = on != 0;
}

void aotrun_graph_state_set_output_nodes(aotrun_graph_state *s, int on) {
  if (s != NULL) s->output_nodes = on != 0;
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
    aotrun_graph_state_logf(s, AOTRUN_LOG_DEBUG, "method %s failed: %s",
                            s->method,
                            err ? err->message : aotrun_status_string(st));
  return st;
}

/* Every graph of the method goes: a capture failure turns graphs off. */
static void turn_off_after_failure(aotrun_graph_state *s, const char *why) {
  aotrun_graph_slots_release_all(s);
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
static aotrun_status capture_call(aotrun_graph_state *s, aotrun_graph_slot *c,
                                  const DLTensor *in, size_t n_in,
                                  DLTensor *out, size_t n_out,
                                  aotrun_error *err) {
  aotrun_error cerr;
  aotrun_error_clear(&cerr);
  aotrun_status st =
      c != NULL ? aotrun_graph_slot_capture_until_launch(s, c, in, out, &cerr)
                : aotrun_error_set(&cerr, AOTRUN_ERR_OUT_OF_MEMORY,
                                   "out of memory for a capture slot");
  if (st != AOTRUN_OK) {
    /* F1..F7: nothing ran, so the same call can run again without a graph. */
    turn_off_after_failure(s, cerr.message);
    aotrun_graph_state_logf(
        s, AOTRUN_LOG_INFO,
        "method %s: CUDA graph capture failed (%s); running this call "
        "without a graph, graphs stay off for this method",
        s->method, cerr.message);
    return run_plain(s, in, n_in, out, n_out, err);
  }
  st = s->ops.synchronize(s->ops.ctx, &cerr);
  if (st != AOTRUN_OK) return failed_after_launch(s, st, &cerr, err);
  /* The pool and outputs are now the graph's. */
  aotrun_graph_shape_cache_commit(&s->shapes, aotrun_graph_slot_index(s, c));
  s->phase = AOTRUN_GRAPH_REPLAY;
  aotrun_graph_state_logf(
      s, AOTRUN_LOG_DEBUG, "method %s: CUDA graph captured (%zu held)%s",
      s->method, aotrun_graph_shape_cache_num_graphs(&s->shapes),
      c->done_node ? "; it ends in the done counter's node" : "");
  /* Output nodes attached at the capture copied in the first launch. */
  st = aotrun_graph_output_nodes_finish(&s->ops, c->output_nodes.count > 0,
                                        c->outputs, out, n_out, err);
  if (st != AOTRUN_OK)
    aotrun_graph_state_logf(s, AOTRUN_LOG_DEBUG, "method %s failed: %s",
                            s->method,
                            err ? err->message : aotrun_status_string(st));
  return st;
}

/* Replay's check with one graph (K = 0): every input against the capture
 * call's, before any copy. */
static aotrun_status check_captured_shapes(const aotrun_graph_state *s,
                                           const aotrun_graph_slot *cap,
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
static aotrun_status replay(aotrun_graph_state *s, aotrun_graph_slot *c,
                            const DLTensor *in, DLTensor *out, size_t n_out,
                            aotrun_error *err) {
  int by_nodes = 0;
  aotrun_status st = aotrun_graph_input_nodes_stage(
      &s->ops, c->exec, &c->input_nodes, in, c->static_inputs, s->num_inputs,
      s->device, err);
  if (st == AOTRUN_OK)
    st = aotrun_graph_output_nodes_stage(&s->ops, c->exec, &c->output_nodes,
                                         c->outputs, out, n_out, &by_nodes,
                                         err);
  if (st == AOTRUN_OK) st = s->ops.launch(s->ops.ctx, c->exec, err);
  if (st == AOTRUN_OK && c->done_node)
    s->ops.done_launched(s->ops.ctx, by_nodes);
  if (st == AOTRUN_OK)
    st = aotrun_graph_output_nodes_finish(&s->ops, by_nodes, c->outputs, out,
                                          n_out, err);
  if (st != AOTRUN_OK) {
    aotrun_graph_state_logf(
        s, AOTRUN_LOG_DEBUG, "method %s: CUDA graph replay failed: %s",
        s->method, err ? err->message : aotrun_status_string(st));
    return st;
  }
  aotrun_graph_shape_cache_touch(&s->shapes, aotrun_graph_slot_index(s, c));
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
  return capture_call(s, aotrun_graph_slot_for_capture(s), in, n_in, out, n_out,
                      err);
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
      return capture_call(s, aotrun_graph_slot_for_capture(s), inputs,
                          num_inputs, outputs, num_outputs, err);
    case AOTRUN_GRAPH_REPLAY:
      return replay_phase_call(s, inputs, num_inputs, outputs, num_outputs,
                               err);
  }
  return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                          "method %s: unknown CUDA graph phase %d", s->method,
                          (int)s->phase);
}
