/* cuda_method.c: see cuda_method.h. */
#include "backend_cuda/cuda_method.h"
#include "backend_cuda/cuda_method_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "aot_loader/method_runner.h"
#include "aot_loader/query_error.h"
#include "backend_cuda/cuda_availability.h"
#include "backend_cuda/cuda_backend_life.h"
#include "backend_cuda/cuda_device_scope.h"
#include "backend_cuda/cuda_device_spec.h"
#include "backend_cuda/cuda_device_ops.h"
#include "backend_cuda/cuda_graph_ops.h"
#include "backend_cuda/cuda_graph_policy.h"
#include "backend_cuda/cuda_graph_state.h"
#include "backend_cuda/cuda_stream.h"
#include "backend_cuda/cuda_thread_error.h"
#include "backend_cuda/cuda_timing.h"
#include "aot_loader/load_report.h"
#include "backend_cuda/weight_registry.h"

_Static_assert(AOTRUN_CUDA_MAX_GRAPH_SHAPES == AOTRUN_GRAPH_MAX_SHAPES,
              "cuda_graph_shapes' limit is the graph state's");

/* The const queries keep their failures apart from the handle
 * (aot_loader/query_error.h). */
void aotrun_cuda_method_forget_query_error(const aotrun_method *m) {
  aotrun_query_error_forget(m->serial);
}
#define forget_query_error aotrun_cuda_method_forget_query_error

void aotrun_cuda_method_log(void *ctx, int32_t level, const char *message) {
  aotrun_method *m = ctx;
  if (level < m->opts.log_level || m->host->log == NULL) return;
  m->host->log(m->host->ctx, level, message);
}
#define method_log aotrun_cuda_method_log

void aotrun_cuda_method_destroy(aotrun_method *m) {
  if (m == NULL) return;
  forget_query_error(m);
  aotrun_cuda_method_gone();
  /* Frees on the method's device; the caller keeps its own. */
  aotrun_cuda_device_scope scope;
  int entered = aotrun_cuda_device_enter(m->device, &scope, NULL) == AOTRUN_OK;
  /* The graph's release() needs the runner (output handles) and stream. */
  aotrun_graph_state_destroy(m->graph);
  aotrun_method_runner_destroy(m->runner);
  aotrun_cuda_done_flag_destroy(&m->graph_ctx.done); /* its graphs are gone */
  aotrun_weight_registry_release(m->weights);
  aotrun_cuda_stream_release(m->stream);
  aotrun_cuda_stream_order_destroy(&m->order);
  aotrun_cuda_timing_destroy(&m->timing);
  free(m);
  if (entered) aotrun_cuda_device_leave(&scope);
}

static aotrun_status make_runner(aotrun_method *m, const void *manifest,
                                 size_t size, const char *method,
                                 aotrun_error *err) {
  aotrun_weight_cache *cache = NULL;
  if (m->opts.share_weights) {
    aotrun_status st = aotrun_weight_registry_acquire(
        m->host, manifest, size, m->device, aotrun_cuda_memory_ops(),
        &m->weights, &cache, err);
    if (st != AOTRUN_OK) return st;
  }
  m->sync = (aotrun_cuda_sync_ctx){&m->timing, &m->graph_ctx.done};
  aotrun_method_runner_config config = {
      .host = m->host,
      .manifest = manifest,
      .manifest_size = size,
      .method = method,
      .device = m->device_str,
      .ops = aotrun_cuda_runner_ops(&m->sync),
      .weight_cache = cache,
      .library_temp_file = m->opts.library_temp_file,
  };
  return aotrun_method_runner_create(&config, &m->runner, err);
}

static aotrun_status make_graph_state(aotrun_method *m, aotrun_error *err) {
  m->graph_ctx = (aotrun_cuda_graph_ctx){
      .runner = m->runner,
      .stream = aotrun_cuda_stream_handle(m->stream),
      .log_ctx = m,
      .log = method_log,
      .call = NULL,
      .copy_kernels = m->opts.graph_copy_kernels,
      .done_flag = m->opts.graph_done_flag};
  aotrun_cuda_done_flag_init(&m->graph_ctx.done);
  aotrun_graph_ops ops = aotrun_cuda_graph_ops(&m->graph_ctx);
  size_t ni = 0, no = 0;
  aotrun_method_runner_num_io(m->runner, AOTRUN_IO_INPUT, &ni, NULL);
  aotrun_method_runner_num_io(m->runner, AOTRUN_IO_OUTPUT, &no, NULL);
  const char *name = aotrun_method_runner_method(m->runner);
  aotrun_status st = aotrun_graph_state_create(
      &ops, name, (DLDevice){kDLCUDA, m->device}, ni, no, &m->graph, err);
  if (st != AOTRUN_OK) return st;
  char reason[512];
  if (aotrun_cuda_graph_forbid_reason(m->runner, reason, sizeof reason))
    aotrun_graph_state_forbid(m->graph, reason);
  st = aotrun_graph_state_set_max_graphs(m->graph, m->opts.graph_shapes, err);
  if (st != AOTRUN_OK) return st;
  aotrun_graph_state_set_input_nodes(m->graph, m->opts.graph_input_nodes);
  aotrun_graph_state_set_output_nodes(m->graph, m->opts.graph_output_nodes);
  if (aotrun_cuda_method_list_contains(m->opts.graph_methods, name))
    aotrun_graph_state_set_enabled(m->graph, 1);
  return AOTRUN_OK;
}

/* The rest of create, with `device` current. */
static aotrun_status create_on_device(const aotrun_host_api *host,
                                      const void *manifest, size_t size,
                                      const char *method, int device,
                                      const aotrun_cuda_options *defaults,
                                      aotrun_method **out,
                                      aotrun_error *err) {
  aotrun_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "init: out of memory");
  aotrun_status st;
  aotrun_cuda_method_born(); /* balanced by destroy, also below */
  m->host = host;
  m->device = device;
  snprintf(m->method, sizeof m->method, "%s", method ? method : "?");
  m->serial = aotrun_query_serial_next();
  snprintf(m->device_str, sizeof m->device_str, "cuda:%d", device);
  m->opts = *defaults;
  aotrun_cuda_timing_init(&m->timing);
  st = aotrun_cuda_stream_acquire(device, m->opts.shared_stream, &m->stream,
                                  err);
  /* The device error slot, made now: allocating it is not a stream
   * operation, so it must not first happen inside a graph capture. A
   * failure here is reported again by the first op that needs it. */
  void *slot = NULL;
  if (st == AOTRUN_OK) (void)aotrun_shim_device_error_slot(device, &slot);
  if (st == AOTRUN_OK) st = make_runner(m, manifest, size, method, err);
  if (st == AOTRUN_OK && m->opts.output_placement >= 0) /* set backend-wide */
    st = aotrun_method_runner_set_output_placement(
        m->runner, m->opts.output_placement, err);
  if (st == AOTRUN_OK) st = make_graph_state(m, err);
  if (st == AOTRUN_OK) aotrun_cuda_method_warm_up(m, manifest, size, method);
  if (st != AOTRUN_OK) {
    aotrun_cuda_method_destroy(m);
    return st;
  }
  *out = m;
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_method_create(const aotrun_host_api *host,
                                        const void *manifest, size_t size,
                                        const aotrun_key_value *specs,
                                        size_t num_specs,
                                        const aotrun_cuda_options *defaults,
                                        aotrun_method **out,
                                        aotrun_error *err) {
  *out = NULL;
  if (host == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "init: host is NULL");
  const char *method = NULL;
  int device = 0;
  aotrun_status st =
      aotrun_method_runner_spec_method(specs, num_specs, &method, err);
  if (st == AOTRUN_OK)
    st = aotrun_cuda_spec_device(specs, num_specs, &device, err);
  aotrun_cuda_device_scope scope;
  if (st == AOTRUN_OK) st = aotrun_cuda_device_enter(device, &scope, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "init of method %s: ",
                               method ? method : "?");
  st = create_on_device(host, manifest, size, method, device, defaults, out,
                        err);
  aotrun_cuda_device_leave(&scope);
  return st;
}

/* The first successful call, split at debug level, so that a slow first
 * call shows where its time went (issue 12: the first call should cost
 * no more than a few steady ones). */
static void log_first_call(aotrun_method *m, int64_t t0, int64_t checked,
                           int async) {
  double check_ms = (double)(checked - t0) / 1e6;
  double run_ms = (double)(aotrun_load_clock_ns() - checked) / 1e6;
  char gpu[64] = "not timed (option gpu_timing off)";
  if (async)
    snprintf(gpu, sizeof gpu, "not waited for (AOTRUN_EXECUTE_ASYNC)");
  else if (m->timing.enabled && m->timing.last_ns >= 0)
    snprintf(gpu, sizeof gpu, "%.3f ms",
             (double)m->timing.last_ns / 1e6);
  char line[400];
  snprintf(line, sizeof line,
           "method %s: first call: inputs checked in %.3f ms, the run "
           "(kernels, %ssynchronisation, outputs) in %.3f ms; GPU time %s",
           m->method, check_ms, async ? "no " : "", run_ms, gpu);
  method_log(m, AOTRUN_LOG_DEBUG, line);
}

aotrun_status aotrun_cuda_method_run(aotrun_method *m, const DLTensor *inputs,
                                     size_t ni, DLTensor *outputs, size_t no,
                                     aotrun_runner_call *call) {
  int first = !atomic_load_explicit(&m->called, memory_order_relaxed);
  int64_t t0 = first ? aotrun_load_clock_ns() : 0;
  aotrun_status st =
      aotrun_method_runner_check_inputs(m->runner, inputs, ni, &m->err);
  if (st != AOTRUN_OK) return st;
  int64_t checked = first ? aotrun_load_clock_ns() : 0;
  int async = call != NULL && call->no_sync;
  /* An async call before may have left the counter armed. */
  aotrun_cuda_done_flag_disarm(&m->graph_ctx.done);
  aotrun_cuda_timing_begin(&m->timing, m->graph_ctx.stream);
  m->timing_pending = 0;
  m->graph_ctx.call = call;
  st = aotrun_graph_state_execute(m->graph, inputs, ni, outputs, no, &m->err);
  m->graph_ctx.call = NULL;
  if (async && st == AOTRUN_OK && m->timing.enabled) {
    /* Read by synchronize: finishing here would wait for the GPU. */
    aotrun_cuda_timing_mark_end(&m->timing, m->graph_ctx.stream);
    m->timing_pending = 1;
  } else {
    aotrun_cuda_timing_finish(&m->timing, st == AOTRUN_OK && !async);
  }
  if (first && st == AOTRUN_OK && !atomic_exchange(&m->called, 1))
    log_first_call(m, t0, checked, async);
  return st;
}

aotrun_status aotrun_cuda_method_execute(aotrun_method *m,
                                         const DLTensor *inputs, size_t ni,
                                         DLTensor *outputs, size_t no) {
  if (m == NULL) return aotrun_cuda_null_handle("execute");
  int64_t start = aotrun_load_clock_ns();
  aotrun_error_clear(&m->err);
  forget_query_error(m);
  /* Calls may come from any host thread: the method's device for the
   * call, the caller's again on return. */
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(m->device, &scope, &m->err);
  if (st != AOTRUN_OK) return st;
  st = aotrun_cuda_method_run(m, inputs, ni, outputs, no, NULL);
  aotrun_cuda_device_leave(&scope);
  if (st == AOTRUN_OK) aotrun_method_runner_note_call(m->runner, start);
  return st;
}

/* shared_stream on a live handle: later calls run on the other stream (a
 * captured graph can be launched on any stream). */
static aotrun_status switch_stream(aotrun_method *m, int shared) {
  if (shared == aotrun_cuda_stream_is_shared(m->stream)) return AOTRUN_OK;
  aotrun_cuda_stream *s = NULL;
  aotrun_status st = aotrun_cuda_stream_acquire(m->device, shared, &s, &m->err);
  if (st != AOTRUN_OK) return st;
  aotrun_cuda_stream_release(m->stream); /* synchronises it first */
  m->stream = s;
  m->graph_ctx.stream = aotrun_cuda_stream_handle(s);
  m->opts.shared_stream = shared;
  return AOTRUN_OK;
}

static aotrun_status set_option_on_device(aotrun_method *m,
                                          const aotrun_option *opt);

/* Options may create streams or recapture graphs: on the method's device,
 * the caller's again on return. */
aotrun_status aotrun_cuda_method_set_option(aotrun_method *m,
                                            const aotrun_option *opt) {
  if (m == NULL) return aotrun_cuda_null_handle("set_option");
  aotrun_error_clear(&m->err);
  forget_query_error(m);
  if (opt == NULL)
    return aotrun_error_set(&m->err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "set_option: option is NULL");
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(m->device, &scope, &m->err);
  if (st != AOTRUN_OK) return st;
  st = set_option_on_device(m, opt);
  aotrun_cuda_device_leave(&scope);
  return st;
}

static aotrun_status set_option_on_device(aotrun_method *m,
                                          const aotrun_option *opt) {
  aotrun_cuda_option_id id;
  aotrun_status st =
      aotrun_cuda_option_find(opt->key, opt->type, 1, 1, &id, &m->err);
  if (st != AOTRUN_OK) return st;
  const char *name = aotrun_method_runner_method(m->runner);
  switch (id) {
    case AOTRUN_CUDA_OPT_RECAPTURE:
      return opt->bool_value
                 ? aotrun_graph_state_recapture(m->graph, &m->err)
                 : AOTRUN_OK;
    case AOTRUN_CUDA_OPT_SHARED_STREAM:
      return switch_stream(m, opt->bool_value != 0);
    case AOTRUN_CUDA_OPT_GPU_TIMING:
      return aotrun_cuda_timing_enable(&m->timing, opt->bool_value != 0,
                                       &m->err);
    case AOTRUN_CUDA_OPT_GRAPH_SHAPES:
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      return st == AOTRUN_OK ? aotrun_graph_state_set_max_graphs(
                                   m->graph, m->opts.graph_shapes, &m->err)
                             : st;
    case AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES:
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      if (st == AOTRUN_OK)
        aotrun_graph_state_set_input_nodes(m->graph,
                                           m->opts.graph_input_nodes);
      return st;
    case AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES:
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      if (st == AOTRUN_OK)
        aotrun_graph_state_set_output_nodes(m->graph,
                                            m->opts.graph_output_nodes);
      return st;
    case AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS: /* from the next capture on */
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      if (st == AOTRUN_OK) m->graph_ctx.copy_kernels = m->opts.graph_copy_kernels;
      return st;
    case AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG: /* from the next capture on */
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      if (st == AOTRUN_OK) m->graph_ctx.done_flag = m->opts.graph_done_flag;
      return st;
    case AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT:
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      return st == AOTRUN_OK ? aotrun_method_runner_set_output_placement(
                                   m->runner, m->opts.output_placement,
                                   &m->err)
                             : st;
    case AOTRUN_CUDA_OPT_GRAPH_METHODS:
      st = aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
      if (st == AOTRUN_OK)
        aotrun_graph_state_set_enabled(
            m->graph,
            aotrun_cuda_method_list_contains(m->opts.graph_methods, name));
      return st;
    default:
      return aotrun_cuda_options_store(&m->opts, id, opt, &m->err);
  }
}

/* The read-only STRING options' values (owned by the method). */
static const char *read_only_text(aotrun_method *m, aotrun_cuda_option_id id) {
  switch (id) {
    case AOTRUN_CUDA_OPT_GRAPH_BYTES:
      return aotrun_graph_state_memory_report(m->graph);
    case AOTRUN_CUDA_OPT_LOAD_REPORT:
      return aotrun_method_runner_load_report(m->runner);
    default:
      return aotrun_graph_phase_name(aotrun_graph_state_phase(m->graph));
  }
}

aotrun_status aotrun_cuda_method_get_option(aotrun_method *m, const char *key,
                                            aotrun_option *out) {
  if (m == NULL) return aotrun_cuda_null_handle("get_option");
  aotrun_error_clear(&m->err);
  forget_query_error(m);
  if (out == NULL)
    return aotrun_error_set(&m->err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option: out is NULL");
  aotrun_cuda_option_id id;
  aotrun_status st = aotrun_cuda_option_find(key, 0, 0, 1, &id, &m->err);
  if (st != AOTRUN_OK) return st;
  if (id == AOTRUN_CUDA_OPT_GRAPH_PHASE || id == AOTRUN_CUDA_OPT_GRAPH_BYTES ||
      id == AOTRUN_CUDA_OPT_LOAD_REPORT) {
    memset(out, 0, sizeof *out);
    out->key = aotrun_cuda_option_key(id);
    out->type = AOTRUN_OPTION_STRING;
    out->string_value = read_only_text(m, id);
    return AOTRUN_OK;
  }
  if (id == AOTRUN_CUDA_OPT_GPU_TIMING ||
      id == AOTRUN_CUDA_OPT_LAST_GPU_TIME) {
    memset(out, 0, sizeof *out);
    out->key = aotrun_cuda_option_key(id);
    out->type = aotrun_cuda_option_type(id);
    if (id == AOTRUN_CUDA_OPT_GPU_TIMING)
      out->bool_value = m->timing.enabled;
    else
      out->int_value = m->timing.last_ns;
    return AOTRUN_OK;
  }
  if (id == AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT) { /* what it does now */
    memset(out, 0, sizeof *out);
    out->key = aotrun_cuda_option_key(id);
    out->type = AOTRUN_OPTION_BOOL;
    out->bool_value = aotrun_method_runner_places_outputs(m->runner);
    return AOTRUN_OK;
  }
  if (id == AOTRUN_CUDA_OPT_WEIGHT_COPIES) {
    memset(out, 0, sizeof *out);
    out->key = aotrun_cuda_option_key(id);
    out->type = AOTRUN_OPTION_INT;
    out->int_value =
        (int64_t)aotrun_method_runner_weight_copies(m->runner);
    return AOTRUN_OK;
  }
  aotrun_cuda_options_read(&m->opts, id, out);
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_method_num_io(const aotrun_method *m, int32_t kind,
                                        size_t *count) {
  if (m == NULL) return aotrun_cuda_null_handle("get_num_io");
  aotrun_error e = {0};
  return aotrun_query_error_keep(
      m->serial, aotrun_method_runner_num_io(m->runner, kind, count, &e), &e);
}

aotrun_status aotrun_cuda_method_io_info(const aotrun_method *m, int32_t kind,
                                         size_t index, aotrun_io_info *out) {
  if (m == NULL) return aotrun_cuda_null_handle("get_io_info");
  aotrun_error e = {0};
  return aotrun_query_error_keep(
      m->serial,
      aotrun_method_runner_io_info(m->runner, kind, index, out, &e), &e);
}

const char *aotrun_cuda_method_last_error(const aotrun_method *m) {
  if (m == NULL) return aotrun_cuda_thread_error()->message;
  const char *kept = aotrun_query_error_message(m->serial);
  return kept != NULL ? kept : m->err.message;
}
