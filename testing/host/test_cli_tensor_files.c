/*
 * test_cli_tensor_files.c: `aotrun run` / `bench` with .safetensors inputs
 * and outputs, run as a separate process: every dtype through the "echo"
 * test backend (bit-exact, both ways), index keys and mixed .npy inputs,
 * precise input errors, the symlink rule for outputs, and the C fixture
 * model on the CPU reference backend.
 * usage: test_cli_tensor_files AOTRUN ECHO.so CPU_REF.so FIXTURE_MODEL.so
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
#include "plugin_api/st_file.h"
#include "testing/backend/program_fixture.h"
#include "testing/host/cli_child.h"

static const char *g_aotrun, *g_echo, *g_cpu_ref, *g_model;
static char g_tmp[512], g_prog[600], g_out[1 << 14];

/* Every ABI dtype: safetensors name, manifest name, DLPack dtype. */
static const struct {
  const char *st, *torch;
  DLDataType dt;
} kTypes[] = {
    {"F64", "float64", {kDLFloat, 64, 1}},
    {"F32", "float32", {kDLFloat, 32, 1}},
    {"F16", "float16", {kDLFloat, 16, 1}},
    {"BF16", "bfloat16", {kDLBfloat, 16, 1}},
    {"F8_E5M2", "float8_e5m2", {12, 8, 1}},
    {"F8_E4M3", "float8_e4m3fn", {10, 8, 1}},
    {"I64", "int64", {kDLInt, 64, 1}},
    {"I32", "int32", {kDLInt, 32, 1}},
    {"I16", "int16", {kDLInt, 16, 1}},
    {"I8", "int8", {kDLInt, 8, 1}},
    {"U64", "uint64", {kDLUInt, 64, 1}},
    {"U32", "uint32", {kDLUInt, 32, 1}},
    {"U16", "uint16", {kDLUInt, 16, 1}},
    {"U8", "uint8", {kDLUInt, 8, 1}},
    {"BOOL", "bool", {AOTRUN_DL_BOOL, 8, 1}},
    {"C64", "complex64", {kDLComplex, 64, 1}},
};
#define NUM_TYPES (sizeof kTypes / sizeof kTypes[0])

/* Runs aotrun with the NULL-terminated args; stdout and stderr land in
 * g_out. Returns the exit code. */
static int run(const char *first, ...) {
  va_list ap;
  va_start(ap, first);
  int rc = cli_child_runv(g_aotrun, g_tmp, g_out, sizeof g_out, first, ap);
  va_end(ap);
  return rc;
}

static const char *path_in(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", g_tmp, name);
  return buf;
}

static void write_bytes(const char *path, const char *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

static void write_text(const char *path, const char *text) {
  write_bytes(path, text, strlen(text));
}

/* The echo program: method "forward" takes and returns one [n, 3] tensor
 * of every dtype (named by its safetensors name); method "pair" takes x
 * float32 [4] and m bfloat16 [4] and returns them; "one" takes and returns
 * x alone, "one_bf16" m alone. */
static void write_echo_program(void) {
  char manifest[16384], io[4096] = "", path[700];
  size_t used = 0;
  for (size_t k = 0; k < NUM_TYPES; k++)
    used += (size_t)snprintf(io + used, sizeof io - used,
                             "%s{\"name\": \"%s\", \"dtype\": \"%s\", "
                             "\"shape\": [\"n\", 3]}",
                             k ? ", " : "", kTypes[k].st, kTypes[k].torch);
  const char *pair = "[{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": "
                     "[4]}, {\"name\": \"m\", \"dtype\": \"bfloat16\", "
                     "\"shape\": [4]}]";
  const char *one = "[{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": "
                    "[4]}]";
  const char *one_bf16 = "[{\"name\": \"m\", \"dtype\": \"bfloat16\", "
                         "\"shape\": [4]}]";
  snprintf(manifest, sizeof manifest,
           "{\"format\": \"aotrun-program\", \"format_version\": 1, "
           "\"methods\": {"
           "\"forward\": {\"library\": \"forward.so\", \"inputs\": [%s], "
           "\"outputs\": [%s], \"constants\": []}, "
           "\"pair\": {\"library\": \"forward.so\", \"inputs\": %s, "
           "\"outputs\": %s, \"constants\": []}, "
           "\"one\": {\"library\": \"forward.so\", \"inputs\": %s, "
           "\"outputs\": %s, \"constants\": []}, "
           "\"one_bf16\": {\"library\": \"forward.so\", \"inputs\": %s, "
           "\"outputs\": %s, \"constants\": []}}}",
           io, io, pair, pair, one, one, one_bf16, one_bf16);
  snprintf(g_prog, sizeof g_prog, "%s/echo_program", g_tmp);
  mkdir(g_prog, 0700);
  snprintf(path, sizeof path, "%s/manifest.json", g_prog);
  write_text(path, manifest);
}

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_tmp, sizeof g_tmp, "%s/cli_tf_XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(g_tmp) == NULL) return -1;
  write_echo_program();
  return 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed, int is_bool) {
  uint32_t x = 2463534242u + seed * 7919u;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = is_bool ? (uint8_t)(x & 1) : (uint8_t)x;
  }
}

/* Reads `path` and checks every dtype's tensor against data[k]. */
static void expect_every_dtype(const char *path, uint8_t (*data)[48]) {
  aotrun_st_file f;
  if (aotrun_st_file_read(path, &f) != AOTRUN_OK)
    fail_msg("%s", aotrun_host_last_error());
  assert_int_equal(f.count, NUM_TYPES);
  for (size_t k = 0; k < NUM_TYPES; k++) {
    const aotrun_st_tensor *t = aotrun_st_file_find(&f, kTypes[k].st);
    assert_non_null(t);
    assert_int_equal(t->dtype.code, kTypes[k].dt.code);
    assert_int_equal(t->dtype.bits, kTypes[k].dt.bits);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], 3);
    assert_int_equal(t->nbytes, 6 * kTypes[k].dt.bits / 8);
    assert_memory_equal(t->data, data[k], t->nbytes);
  }
  aotrun_st_file_free(&f);
}

/* Every dtype in, every dtype out, bit-exact; then the outputs file fed
 * back as the input (its keys are the manifest names). */
static void test_every_dtype_round_trip(void **state) {
  (void)state;
  static uint8_t data[NUM_TYPES][48];
  DLTensor t[NUM_TYPES];
  const char *names[NUM_TYPES];
  int64_t shape[2] = {2, 3};
  for (size_t k = 0; k < NUM_TYPES; k++) {
    fill(data[k], sizeof data[k], (unsigned)k,
         kTypes[k].dt.code == AOTRUN_DL_BOOL);
    t[k] = (DLTensor){.data = data[k], .device = {kDLCPU, 0}, .ndim = 2,
                      .dtype = kTypes[k].dt, .shape = shape};
    names[k] = kTypes[k].st;
  }
  char in[700], out[700], out2[700], file[800];
  path_in(in, sizeof in, "every.safetensors");
  assert_int_equal(aotrun_st_file_write(in, NUM_TYPES, names, t), AOTRUN_OK);
  path_in(out, sizeof out, "out_every");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--input", in,
                       "--output-dir", out, "--output-format", "safetensors",
                       NULL),
                   0);
  assert_contains(g_out, "output 3: bfloat16 [2, 3]");
  snprintf(file, sizeof file, "%s/outputs.safetensors", out);
  expect_every_dtype(file, data);
  path_in(out2, sizeof out2, "out_every2");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--input", file,
                       "--output-dir", out2, "--output-format", "safetensors",
                       NULL),
                   0);
  snprintf(file, sizeof file, "%s/outputs.safetensors", out2);
  expect_every_dtype(file, data);
  assert_int_equal(run("bench", g_prog, "--plugin", g_echo, "--input", in,
                       "--iterations", "2", "--warmup", "1", NULL),
                   0);
  assert_contains(g_out, "p50 ");
}

/* pair's inputs: x float32 [4] as .npy, m bfloat16 [4] by index "1". */
static void write_pair_inputs(char *npy, char *st, size_t size, float *x,
                              uint16_t *m) {
  int64_t shape[1] = {4};
  for (int i = 0; i < 4; i++) {
    x[i] = (float)i + 0.5f;
    m[i] = (uint16_t)(0x3f80 + i); /* bfloat16 near 1 */
  }
  path_in(npy, size, "x.npy");
  assert_int_equal(aotrun_npy_write(npy, (DLDataType){kDLFloat, 32, 1}, 1,
                                    shape, x),
                   AOTRUN_OK);
  DLTensor t = {.data = m, .device = {kDLCPU, 0}, .ndim = 1,
                .dtype = {kDLBfloat, 16, 1}, .shape = shape};
  const char *name = "1";
  path_in(st, size, "m_by_index.safetensors");
  assert_int_equal(aotrun_st_file_write(st, 1, &name, &t), AOTRUN_OK);
}

static void test_index_keys_and_mixed_npy(void **state) {
  (void)state;
  char npy[700], st[700], out[700], file[800];
  float x[4];
  uint16_t m[4];
  write_pair_inputs(npy, st, sizeof npy, x, m);
  path_in(out, sizeof out, "out_pair");
  /* The .npy fills the input no tensor names, wherever it stands. */
  for (int order = 0; order < 2; order++) {
    assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                         "--input", order ? npy : st, "--input",
                         order ? st : npy, "--output-dir", out,
                         "--output-format", "safetensors", NULL),
                     0);
    snprintf(file, sizeof file, "%s/outputs.safetensors", out);
    aotrun_st_file f;
    assert_int_equal(aotrun_st_file_read(file, &f), AOTRUN_OK);
    assert_int_equal(f.count, 2);
    assert_memory_equal(aotrun_st_file_find(&f, "x")->data, x, sizeof x);
    assert_memory_equal(aotrun_st_file_find(&f, "m")->data, m, sizeof m);
    aotrun_st_file_free(&f);
  }
  /* bfloat16 has no .npy form: refused before running, pointing the way. */
  path_in(out, sizeof out, "out_pair_npy");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                       "--input", st, "--input", npy, "--output-dir", out,
                       NULL),
                   1);
  assert_contains(g_out, "output 1 (m) is bfloat16, which .npy cannot hold: "
                         "use --output-format safetensors");
  struct stat sb;
  assert_int_not_equal(stat(out, &sb), 0);
}

/* Writes pair-method tensors: names[i] with dtypes[i] and lengths[i]. */
static void write_tensors(const char *path, size_t n, const char **names,
                          const char **dtypes, const int64_t *lengths) {
  static uint8_t zeros[64];
  DLTensor t[4];
  int64_t shapes[4][1];
  for (size_t i = 0; i < n; i++) {
    shapes[i][0] = lengths[i];
    t[i] = (DLTensor){.data = zeros, .device = {kDLCPU, 0}, .ndim = 1,
                      .shape = shapes[i]};
    assert_int_equal(aotrun_st_dtype(dtypes[i], &t[i].dtype), AOTRUN_OK);
  }
  assert_int_equal(aotrun_st_file_write(path, n, names, t), AOTRUN_OK);
}

static void expect_pair_error(const char *input, const char *input2,
                              const char *message) {
  int rc = input2 ? run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                        "--input", input, "--input", input2, NULL)
                  : run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                        "--input", input, NULL);
  assert_int_equal(rc, 3);
  assert_contains(g_out, message);
}

static void test_input_errors(void **state) {
  (void)state;
  char p[700], npy[700], st[700], msg[2048];
  float x[4];
  uint16_t m[4];
  write_pair_inputs(npy, st, sizeof npy, x, m);
  const int64_t four[3] = {4, 4, 4};
  write_tensors(path_in(p, sizeof p, "only_x.safetensors"), 1,
                (const char *[]){"x"}, (const char *[]){"F32"}, four);
  expect_pair_error(p, NULL, "input 1 (m) of method 'pair' is missing: no "
                             "safetensors tensor 'm' or '1', and no .npy "
                             "file left for it");
  write_tensors(path_in(p, sizeof p, "extra.safetensors"), 3,
                (const char *[]){"x", "m", "zz"},
                (const char *[]){"F32", "BF16", "F32"}, four);
  snprintf(msg, sizeof msg, "input %s: tensor 'zz' is not an input of "
           "method 'pair' (its inputs: x, m; or by index 0..1)", p);
  expect_pair_error(p, NULL, msg);
  write_tensors(path_in(p, sizeof p, "twice.safetensors"), 3,
                (const char *[]){"x", "m", "0"},
                (const char *[]){"F32", "BF16", "F32"}, four);
  snprintf(msg, sizeof msg, "input 0 (x) of method 'pair' is given twice: "
           "by %s tensor '0' and by %s tensor 'x'", p, p);
  expect_pair_error(p, NULL, msg);
  write_tensors(path_in(p, sizeof p, "f64.safetensors"), 2,
                (const char *[]){"x", "m"}, (const char *[]){"F64", "BF16"},
                four);
  snprintf(msg, sizeof msg, "input 0 (x) is float64, the method takes "
           "float32 (from %s tensor 'x')", p);
  expect_pair_error(p, NULL, msg);
  const int64_t five[2] = {4, 5};
  write_tensors(path_in(p, sizeof p, "long.safetensors"), 2,
                (const char *[]){"x", "m"}, (const char *[]){"F32", "BF16"},
                five);
  snprintf(msg, sizeof msg, "input 1 (m) has size 5 in dim 0, the method "
           "declares 4 (from %s tensor 'm')", p);
  expect_pair_error(p, NULL, msg);
  write_tensors(path_in(p, sizeof p, "both.safetensors"), 2,
                (const char *[]){"x", "m"}, (const char *[]){"F32", "BF16"},
                four);
  snprintf(msg, sizeof msg, "input %s: every input of method 'pair' is "
           "already given (2 input(s))", npy);
  expect_pair_error(p, npy, msg);
  /* Truncated: the header's length prefix says more than the file has. */
  int fd = open(p, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, 30), 0);
  close(fd);
  expect_pair_error(p, NULL, "is past the end of the file");
  /* A header length that lies (2^60) is refused, not allocated. */
  write_bytes(path_in(p, sizeof p, "lies.safetensors"),
              "\x00\x00\x00\x00\x00\x00\x00\x10{}", 10);
  snprintf(msg, sizeof msg, "input: malformed safetensors file '%s': header "
           "length", p);
  expect_pair_error(p, NULL, msg);
  expect_pair_error(path_in(p, sizeof p, "none.safetensors"), NULL,
                    "cannot open .safetensors file");
}


/* --output FILE: the format is the extension's. FILE.safetensors holds
 * every output by name (bfloat16 too); FILE.npy the one output of a
 * single-output method; everything else is refused before running, with
 * nothing written. */
static void test_output_file_by_extension(void **state) {
  (void)state;
  char npy[700], st[700], out[700];
  float x[4];
  uint16_t m[4];
  write_pair_inputs(npy, st, sizeof npy, x, m);
  path_in(out, sizeof out, "pair_out.SafeTensors");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                       "--input", st, "--input", npy, "--output", out, NULL),
                   0);
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_read(out, &f), AOTRUN_OK);
  assert_int_equal(f.count, 2);
  assert_memory_equal(aotrun_st_file_find(&f, "x")->data, x, sizeof x);
  assert_memory_equal(aotrun_st_file_find(&f, "m")->data, m, sizeof m);
  aotrun_st_file_free(&f);

  path_in(out, sizeof out, "one_out.npy");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "one",
                       "--input", npy, "--output", out, NULL),
                   0);
  aotrun_npy a;
  assert_int_equal(aotrun_npy_read(out, &a), AOTRUN_OK);
  assert_int_equal(a.ndim, 1);
  assert_int_equal(a.shape[0], 4);
  assert_memory_equal(a.data, x, sizeof x);
  aotrun_npy_free(&a);

  struct stat sb;
  path_in(out, sizeof out, "pair_out.npy");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                       "--input", st, "--input", npy, "--output", out, NULL),
                   1);
  assert_contains(g_out, "a .npy file holds one output, method pair has 2: "
                         "name a .safetensors file or use --output-dir");
  assert_int_not_equal(stat(out, &sb), 0);

  int64_t shape[1] = {4};
  DLTensor mt = {.data = m, .device = {kDLCPU, 0}, .ndim = 1,
                 .dtype = {kDLBfloat, 16, 1}, .shape = shape};
  const char *key = "m";
  path_in(st, sizeof st, "m_by_name.safetensors");
  assert_int_equal(aotrun_st_file_write(st, 1, &key, &mt), AOTRUN_OK);
  path_in(out, sizeof out, "one_bf16.npy");
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method",
                       "one_bf16", "--input", st, "--output", out, NULL),
                   1);
  assert_contains(g_out, "output 0 (m) is bfloat16, which .npy cannot hold: "
                         "name a .safetensors file in --output");
  assert_int_not_equal(stat(out, &sb), 0);
}

/* outputs.safetensors is never written through a symbolic link. */
static void test_output_symlink_refused(void **state) {
  (void)state;
  char npy[700], st[700], out[700], link[800], target[700];
  float x[4];
  uint16_t m[4];
  write_pair_inputs(npy, st, sizeof npy, x, m);
  path_in(out, sizeof out, "out_link");
  mkdir(out, 0700);
  path_in(target, sizeof target, "precious.txt");
  write_text(target, "precious");
  snprintf(link, sizeof link, "%s/outputs.safetensors", out);
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(run("run", g_prog, "--plugin", g_echo, "--method", "pair",
                       "--input", st, "--input", npy, "--output-dir", out,
                       "--output-format", "safetensors", NULL),
                   4);
  assert_contains(g_out, "outputs.safetensors: it is a symbolic link, "
                         "refused");
  char buf[32] = {0};
  FILE *f = fopen(target, "rb");
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 8);
  fclose(f);
  assert_string_equal(buf, "precious");
}

/* The C fixture model on cpu_ref: x from a .safetensors file, outputs y
 * and calls in outputs.safetensors (per call with --calls 2). */
static void test_cpu_ref_fixture(void **state) {
  (void)state;
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model, "cpu"), 0);
  float x[2][4] = {{1, 2, 3, 4}, {-1, 0.5f, 0.25f, 8}}, want[6];
  program_fixture_expected(&x[0][0], 2, want);
  int64_t shape[2] = {2, 4};
  DLTensor t = {.data = x, .device = {kDLCPU, 0}, .ndim = 2,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  const char *name = "x";
  char in[700], out[700], file[800];
  assert_int_equal(aotrun_st_file_write(path_in(in, sizeof in,
                                                "fixture_x.safetensors"),
                                        1, &name, &t),
                   AOTRUN_OK);
  path_in(out, sizeof out, "out_fixture");
  int rc = run("run", p.dir, "--plugin", g_cpu_ref, "--input", in,
               "--output-dir", out, "--output-format", "safetensors",
               "--calls", "2", NULL);
  if (rc != 0) fail_msg("rc %d: %s", rc, g_out);
  for (int call = 0; call < 2; call++) {
    snprintf(file, sizeof file, "%s/call%d/outputs.safetensors", out, call);
    aotrun_st_file f;
    assert_int_equal(aotrun_st_file_read(file, &f), AOTRUN_OK);
    assert_int_equal(f.count, 2);
    const aotrun_st_tensor *y = aotrun_st_file_find(&f, "y");
    const aotrun_st_tensor *calls = aotrun_st_file_find(&f, "calls");
    assert_non_null(y);
    assert_non_null(calls);
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->shape[0], 2);
    assert_int_equal(y->shape[1], 3);
    assert_memory_equal(y->data, want, sizeof want);
    float c;
    memcpy(&c, calls->data, sizeof c);
    assert_float_equal(c, (float)(call + 1), 0);
    aotrun_st_file_free(&f);
  }
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
    if (realpath(argv[i + 1], abs[i]) == NULL) snprintf(abs[i], 4096, "%s",
                                                        argv[i + 1]);
  g_aotrun = abs[0];
  g_echo = abs[1];
  g_cpu_ref = abs[2];
  g_model = abs[3];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_dtype_round_trip),
      cmocka_unit_test(test_index_keys_and_mixed_npy),
      cmocka_unit_test(test_input_errors),
      cmocka_unit_test(test_output_file_by_extension),
      cmocka_unit_test(test_output_symlink_refused),
      cmocka_unit_test(test_cpu_ref_fixture),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
