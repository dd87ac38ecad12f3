/*
 * cli_demo.c: `aotrun demo`: runs the bundled example program on the best
 * available backend with generated inputs and prints inputs and outputs.
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

static const char *find_example(char *buf, size_t size) {
  const char *env = getenv("AOTRUN_EXAMPLE_PROGRAM");
  if (env != NULL && env[0] != '\0') return env;
  int len = snprintf(buf, size, "%s/%s", cli_binary_dir(),
                     AOTRUN_EXAMPLE_DIR_NAME);
  if (len >= 0 && (size_t)len < size && is_dir(buf)) return buf;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  len = snprintf(buf, size, "%s.runfiles/aotrun/%s", exe,
                 AOTRUN_EXAMPLE_RUNFILES);
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

static int run_demo(cli_session *s) {
  size_t n = 0;
  if (aotrun_host_method_num_io(s->handle, AOTRUN_IO_INPUT, &n) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  if (n > CLI_MAX_LIST) return cli_fail(CLI_EXIT_EXECUTE, "too many inputs");
  aotrun_npy *arrays = calloc(n ? n : 1, sizeof *arrays);
  if (arrays == NULL) return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++)
    rc = make_input(s, i, &arrays[i]);
  cli_tensors t;
  if (rc != CLI_EXIT_OK) {
    for (size_t i = 0; i < n; i++) aotrun_npy_free(&arrays[i]);
    free(arrays);
    return rc;
  }
  rc = cli_tensors_prepare(s, arrays, n, NULL, &t);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t.num_inputs; i++)
    cli_print_tensor("input", i, NULL, &t.inputs[i], 1);
  if (rc == CLI_EXIT_OK &&
      aotrun_host_method_execute(s->handle, t.inputs, t.num_inputs, t.outputs,
                                 t.num_outputs) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t.num_outputs; i++)
    cli_print_tensor("output", i, NULL, &t.outputs[i], 1);
  cli_tensors_free(&t);
  return rc;
}

int cli_demo(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, CLI_OPT_PLUGIN | CLI_OPT_BACKEND, 0, &o);
  if (rc != CLI_EXIT_OK) return rc;
  char buf[PATH_MAX + 64];
  o.program = find_example(buf, sizeof buf);
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
  rc = run_demo(&s);
  cli_session_close(&s);
  return rc;
}
