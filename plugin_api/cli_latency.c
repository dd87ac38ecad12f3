/*
 * cli_latency.c: timed execute calls and their statistics, shared by
 * `aotrun bench` and `aotrun demo`'s CUDA part. Times are host wall time
 * (clock_gettime(CLOCK_MONOTONIC)); execute returns after its outputs are
 * written (the plugin ABI), so the backend's synchronisation is included.
 */
#include <stdlib.h>
#include <time.h>

#include "plugin_api/cli.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The value of nearest rank p (0 < p <= 100) in sorted v[0..n). */
static double rank(const double *v, size_t n, size_t p) {
  size_t r = (p * n + 99) / 100; /* ceil(p / 100 * n) */
  return v[r == 0 ? 0 : r - 1];
}

cli_stats cli_stats_of(double *v, size_t n) {
  cli_stats s = {0};
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] >= 0) v[k++] = v[i];
  s.count = k;
  if (k == 0) return s;
  qsort(v, k, sizeof *v, by_value);
  double sum = 0;
  for (size_t i = 0; i < k; i++) sum += v[i];
  s.median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
  s.p90 = rank(v, k, 90);
  s.p99 = rank(v, k, 99);
  s.min = v[0];
  s.max = v[k - 1];
  s.mean = sum / (double)k;
  return s;
}

int cli_timed_execute(const cli_session *s, cli_tensors *t, const char *what,
                      long index, double *wall_us) {
  cli_tensors_reset_shapes(t);
  int64_t start = now_ns();
  aotrun_status st = cli_execute(s, t);
  *wall_us = (double)(now_ns() - start) / 1e3;
  cli_tensors_release_managed(t); /* outside the timed region */
  if (st != AOTRUN_OK)
    return index < 0 ? cli_fail(cli_exit_for_status(st), "%s: %s", what,
                                aotrun_host_last_error())
                     : cli_fail(cli_exit_for_status(st), "%s %ld: %s", what,
                                index, aotrun_host_last_error());
  return CLI_EXIT_OK;
}
