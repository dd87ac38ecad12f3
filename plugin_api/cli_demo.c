/*
 * cli_demo.c: `aotrun demo`: runs the bundled example program (a CPU model)
 * on --backend or the first available backend with generated inputs and
 * prints inputs and outputs; then the CUDA part (cli_demo_cuda.c) runs the
 * CUDA example on the cuda backend, compared with these outputs, or says
 * why it cannot.
 *
 * Where the example lives (first match):
 *   1. $AOTRUN_EXAMPLE_PROGRAM
 *   2. <binary dir>/AOTRUN_EXAMPLE_DIR_NAME            (flat install)
 *   3. <binary>.runfiles/aotrun/AOTRUN_EXAMPLE_RUNFILES (bazel run)
 * Hook for the build: override the two names with -D copts.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/cli.h"
#include "plugin_api/cli_demo.h"

#ifndef AOTRUN_EXAMPLE_DIR_NAME
#define AOTRUN_EXAMPLE_DIR_NAME "example_program"
#endif
#ifndef AOTRUN_EXAMPLE_RUNFILES
#define AOTRUN_EXAMPLE_RUNFILES "examples/program"
#endif
#define DEMO_SYMBOL_SIZE 2 /* size given to every symbolic input dim */

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *cli_demo_find_example(const char *env_name, const char *dir_name,
                                  const char *runfiles, char *buf,
                                  size_t size) {
  const char *env = getenv(env_name);
  if (env != NULL && env[0] != '\0') return env;
  int len = snprintf(buf, size, "%s/%s", cli_binary_dir(), dir_name);
  if (len >= 0 && (size_t)len < size && is_dir(buf)) return buf;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  len = snprintf(buf, size, "%s.runfiles/aotrun/%s", exe, runfiles);
  return len >= 0 && (size_t)len < size && is_dir(buf) ? buf : NULL;
}

/* Deterministic small values: i * 0.25 - 1 for floats, i % 5 otherwise. */
static void fill(aotrun_npy *a) {
  size_t item = aotrun_dtype_size(a->dtype);
  size_t n = item ? a->nbytes / item : 0;
  for (size_t i = 0; i < n; i++) {
    char *p = (char *)a->data + i * item;
    if (a->dtype.code == kDLFloat && a->dtype.bits == 32) {
      float v = (float)i * 0.25f - 1.0f;
      memcpy(p, &v, sizeof v);
    } else if (a->dtype.code == kDLFloat && a->dtype.bits == 64) {
      double v = (double)i * 0.25 - 1.0;
      memcpy(p, &v, sizeof v);
    } else if (a->dtype.code == kDLInt || a->dtype.code == kDLUInt) {
      uint64_t v = i % 5; /* little-endian: low bytes first */
      memcpy(p, &v, item < sizeof v ? item : sizeof v);
    } else if (a->dtype.code == AOTRUN_DL_BOOL) {
      *p = (char)(i % 2);
    } /* other dtypes stay zero */
  }
}

/* Builds input i from the declared info and the manifest's dims. */
static int make_input(const cli_session *s, size_t i, aotrun_npy *a) {
  aotrun_io_info info;
  if (aotrun_host_method_io_info(s->handle, AOTRUN_IO_INPUT, i, &info) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  a->dtype = info.dtype;
  a->ndim = info.ndim;
  for (int32_t d = 0; d < info.ndim; d++)
    a->shape[d] = info.shape[d] >= 0 ? info.shape[d] : DEMO_SYMBOL_SIZE;
  char name[32];
  snprintf(name, sizeof name, "input %zu", i);
  if (aotrun_npy_alloc(name, a) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  fill(a);
  return CLI_EXIT_OK;
}

int cli_demo_inputs(const cli_session *s, cli_tensors *t) {
  memset(t, 0, sizeof *t);
  size_t n = 0;
  if (aotrun_host_method_num_io(s->handle, AOTRUN_IO_INPUT, &n) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  if (n > CLI_MAX_LIST) return cli_fail(CLI_EXIT_EXECUTE, "too many inputs");
  aotrun_npy *arrays = calloc(n ? n : 1, sizeof *arrays);
  if (arrays == NULL) return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++)
    rc = make_input(s, i, &arrays[i]);
  if (rc != CLI_EXIT_OK) {
    for (size_t i = 0; i < n; i++) aotrun_npy_free(&arrays[i]);
    free(arrays);
    return rc;
  }
  rc = cli_tensors_prepare(s, arrays, n, NULL, t);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t->num_inputs; i++)
    cli_print_tensor("input", i, NULL, &t->inputs[i], 1);
  return rc;
}

/* Runs the session's method once on generated inputs; t keeps the inputs
 * and outputs (the CUDA part's host reference). */
static int run_demo(cli_session *s, cli_tensors *t) {
  int rc = cli_demo_inputs(s, t);
  if (rc == CLI_EXIT_OK &&
      aotrun_host_method_execute(s->handle, t->inputs, t->num_inputs,
                                 t->outputs, t->num_outputs) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t->num_outputs; i++)
    cli_print_tensor("output", i, NULL, &t->outputs[i], 1);
  return rc;
}

int cli_demo(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, CLI_DEMO_OPTIONS, 0, &o);
  if (rc != CLI_EXIT_OK) return rc;
  char buf[PATH_MAX + 64];
  o.program = cli_demo_find_example("AOTRUN_EXAMPLE_PROGRAM",
                                    AOTRUN_EXAMPLE_DIR_NAME,
                                    AOTRUN_EXAMPLE_RUNFILES, buf, sizeof buf);
  if (o.program == NULL)
    return cli_fail(CLI_EXIT_PROGRAM,
                    "no example program: set AOTRUN_EXAMPLE_PROGRAM or put "
                    "%s/ next to the aotrun binary (%s)",
                    AOTRUN_EXAMPLE_DIR_NAME, cli_binary_dir());
  printf("example program %s\n", o.program);
  cli_session s;
  rc = cli_session_open(&o, &s);
  if (rc != CLI_EXIT_OK) return rc;
  printf("backend %s, method %s\n", aotrun_backend_name(s.backend), o.method);
  cli_tensors host_ref;
  rc = run_demo(&s, &host_ref);
  cli_demo_cuda_probe probe;
  cli_demo_cuda_probe_registry(s.registry, &probe);
  cli_session_close(&s); /* unloads the plugins: the CUDA part reloads them */
  if (rc == CLI_EXIT_OK) rc = cli_demo_cuda(&o, &probe, &host_ref);
  cli_tensors_free(&host_ref);
  return rc;
}
