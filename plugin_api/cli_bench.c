/* cli_bench.c: `aotrun bench PROGRAM ...`: execute latency percentiles. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "plugin_api/cli.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Runs warmup + iterations executes; times[] gets the timed ones. */
static int time_runs(const cli_session *s, const cli_options *o,
                     cli_tensors *t, double *times) {
  for (long i = 0; i < o->warmup + o->iterations; i++) {
    cli_tensors_reset_shapes(t);
    double start = now_us();
    if (aotrun_host_method_execute(s->handle, t->inputs, t->num_inputs,
                                   t->outputs, t->num_outputs) != AOTRUN_OK)
      return cli_fail(CLI_EXIT_EXECUTE, "iteration %ld: %s", i,
                      aotrun_host_last_error());
    if (i >= o->warmup) times[i - o->warmup] = now_us() - start;
  }
  return CLI_EXIT_OK;
}

int cli_bench(int argc, char **argv) {
  cli_job j;
  int rc = cli_job_open(argc, argv,
                        CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD |
                            CLI_OPT_INPUT | CLI_OPT_ITERATIONS |
                            CLI_OPT_WARMUP | CLI_OPT_OPTION,
                        &j);
  const cli_options *o = &j.opts;
  double *times = NULL;
  if (rc == CLI_EXIT_OK) {
    times = malloc((size_t)o->iterations * sizeof *times);
    if (times == NULL) rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  }
  if (rc == CLI_EXIT_OK) rc = time_runs(&j.session, o, &j.tensors, times);
  if (rc == CLI_EXIT_OK) {
    double sum = 0;
    for (long i = 0; i < o->iterations; i++) sum += times[i];
    qsort(times, (size_t)o->iterations, sizeof *times, by_value);
    printf("backend %s, method %s: %ld iterations (%ld warmup)\n",
           aotrun_backend_name(j.session.backend), o->method, o->iterations,
           o->warmup);
    printf("p50 %.1f us  p90 %.1f us  mean %.1f us\n",
           times[(o->iterations - 1) * 50 / 100],
           times[(o->iterations - 1) * 90 / 100], sum / (double)o->iterations);
  }
  free(times);
  cli_job_close(&j);
  return rc;
}
