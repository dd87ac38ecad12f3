/*
 * cli_demo_cuda.c: `aotrun demo`'s CUDA part. With the cuda backend
 * available it runs the CUDA example (the fixture built with -DFIXTURE_CUDA:
 * the CPU example's y, computed by cuBLAS through the shim) on it:
 *   1. one call on the same generated inputs as the CPU part, inputs and
 *      outputs printed, each output compared with the CPU part's (the host
 *      reference);
 *   2. latency without CUDA graphs: the median of DEMO_ITERATIONS calls
 *      after DEMO_WARMUP, inputs and outputs in device memory
 *      (cli_device_io.c, as `bench --device-io`);
 *   3. latency with CUDA graphs: the method option
 *      enable_cuda_graph_for_method=forward set on the same handle, the same
 *      warm-up (its first calls are the graph's warm-up and capture) and
 *      calls, the graph phase checked to be Replay and the outputs compared
 *      again.
 * Without the backend it prints one line: what is missing and how to run
 * it on a GPU machine. The CUDA example lives (first match) at
 * $AOTRUN_EXAMPLE_PROGRAM_CUDA, <binary dir>/AOTRUN_EXAMPLE_CUDA_DIR_NAME,
 * <binary>.runfiles/aotrun/AOTRUN_EXAMPLE_CUDA_RUNFILES.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"
#include "plugin_api/cli_demo.h"

#ifndef AOTRUN_EXAMPLE_CUDA_DIR_NAME
#define AOTRUN_EXAMPLE_CUDA_DIR_NAME "example_program_cuda"
#endif
#ifndef AOTRUN_EXAMPLE_CUDA_RUNFILES
#define AOTRUN_EXAMPLE_CUDA_RUNFILES "examples/program_cuda"
#endif
#define DEMO_WARMUP 100 /* > the CUDA backend's 3 graph warm-up calls */
#define DEMO_ITERATIONS 1000
#define GRAPH_OPTION "enable_cuda_graph_for_method"
#define GRAPH_PHASE_OPTION "cuda_graph_phase"
#define GRAPH_REPLAY "Replay"
/* float32 agreement: cuBLAS may sum in another order (or in TF32). */
#define DEMO_TOLERANCE 1e-3

static const char kHowTo[] =
    "to run it on a GPU: on a machine with an NVIDIA GPU and a driver for "
    "CUDA 13, run tools/demo.sh (or aotrun demo with libaotrun_cuda.so "
    "among its plugins; docs/user-guide.md)";

void cli_demo_cuda_probe_registry(const aotrun_registry *r,
                                  cli_demo_cuda_probe *out) {
  memset(out, 0, sizeof *out);
  const aotrun_backend *b = NULL;
  if (r == NULL ||
      aotrun_registry_find(r, CLI_DEMO_CUDA_BACKEND, &b) != AOTRUN_OK)
    return;
  out->loaded = 1;
  out->available = aotrun_backend_is_available(b, out->reason,
                                               sizeof out->reason) != 0;
  if (out->available) out->reason[0] = '\0';
}

/* The one line of a machine where the CUDA part cannot run. */
static void print_not_run(const cli_demo_cuda_probe *p) {
  printf("cuda example: not run: ");
  if (!p->loaded) {
    printf("no backend '" CLI_DEMO_CUDA_BACKEND "' is loaded (add --plugin "
           "PATH/libaotrun_cuda.so); ");
  } else {
    printf("backend '" CLI_DEMO_CUDA_BACKEND "' is not available: ");
    cli_put_escaped(stdout, p->reason);
    printf("; ");
  }
  printf("%s\n", kHowTo);
}

/* Largest |a - b| over two float32 tensors of one shape; *where gets the
 * element. Returns 0 when they cannot be compared. */
static int max_difference(const DLTensor *a, const DLTensor *b, double *diff,
                          size_t *where) {
  DLDataType f32 = {kDLFloat, 32, 1};
  if (memcmp(&a->dtype, &f32, sizeof f32) != 0 ||
      memcmp(&b->dtype, &f32, sizeof f32) != 0 || a->ndim != b->ndim)
    return 0;
  size_t n = 1;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (a->shape[d] != b->shape[d]) return 0;
    n *= (size_t)a->shape[d];
  }
  const float *x = (const float *)((const char *)a->data + a->byte_offset);
  const float *y = (const float *)((const char *)b->data + b->byte_offset);
  *diff = 0;
  *where = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)x[i] - (double)y[i]);
    if (d > *diff || isnan(d)) {
      *diff = d;
      *where = i;
      if (isnan(d)) break;
    }
  }
  return 1;
}

/* Compares every output with the host reference's output of that index;
 * prints one line each. `when` names the calls ("" or " after ..."). */
static int compare_outputs(const cli_tensors *t, const cli_tensors *ref,
                           const char *when) {
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; i < t->num_outputs; i++) {
    double diff = 0;
    size_t at = 0;
    if (i >= ref->num_outputs ||
        !max_difference(&t->outputs[i], &ref->outputs[i], &diff, &at)) {
      printf("output %zu%s: no host reference (the CPU example has no float32 "
             "output %zu of this shape)\n",
             i, when, i);
      continue;
    }
    if (diff <= DEMO_TOLERANCE) {
      printf("output %zu%s matches the host reference (max difference %g)\n",
             i, when, diff);
      continue;
    }
    printf("output %zu%s differs from the host reference: max difference %g "
           "at element %zu\n",
           i, when, diff, at);
    rc = cli_fail(CLI_EXIT_EXECUTE,
                  "the cuda example's output %zu differs from the host "
                  "reference by %g (tolerance %g)",
                  i, diff, DEMO_TOLERANCE);
  }
  return rc;
}

/* DEMO_WARMUP calls, then DEMO_ITERATIONS timed ones into *out. */
static int time_calls(const cli_session *s, cli_tensors *t, double *wall,
                      cli_stats *out) {
  double w;
  int rc = CLI_EXIT_OK;
  for (long i = 0; rc == CLI_EXIT_OK && i < DEMO_WARMUP; i++)
    rc = cli_timed_execute(s, t, "cuda example: warm-up call", i, &w);
  for (long i = 0; rc == CLI_EXIT_OK && i < DEMO_ITERATIONS; i++)
    rc = cli_timed_execute(s, t, "cuda example: timed call", i, &wall[i]);
  if (rc == CLI_EXIT_OK) *out = cli_stats_of(wall, DEMO_ITERATIONS);
  return rc;
}

/* Turns CUDA graphs on for the method on its handle. */
static int enable_graphs(const cli_session *s, const char *method) {
  aotrun_option on = {.key = GRAPH_OPTION,
                      .type = AOTRUN_OPTION_STRING,
                      .string_value = method};
  if (aotrun_host_method_set_option(s->handle, &on) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "cuda example: setting %s=%s: %s",
                    GRAPH_OPTION, method, aotrun_host_last_error());
  return CLI_EXIT_OK;
}

/* The graph phase must be Replay after the graph calls: otherwise the
 * "with graphs" figure would time calls that ran without one. */
static int check_replay(const cli_session *s) {
  aotrun_option v;
  if (aotrun_host_method_get_option(s->handle, GRAPH_PHASE_OPTION, &v) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "cuda example: reading %s: %s",
                    GRAPH_PHASE_OPTION, aotrun_host_last_error());
  const char *phase = v.type == AOTRUN_OPTION_STRING && v.string_value != NULL
                          ? v.string_value
                          : "(not a string)";
  if (strcmp(phase, GRAPH_REPLAY) != 0)
    return cli_fail(CLI_EXIT_EXECUTE,
                    "cuda example: CUDA graphs did not engage: %s is %s after "
                    "%d calls (AOTRUN_LOG_LEVEL=info says why)",
                    GRAPH_PHASE_OPTION, phase, DEMO_WARMUP + DEMO_ITERATIONS);
  return CLI_EXIT_OK;
}

/* Steps 2 and 3 (see the file comment) on device-resident tensors. */
static int latency(const cli_session *s, const char *method, cli_tensors *t,
                   const cli_tensors *ref) {
  double *wall = malloc(DEMO_ITERATIONS * sizeof *wall);
  if (wall == NULL) return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  cli_device_io dio;
  cli_stats plain = {0}, graph = {0};
  int rc = cli_device_io_start(s, t, &dio);
  int started = rc == CLI_EXIT_OK;
  if (rc == CLI_EXIT_OK) rc = time_calls(s, t, wall, &plain);
  if (rc == CLI_EXIT_OK)
    printf("latency without CUDA graphs: median %.1f us (p90 %.1f us) over "
           "%d calls, inputs and outputs in device memory\n",
           plain.median, plain.p90, DEMO_ITERATIONS);
  if (rc == CLI_EXIT_OK) rc = enable_graphs(s, method);
  if (rc == CLI_EXIT_OK) rc = time_calls(s, t, wall, &graph);
  if (rc == CLI_EXIT_OK) rc = check_replay(s);
  if (rc == CLI_EXIT_OK)
    printf("latency with CUDA graphs: median %.1f us (p90 %.1f us) over %d "
           "calls, speed-up %.2fx (median without / with)\n",
           graph.median, graph.p90, DEMO_ITERATIONS,
           graph.median > 0 ? plain.median / graph.median : 0.0);
  if (rc == CLI_EXIT_OK) rc = cli_device_io_copy_outputs(&dio);
  if (started) cli_device_io_stop(&dio); /* host buffers back, with values */
  if (rc == CLI_EXIT_OK) rc = compare_outputs(t, ref, " after the graph calls");
  free(wall);
  return rc;
}

/* Step 1, then the latency steps. */
static int run_cuda_example(const cli_options *opts, const cli_tensors *ref) {
  cli_session s;
  int rc = cli_session_open(opts, &s);
  if (rc != CLI_EXIT_OK) return rc;
  printf("backend %s, method %s\n", aotrun_backend_name(s.backend),
         opts->method);
  cli_tensors t;
  double first_us = 0;
  rc = cli_demo_inputs(&s, &t);
  if (rc == CLI_EXIT_OK)
    rc = cli_timed_execute(&s, &t, "cuda example: first call", -1, &first_us);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t.num_outputs; i++)
    cli_print_tensor("output", i, NULL, &t.outputs[i], 1);
  if (rc == CLI_EXIT_OK) rc = compare_outputs(&t, ref, "");
  if (rc == CLI_EXIT_OK) rc = latency(&s, opts->method, &t, ref);
  cli_tensors_free(&t);
  cli_session_close(&s);
  return rc;
}

int cli_demo_cuda(const cli_options *opts, const cli_demo_cuda_probe *probe,
                  const cli_tensors *host_ref) {
  if (!probe->available) {
    print_not_run(probe);
    return CLI_EXIT_OK;
  }
  char buf[PATH_MAX + 64];
  cli_options o = *opts;
  o.backend = CLI_DEMO_CUDA_BACKEND;
  o.program = cli_demo_find_example(
      "AOTRUN_EXAMPLE_PROGRAM_CUDA", AOTRUN_EXAMPLE_CUDA_DIR_NAME,
      AOTRUN_EXAMPLE_CUDA_RUNFILES, buf, sizeof buf);
  if (o.program == NULL)
    return cli_fail(CLI_EXIT_PROGRAM,
                    "no CUDA example program: set "
                    "AOTRUN_EXAMPLE_PROGRAM_CUDA or put %s/ next to the "
                    "aotrun binary (%s)",
                    AOTRUN_EXAMPLE_CUDA_DIR_NAME, cli_binary_dir());
  printf("cuda example program %s\n", o.program);
  return run_cuda_example(&o, host_ref);
}
