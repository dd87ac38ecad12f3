/*
 * test_cli_managed_outputs.c: `aotrun run` / `bench` on backends with
 * execute_ex (ABI 1.1), run as a child process: an output of
 * data-dependent size (a manifest symbol no input binds) is allocated by
 * the backend (echo; cpu_ref on the fixture model), and an output the
 * backend reports too small is reallocated and the call retried once.
 * (A backend without execute_ex keeps the capacity path: test_cli.sh,
 * "unbacked".)
 *
 * Arguments: aotrun, libaotrun_echo.so, libaotrun_cpu_ref.so,
 * fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"
#include "testing/backend/program_fixture.h"
#include "testing/host/cli_child.h"

static const char *g_aotrun, *g_echo, *g_cpu_ref, *g_model;
static char g_tmp[512], g_prog[600], g_out[1 << 14];

static int count_of(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p++) n++;
  return n;
}

/* Runs aotrun with the NULL-terminated args; stdout and stderr land in
 * g_out. Returns the exit code. */
static int run(const char *first, ...) {
  va_list ap;
  va_start(ap, first);
  int rc = cli_child_runv(g_aotrun, g_tmp, g_out, sizeof g_out, first, ap);
  va_end(ap);
  return rc;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  fclose(f);
}

/* Echo methods: "dd" returns x as y ["u0"] (no input binds u0: a
 * data-dependent size to the host); "grow" declares output a with b's
 * length "m", so a longer a does not fit the buffer the CLI sizes. */
static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_tmp, sizeof g_tmp, "%s/cli_managed_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(g_tmp) == NULL) return -1;
  snprintf(g_prog, sizeof g_prog, "%s/echo_program", g_tmp);
  mkdir(g_prog, 0700);
  char path[700];
  snprintf(path, sizeof path, "%s/manifest.json", g_prog);
  write_text(path,
             "{\"format\": \"aotrun-program\", \"format_version\": 1, "
             "\"methods\": {"
             "\"dd\": {\"library\": \"f.so\", \"constants\": [], "
             "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", "
             "\"shape\": [\"n\"]}], "
             "\"outputs\": [{\"name\": \"y\", \"dtype\": \"float32\", "
             "\"shape\": [\"u0\"]}]}, "
             "\"grow\": {\"library\": \"f.so\", \"constants\": [], "
             "\"inputs\": [{\"name\": \"a\", \"dtype\": \"float32\", "
             "\"shape\": [\"n\"]}, {\"name\": \"b\", \"dtype\": \"float32\", "
             "\"shape\": [\"m\"]}], "
             "\"outputs\": [{\"name\": \"a\", \"dtype\": \"float32\", "
             "\"shape\": [\"m\"]}, {\"name\": \"b\", \"dtype\": \"float32\", "
             "\"shape\": [\"m\"]}]}}}");
  return 0;
}

static const char *write_vector(const char *name, int64_t n, float *values) {
  static char paths[4][700];
  static int next;
  char *path = paths[next++ % 4];
  snprintf(path, 700, "%s/%s.npy", g_tmp, name);
  for (int64_t i = 0; i < n; i++) values[i] = (float)i * 1.5f - 2.0f;
  assert_int_equal(aotrun_npy_write(path, (DLDataType){kDLFloat, 32, 1}, 1,
                                    &n, values),
                   AOTRUN_OK);
  return path;
}

static void expect_npy(const char *path, int64_t n, const float *values) {
  aotrun_npy a;
  if (aotrun_npy_read(path, &a) != AOTRUN_OK)
    fail_msg("%s", aotrun_host_last_error());
  assert_int_equal(a.ndim, 1);
  assert_int_equal(a.shape[0], n);
  assert_memory_equal(a.data, values, (size_t)n * sizeof *values);
  aotrun_npy_free(&a);
}

/* The backend allocates y: exactly the input's length, values equal. */
static void test_echo_data_dependent_output(void **state) {
  (void)state;
  float x[7];
  const char *in = write_vector("x7", 7, x);
  char out[700], file[800];
  snprintf(out, sizeof out, "%s/out_dd", g_tmp);
  int rc = run("run", g_prog, "--plugin", g_echo, "--method", "dd", "--input",
               in, "--output-dir", out, "--calls", "2", NULL);
  if (rc != 0) fail_msg("rc %d: %s", rc, g_out);
  assert_contains(g_out, "output 0: float32 [7]");
  for (int call = 0; call < 2; call++) {
    snprintf(file, sizeof file, "%s/call%d/out0.npy", out, call);
    expect_npy(file, 7, x);
  }
  assert_int_equal(run("bench", g_prog, "--plugin", g_echo, "--method", "dd",
                       "--input", in, "--iterations", "3", "--warmup", "1",
                       NULL),
                   0);
  assert_contains(g_out, "p50 ");
}

/* a (6 floats) does not fit the 2 the manifest's "m" gives it: the CLI
 * reallocates to the needed shape once and runs again; the next call
 * reuses the larger buffer. */
static void test_echo_too_small_retried(void **state) {
  (void)state;
  float a[6], b[2];
  const char *in_a = write_vector("a6", 6, a);
  const char *in_b = write_vector("b2", 2, b);
  char out[700], file[800];
  snprintf(out, sizeof out, "%s/out_grow", g_tmp);
  int rc = run("run", g_prog, "--plugin", g_echo, "--method", "grow",
               "--input", in_a, "--input", in_b, "--output-dir", out,
               "--calls", "2", NULL);
  if (rc != 0) fail_msg("rc %d: %s", rc, g_out);
  assert_contains(g_out, "aotrun: note: output 0 (a) needs 24 bytes; "
                         "reallocated, running again");
  assert_int_equal(count_of(g_out, "aotrun: note:"), 1);
  assert_contains(g_out, "output 0: float32 [6]");
  snprintf(file, sizeof file, "%s/call1/out0.npy", out);
  expect_npy(file, 6, a);
  snprintf(file, sizeof file, "%s/call1/out1.npy", out);
  expect_npy(file, 2, b);
}

/* cpu_ref on the fixture with y's rows declared by a symbol no input
 * binds: y comes back allocated by the backend, shaped [2, 3]. */
static void test_cpu_ref_managed_output(void **state) {
  (void)state;
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model, "cpu"), 0);
  char *at = strstr(p.manifest, "\"shape\": [\"s0\", 3]");
  assert_non_null(at);
  at[11] = 'u'; /* ["u0", 3] */
  char path[700];
  snprintf(path, sizeof path, "%s/manifest.json", p.dir);
  write_text(path, p.manifest);
  float x[2][4] = {{1, 2, 3, 4}, {-1, 0.5f, 0.25f, 8}}, want[6];
  program_fixture_expected(&x[0][0], 2, want);
  int64_t shape[2] = {2, 4};
  char in[700], out[700], file[800];
  snprintf(in, sizeof in, "%s/fx.npy", g_tmp);
  assert_int_equal(aotrun_npy_write(in, (DLDataType){kDLFloat, 32, 1}, 2,
                                    shape, x),
                   AOTRUN_OK);
  snprintf(out, sizeof out, "%s/out_fixture", g_tmp);
  int rc = run("run", p.dir, "--plugin", g_cpu_ref, "--input", in,
               "--output-dir", out, NULL);
  if (rc != 0) fail_msg("rc %d: %s", rc, g_out);
  assert_contains(g_out, "output 0: float32 [2, 3]");
  snprintf(file, sizeof file, "%s/out0.npy", out);
  aotrun_npy y;
  assert_int_equal(aotrun_npy_read(file, &y), AOTRUN_OK);
  assert_int_equal(y.ndim, 2);
  assert_int_equal(y.shape[0], 2);
  assert_memory_equal(y.data, want, sizeof want);
  aotrun_npy_free(&y);
  program_fixture_remove(&p);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s AOTRUN ECHO.so CPU_REF.so FIXTURE_MODEL.so\n",
            argv[0]);
    return 2;
  }
  static char abs[4][4096];
  for (int i = 0; i < 4; i++) /* runfiles paths are relative */
    if (realpath(argv[i + 1], abs[i]) == NULL)
      snprintf(abs[i], 4096, "%s", argv[i + 1]);
  g_aotrun = abs[0];
  g_echo = abs[1];
  g_cpu_ref = abs[2];
  g_model = abs[3];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_echo_data_dependent_output),
      cmocka_unit_test(test_echo_too_small_retried),
      cmocka_unit_test(test_cpu_ref_managed_output),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
