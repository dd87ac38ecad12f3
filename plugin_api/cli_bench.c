/*
 * cli_bench.c: `aotrun bench PROGRAM ...`: per-call latency of execute.
 *
 * Measured, all with clock_gettime(CLOCK_MONOTONIC) on the host:
 *   init        cli_session_open: plugin load, program and method init
 *   first call  the first execute after init (not counted in the warm-up
 *               or the iterations); --json adds the next 8 calls' times
 *               in order (next_calls_us), warm-up included, and the
 *               minor page faults of the process during each of those
 *               calls (getrusage; *_minor_faults): code and data touched
 *               for the first time show there
 *   latency     each of --iterations executes after --warmup more: median,
 *               p90, p99 (nearest rank), min, max, mean. execute returns
 *               after its outputs are written (the plugin ABI), so this is
 *               wall time including the backend's synchronisation.
 *   gpu time    when the backend knows the method options gpu_timing (BOOL,
 *               set to 1 here) and last_gpu_time_ns (INT, read after each
 *               call; -1: unknown): the GPU time of each call. A backend
 *               without them (NOT_FOUND, NOT_SUPPORTED) gets "not
 *               available", never an error. --no-gpu-time skips them.
 * Timed calls and statistics: cli_latency.c (shared with demo). A backend
 * with execute_ex allocates outputs of data-dependent size in the timed
 * call (cli_execute.c); freeing them is not timed.
 * --device-io keeps inputs and outputs in device memory (cli_device_io.c);
 * --json prints one JSON object instead of the text lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include <cjson/cJSON.h>

#include "plugin_api/cli.h"

#define GPU_TIMING_OPTION "gpu_timing"
#define GPU_TIME_OPTION "last_gpu_time_ns"
#define BENCH_NEXT_CALLS 8

typedef struct bench {
  cli_job job;
  cli_device_io dio;
  int dio_started;
  double first_us, *wall_us; /* wall_us[iterations] */
  /* The calls after the first, warm-up included, in order: whether the
   * first call's extra time is its own or spread over a few calls. */
  double next_us[BENCH_NEXT_CALLS];
  size_t num_next;
  long first_faults, next_faults[BENCH_NEXT_CALLS]; /* minor page faults */
  /* GPU time: on while the backend delivers it; gpu_us[i] < 0: unknown. */
  int gpu_on;
  double gpu_first_us, *gpu_us;
  char gpu_note[512]; /* why there is no GPU time */
} bench;

/* Asks the backend for GPU time per call (method option gpu_timing). */
static void gpu_timing_start(bench *b) {
  const cli_options *o = &b->job.opts;
  if (o->no_gpu_time) {
    snprintf(b->gpu_note, sizeof b->gpu_note, "not measured (--no-gpu-time)");
    return;
  }
  aotrun_option on = {.key = GPU_TIMING_OPTION,
                      .type = AOTRUN_OPTION_BOOL,
                      .bool_value = 1};
  aotrun_status st = aotrun_host_method_set_option(b->job.session.handle, &on);
  if (st == AOTRUN_OK) {
    b->gpu_on = 1;
    return;
  }
  snprintf(b->gpu_note, sizeof b->gpu_note, "%s%s",
           st == AOTRUN_ERR_NOT_FOUND || st == AOTRUN_ERR_NOT_SUPPORTED
               ? "the backend does not offer it: "
               : "the backend refused gpu_timing: ",
           aotrun_host_last_error());
}

/* The GPU time of the last call in us (-1: unknown); a backend that stops
 * answering turns GPU time off with a note. */
static double gpu_time_of_last_call(bench *b) {
  if (!b->gpu_on) return -1;
  aotrun_option v;
  aotrun_status st =
      aotrun_host_method_get_option(b->job.session.handle, GPU_TIME_OPTION, &v);
  if (st == AOTRUN_OK && v.type == AOTRUN_OPTION_INT)
    return v.int_value < 0 ? -1 : (double)v.int_value / 1e3;
  b->gpu_on = 0;
  if (st == AOTRUN_OK)
    snprintf(b->gpu_note, sizeof b->gpu_note,
             "the backend's option " GPU_TIME_OPTION " is not an INT");
  else
    snprintf(b->gpu_note, sizeof b->gpu_note, "%s", aotrun_host_last_error());
  return -1;
}

/* The process's minor page faults so far (-1: unknown). */
static long minor_faults(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : -1;
}

/* One execute; *wall gets its time in us. `what` and `index` (if >= 0)
 * name it in errors. The first call and the next few also count their
 * page faults (outside the timed region). */
static int call_once(bench *b, const char *what, long index, double *wall,
                     double *gpu) {
  int counted = index < 0 || b->num_next < BENCH_NEXT_CALLS;
  long before = counted ? minor_faults() : -1;
  int rc = cli_timed_execute(&b->job.session, &b->job.tensors, what, index,
                             wall);
  if (rc != CLI_EXIT_OK) return rc;
  long after = counted ? minor_faults() : -1;
  long faults = before < 0 || after < 0 ? -1 : after - before;
  *gpu = gpu_time_of_last_call(b);
  if (index < 0) {
    b->first_faults = faults;
  } else if (b->num_next < BENCH_NEXT_CALLS) {
    b->next_faults[b->num_next] = faults;
    b->next_us[b->num_next++] = *wall;
  }
  return rc;
}

/* First call, --warmup calls, then --iterations timed calls. */
static int time_runs(bench *b) {
  const cli_options *o = &b->job.opts;
  double wall, gpu;
  int rc = call_once(b, "first call", -1, &b->first_us, &b->gpu_first_us);
  for (long i = 0; rc == CLI_EXIT_OK && i < o->warmup; i++)
    rc = call_once(b, "warm-up call", i, &wall, &gpu);
  for (long i = 0; rc == CLI_EXIT_OK && i < o->iterations; i++)
    rc = call_once(b, "iteration", i, &b->wall_us[i], &b->gpu_us[i]);
  return rc;
}

static cJSON *stats_json(const cli_stats *s) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "median", s->median);
  cJSON_AddNumberToObject(j, "p90", s->p90);
  cJSON_AddNumberToObject(j, "p99", s->p99);
  cJSON_AddNumberToObject(j, "min", s->min);
  cJSON_AddNumberToObject(j, "max", s->max);
  cJSON_AddNumberToObject(j, "mean", s->mean);
  cJSON_AddNumberToObject(j, "count", (double)s->count);
  return j;
}

static int print_json(const bench *b, const cli_stats *wall,
                      const cli_stats *gpu) {
  const cli_options *o = &b->job.opts;
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "program", o->program);
  cJSON_AddStringToObject(j, "backend",
                          aotrun_backend_name(b->job.session.backend));
  cJSON_AddStringToObject(j, "method", o->method);
  cJSON_AddStringToObject(j, "io", o->device_io ? "device" : "host");
  cJSON *opts = cJSON_AddArrayToObject(j, "options");
  for (size_t i = 0; opts != NULL && i < o->num_options; i++)
    cJSON_AddItemToArray(opts, cJSON_CreateString(o->options[i]));
  cJSON_AddNumberToObject(j, "iterations", (double)o->iterations);
  cJSON_AddNumberToObject(j, "warmup", (double)o->warmup);
  cJSON_AddNumberToObject(j, "init_us", b->job.open_us);
  cJSON_AddNumberToObject(j, "first_call_us", b->first_us);
  cJSON *next = cJSON_AddArrayToObject(j, "next_calls_us");
  for (size_t i = 0; next != NULL && i < b->num_next; i++)
    cJSON_AddItemToArray(next, cJSON_CreateNumber(b->next_us[i]));
  cJSON_AddNumberToObject(j, "first_call_minor_faults", (double)b->first_faults);
  cJSON *nf = cJSON_AddArrayToObject(j, "next_calls_minor_faults");
  for (size_t i = 0; nf != NULL && i < b->num_next; i++)
    cJSON_AddItemToArray(nf, cJSON_CreateNumber((double)b->next_faults[i]));
  cJSON_AddItemToObject(j, "latency_us", stats_json(wall));
  int have_gpu = gpu->count > 0;
  cJSON_AddBoolToObject(j, "gpu_time_available", have_gpu);
  if (have_gpu) {
    cJSON_AddItemToObject(j, "gpu_time_us", stats_json(gpu));
    if (b->gpu_first_us >= 0)
      cJSON_AddNumberToObject(j, "gpu_first_call_us", b->gpu_first_us);
    else
      cJSON_AddNullToObject(j, "gpu_first_call_us");
  } else {
    cJSON_AddNullToObject(j, "gpu_time_us");
    cJSON_AddNullToObject(j, "gpu_first_call_us");
    cJSON_AddStringToObject(j, "gpu_time_note", b->gpu_note);
  }
  char *text = cJSON_Print(j);
  cJSON_Delete(j);
  if (text == NULL) return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  fputs(text, stdout);
  fputc('\n', stdout);
  cJSON_free(text);
  return CLI_EXIT_OK;
}

static void print_stats(const char *label, const cli_stats *s) {
  printf("%s p50 %.1f us  p90 %.1f us  p99 %.1f us  min %.1f us  mean %.1f "
         "us",
         label, s->median, s->p90, s->p99, s->min, s->mean);
}

static void print_text(const bench *b, const cli_stats *wall,
                       const cli_stats *gpu) {
  const cli_options *o = &b->job.opts;
  printf("backend %s, method %s, %s I/O: %ld iterations after a first call "
         "and %ld warm-up\n",
         aotrun_backend_name(b->job.session.backend), o->method,
         o->device_io ? "device" : "host", o->iterations, o->warmup);
  printf("init %.1f ms (plugin load + method init), first call %.1f us\n",
         b->job.open_us / 1e3, b->first_us);
  print_stats("wall", wall);
  printf("\n");
  if (gpu->count > 0) {
    print_stats("gpu ", gpu);
    printf(" (%zu of %ld calls)\n", gpu->count, o->iterations);
  } else {
    printf("gpu  not available: ");
    cli_put_escaped(stdout, b->gpu_note);
    printf("\n");
  }
}

int cli_bench(int argc, char **argv) {
  bench b;
  memset(&b, 0, sizeof b);
  int rc = cli_job_open(argc, argv, CLI_BENCH_OPTIONS, &b.job);
  const cli_options *o = &b.job.opts;
  if (rc == CLI_EXIT_OK) {
    b.wall_us = malloc((size_t)o->iterations * sizeof *b.wall_us);
    b.gpu_us = malloc((size_t)o->iterations * sizeof *b.gpu_us);
    if (b.wall_us == NULL || b.gpu_us == NULL)
      rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory for %ld iterations",
                    o->iterations);
  }
  if (rc == CLI_EXIT_OK && o->device_io) {
    rc = cli_device_io_start(&b.job.session, &b.job.tensors, &b.dio);
    b.dio_started = rc == CLI_EXIT_OK;
  }
  if (rc == CLI_EXIT_OK) {
    gpu_timing_start(&b);
    rc = time_runs(&b);
  }
  if (rc == CLI_EXIT_OK && b.dio_started)
    rc = cli_device_io_copy_outputs(&b.dio);
  if (rc == CLI_EXIT_OK) {
    cli_stats wall = cli_stats_of(b.wall_us, (size_t)o->iterations);
    cli_stats gpu = cli_stats_of(b.gpu_us, (size_t)o->iterations);
    if (gpu.count == 0 && b.gpu_note[0] == '\0')
      snprintf(b.gpu_note, sizeof b.gpu_note,
               "the backend returned -1 (unknown) for " GPU_TIME_OPTION);
    if (o->json)
      rc = print_json(&b, &wall, &gpu);
    else
      print_text(&b, &wall, &gpu);
  }
  if (b.dio_started) cli_device_io_stop(&b.dio);
  free(b.wall_us);
  free(b.gpu_us);
  cli_job_close(&b.job);
  return rc;
}
