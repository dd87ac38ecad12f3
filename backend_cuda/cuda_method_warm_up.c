/*
 * cuda_method_warm_up.c: what init does before a handle's first call:
 * the libraries' one-time work (option warm_up), the model's own lazy work
 * by runs on zeroed inputs (warm_up_run, cuda_warm_up_run.h), and with
 * cuda_graph_capture_at_init the method's CUDA graph captured from those
 * runs, so a caller's first call is a replay.
 */
#include "backend_cuda/cuda_method_internal.h"

#include <stdio.h>

#include "aot_loader/load_report.h"
#include "backend_cuda/capture_at_init.h"
#include "backend_cuda/cuda_graph_state.h"
#include "backend_cuda/cuda_warm_up_run.h"
#include "backend_cuda/warm_up_plan.h"
#include "shim_lib/aotrun_shim.h"

/* The first call's one-time library work (cuBLAS, cuBLASLt heuristics,
 * cuDNN, the allocator's pool: 10-70 ms each on the H200) done now, for the
 * op families the method imports (warm_up_plan.h). A failure is not the
 * init's: the op meets it again and reports it at its call. */
static void warm_up(aotrun_method *m, const void *manifest, size_t size,
                    const char *method) {
  if (!m->opts.warm_up) return;
  uint32_t what = aotrun_warm_up_plan(manifest, size, method);
  int64_t t0 = aotrun_load_clock_ns();
  AOTITorchError e = aotrun_shim_warm_up(
      m->device, aotrun_cuda_stream_handle(m->stream), what);
  char line[600];
  if (e != AOTI_TORCH_SUCCESS) {
    snprintf(line, sizeof line,
             "method %s: warm-up at init failed (its first call will try "
             "again): %s",
             method, aotrun_shim_last_error());
    aotrun_cuda_method_log(m, AOTRUN_LOG_WARNING, line);
    aotrun_shim_clear_error();
    return;
  }
  snprintf(line, sizeof line,
           "method %s: warm-up at init:%s%s%s in %.1f ms", method,
           what & AOTRUN_SHIM_WARM_ALLOC ? " allocator pool" : "",
           what & AOTRUN_SHIM_WARM_GEMM ? ", cuBLAS/cuBLASLt" : "",
           what & AOTRUN_SHIM_WARM_CONV ? ", cuDNN" : "",
           (double)(aotrun_load_clock_ns() - t0) / 1e6);
  aotrun_cuda_method_log(m, AOTRUN_LOG_DEBUG, line);
}

/* A warm-up call through the method's graph state, as a caller's goes
 * (cuda_graph_capture_at_init): the inputs' check, then the graph's
 * warm-up call, its capture or a replay. */
static aotrun_status warm_up_graph_call(void *ctx, const DLTensor *in,
                                        size_t ni, DLTensor *out, size_t no,
                                        aotrun_error *err) {
  aotrun_method *m = ctx;
  aotrun_status st =
      aotrun_method_runner_check_inputs(m->runner, in, ni, err);
  return st == AOTRUN_OK
             ? aotrun_graph_state_execute(m->graph, in, ni, out, no, err)
             : st;
}

/* Calls go on while the graph warms up, and once more after its capture. */
static int warm_up_graph_more(void *ctx, int calls) {
  (void)calls;
  aotrun_method *m = ctx;
  return aotrun_capture_at_init_more(aotrun_graph_state_phase(m->graph),
                                     aotrun_graph_state_num_replays(m->graph));
}

/* Why the graph cannot be captured at init (capture_at_init.h), or NULL. */
static const char *no_capture_at_init(const aotrun_method *m, char *why,
                                      size_t n) {
  return aotrun_capture_at_init_refusal(
      aotrun_method_runner_program_method(m->runner), m->opts.graph_shapes,
      aotrun_graph_state_phase(m->graph),
      aotrun_graph_state_disabled_reason(m->graph), why, n);
}

/* The log's words on the graph after a warm-up with capture at init. */
static void capture_words(const aotrun_method *m, const aotrun_warm_up_result *r,
                          const char *refused, char *out, size_t n) {
  if (refused != NULL)
    snprintf(out, n, "; no CUDA graph captured at init: %s", refused);
  else if (aotrun_graph_state_phase(m->graph) == AOTRUN_GRAPH_REPLAY)
    snprintf(out, n, "; the CUDA graph captured at init (%d calls: warm-up, "
             "capture, replay)", r->caller_calls);
  else {
    const char *off = aotrun_graph_state_disabled_reason(m->graph); /* "" */
    snprintf(out, n, "; no CUDA graph captured at init: after %d calls the "
             "phase is %s%s%s", r->caller_calls,
             aotrun_graph_phase_name(aotrun_graph_state_phase(m->graph)),
             off[0] != '\0' ? ", " : "", off);
  }
}

/* Option warm_up_run: the model's own lazy work done by runs on zeroed
 * inputs (cuda_warm_up_run.h). Neither a refusal nor a failure fails the
 * init: the first call then does that work, as without the option. */
static void warm_up_run(aotrun_method *m, const void *manifest, size_t size,
                        const char *method) {
  if (!m->opts.warm_up_run) return;
  aotrun_warm_up_result r;
  char line[2400], runs[1400], graph[600] = "", why[400];
  int asked = aotrun_capture_at_init_asked(
      m->opts.graph_capture_at_init, aotrun_graph_state_phase(m->graph));
  const char *refused = asked ? no_capture_at_init(m, why, sizeof why) : NULL;
  aotrun_warm_up_caller graph_caller = {warm_up_graph_call,
                                        warm_up_graph_more, m};
  int capture = asked && refused == NULL;
  int bad = aotrun_cuda_warm_up_run(m->runner, manifest, size, method,
                                    m->device,
                                    aotrun_cuda_stream_handle(m->stream),
                                    capture ? &graph_caller : NULL, &r);
  if (asked && !(bad && r.refused))
    capture_words(m, &r, refused, graph, sizeof graph);
  char failed_call[40] = "";
  if (r.caller_path && r.caller_failed)
    snprintf(failed_call, sizeof failed_call, ", then call %d failed: ",
             r.caller_calls + 1);
  snprintf(runs, sizeof runs, "%s; %s%s%s%s",
           r.runs == 2 ? "2 runs: at the export's sizes, then the smallest"
                       : "1 run: at the export's sizes",
           r.caller_path     ? "the first also through a call's own path"
           : r.caller_failed ? "the first through a call's own path failed: "
                             : "not through a call's own path: ",
           failed_call,
           r.caller_path && !r.caller_failed ? "" : r.caller_why, graph);
  if (bad && r.refused)
    snprintf(line, sizeof line, "method %s: no warm-up run at init: %s",
             method, r.why);
  else if (bad)
    snprintf(line, sizeof line,
             "method %s: the warm-up run at init failed (its first call "
             "does that work instead): %s",
             method, r.why);
  else if (r.runs == 1 && r.why[0] != '\0')
    snprintf(line, sizeof line,
             "method %s: warm-up run at init on zeroed inputs in %.1f ms "
             "(%s; the run at the smallest sizes failed: %s)",
             method, r.ms, runs, r.why);
  else
    snprintf(line, sizeof line,
             "method %s: warm-up run at init on zeroed inputs in %.1f ms (%s)",
             method, r.ms, runs);
  int failed = (bad && !r.refused) || (!bad && r.why[0] != '\0') ||
               (!bad && r.caller_failed);
  /* Set to capture at init and not given one: said at info (by default,
   * at debug: a dynamic graph captured at a caller's call is no news). */
  int uncaptured = m->opts.graph_capture_at_init == 1 &&
                   aotrun_graph_state_phase(m->graph) != AOTRUN_GRAPH_REPLAY;
  aotrun_cuda_method_log(m, failed ? AOTRUN_LOG_WARNING
             : bad || uncaptured ? AOTRUN_LOG_INFO : AOTRUN_LOG_DEBUG, line);
}

void aotrun_cuda_method_warm_up(aotrun_method *m, const void *manifest,
                                size_t size, const char *method) {
  warm_up(m, manifest, size, method);
  warm_up_run(m, manifest, size, method);
}
