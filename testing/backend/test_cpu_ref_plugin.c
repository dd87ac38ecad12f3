/*
 * test_cpu_ref_plugin.c: the fixture program end to end through the real
 * cpu_ref plugin, loaded by the host library (plugin_api/aotrun_host.h) and
 * fed by its program-directory named-data service: outputs checked against
 * values computed here, the model's call counter advancing, input
 * validation messages, output fit checks, dynamic output sizes, options.
 *
 * Arguments: the plugin (libaotrun_cpu_ref.so) and fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

static const char *g_plugin_path;
static const char *g_model_path;

typedef struct ctx {
  program_fixture program;
  aotrun_backend *backend;
  const aotrun_backend_api *api;
  aotrun_program_dir *dir;
  aotrun_method *method;
} ctx;

static const DLDataType kF32 = {kDLFloat, 32, 1};

static int count_temp_models(void) {
  const char *tmp = getenv("TMPDIR");
  DIR *d = opendir(tmp ? tmp : "/tmp");
  if (d == NULL) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += strncmp(e->d_name, "aotrun-model-", 13) == 0;
  closedir(d);
  return n;
}

static int setup(void **state) {
  ctx *c = calloc(1, sizeof *c);
  if (c == NULL) return -1;
  if (program_fixture_create(&c->program, g_model_path, "cpu") != 0) {
    fprintf(stderr, "cannot write the fixture program\n");
    return -1;
  }
  if (aotrun_backend_open(g_plugin_path, AOTRUN_ABI_VERSION, &c->backend) !=
      AOTRUN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", g_plugin_path,
            aotrun_host_last_error());
    return -1;
  }
  c->api = aotrun_backend_table(c->backend);
  if (aotrun_program_dir_open(c->program.dir, &c->dir) != AOTRUN_OK) return -1;
  aotrun_program_dir_set_log_level(c->dir, AOTRUN_LOG_ERROR + 1);
  *state = c;
  return 0;
}

static int teardown(void **state) {
  ctx *c = *state;
  if (c == NULL) return 0;
  if (c->method) c->api->destroy(c->method);
  aotrun_program_dir_close(c->dir);
  aotrun_backend_close(c->backend);
  program_fixture_remove(&c->program);
  free(c);
  return 0;
}

static aotrun_status init_method(ctx *c, const char *manifest, size_t size,
                                 const char *method) {
  aotrun_key_value spec = {"method", method};
  return c->api->init(aotrun_program_dir_host_api(c->dir), manifest, size,
                      &spec, 1, &c->method);
}

static void init_forward(ctx *c) {
  assert_int_equal(init_method(c, c->program.manifest,
                               c->program.manifest_size, "forward"),
                   AOTRUN_OK);
  assert_non_null(c->method);
  /* The library and the weights were released once loaded. */
  assert_int_equal(aotrun_program_dir_num_mapped(c->dir), 0);
}

typedef struct call_io {
  float x[5 * 4];
  float y[5 * 3];
  float calls;
  int64_t x_shape[2];
  int64_t y_shape[2];
  int64_t calls_shape[1];
  DLTensor in[1];
  DLTensor out[2];
} call_io;

static void make_call(call_io *t, int64_t n, int64_t y_rows) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < n * 4; i++) t->x[i] = 0.25f * (float)i - 1.0f;
  t->x_shape[0] = n;
  t->x_shape[1] = 4;
  t->y_shape[0] = y_rows;
  t->y_shape[1] = 3;
  t->calls_shape[0] = 1;
  t->in[0] = (DLTensor){t->x, {kDLCPU, 0}, 2, kF32, t->x_shape, NULL, 0};
  t->out[0] = (DLTensor){t->y, {kDLCPU, 0}, 2, kF32, t->y_shape, NULL, 0};
  t->out[1] = (DLTensor){&t->calls, {kDLCPU, 0}, 1, kF32, t->calls_shape,
                         NULL, 0};
}

static aotrun_status execute(ctx *c, call_io *t) {
  return c->api->execute(c->method, t->in, 1, t->out, 2);
}

static void test_identity(void **state) {
  ctx *c = *state;
  assert_string_equal(c->api->get_name(), "cpu_ref");
  assert_string_equal(aotrun_backend_name(c->backend), "cpu_ref");
  char reason[64] = "x";
  assert_int_equal(c->api->is_available(reason, sizeof reason), 1);
  assert_string_equal(reason, "");
}

static void test_fixture_end_to_end(void **state) {
  ctx *c = *state;
  int temps_before = count_temp_models();
  init_forward(c);
  call_io t;
  for (int call = 1; call <= 3; call++) {
    make_call(&t, 2, 2);
    assert_int_equal(execute(c, &t), AOTRUN_OK);
    float want[2 * 3];
    program_fixture_expected(t.x, 2, want);
    for (int i = 0; i < 6; i++) assert_float_equal(t.y[i], want[i], 0);
    assert_float_equal(t.calls, (float)call, 0); /* the counter advances */
  }
  assert_string_equal(c->api->last_error(c->method), "");
  c->api->destroy(c->method);
  c->method = NULL;
  assert_int_equal(count_temp_models(), temps_before);
}

static void test_dynamic_output_size_written(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 5); /* room for 5 rows, the model returns 2 */
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_int_equal(t.y_shape[0], 2);
  assert_int_equal(t.y_shape[1], 3);
  float want[6];
  program_fixture_expected(t.x, 2, want);
  for (int i = 0; i < 6; i++) assert_float_equal(t.y[i], want[i], 0);
  /* Too little room is refused, naming the output and both sizes. */
  make_call(&t, 3, 2);
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "output 0 (y) has size 3 in dim 0, the caller's tensor "
                      "has room for 2");
}

static void test_output_checks(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2);
  t.out[1].dtype = (DLDataType){kDLFloat, 64, 1};
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "output 1 (calls) has dtype float32, the caller's "
                      "tensor has float64");
  make_call(&t, 2, 2);
  t.calls_shape[0] = 2;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "output 1 (calls) has size 1 in dim 0, the caller's "
                      "tensor has 2");
  make_call(&t, 2, 2);
  t.out[0].device = (DLDevice){kDLCUDA, 0};
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "output 0 (y) is on cuda:0; method forward runs on the "
                      "cpu and takes host memory");
}

static void test_input_validation_messages(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2);
  t.x_shape[1] = 5;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) has size 5 in dim 1, expected 4");
  make_call(&t, 2, 2);
  t.in[0].dtype = (DLDataType){kDLFloat, 64, 1};
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) has dtype float64, expected float32");
  make_call(&t, 2, 2);
  t.in[0].ndim = 3;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) has 3 dims, expected 2");
  make_call(&t, 2, 2);
  assert_int_equal(c->api->execute(c->method, t.in, 0, t.out, 2),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "method forward takes 1 inputs, got 0");
  make_call(&t, 2, 2);
  int64_t strides[2] = {1, 2};
  t.in[0].strides = strides;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) is not contiguous (row-major strides are "
                      "required)");
  make_call(&t, 2, 2);
  t.in[0].data = NULL;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) has no data");
  /* Found by testing/fuzz/fuzz_inputs.c: a symbolic dim takes any size, and
   * a huge one made the byte size wrap (2^62 rows x 4 float32 = 2^64 bytes,
   * 0 in size_t: NULL data passed and the model got a 2^62-row tensor) or
   * overflowed the contiguity check (signed overflow, UBSan). */
  make_call(&t, 2, 2);
  t.x_shape[0] = (int64_t)1 << 62;
  t.in[0].data = NULL;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) is too large: its byte size overflows a "
                      "64-bit count");
  make_call(&t, 2, 2);
  int64_t row_strides[2] = {4, 1};
  t.x_shape[0] = INT64_MAX / 2;
  t.in[0].strides = row_strides;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) is too large: its byte size overflows a "
                      "64-bit count");
  /* None of the refused calls reached the model: the counter is at 1. */
  make_call(&t, 2, 2);
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_float_equal(t.calls, 1.0f, 0);
  /* An output with room for INT64_MAX / 2 rows and strides {3, 1}: the
   * contiguity check multiplied past INT64_MAX (UBSan, found by the fuzz
   * target); it is compact, so the call succeeds. */
  make_call(&t, 2, 2);
  int64_t y_strides[2] = {3, 1};
  t.y_shape[0] = INT64_MAX / 2;
  t.out[0].strides = y_strides;
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_int_equal(t.y_shape[0], 2); /* the real size is written back */
}

/* ABI 1.1 strides rule (aotrun_plugin.h, shared with the host library):
 * NULL or row-major, size-1 dims any stride; anything else NOT_SUPPORTED. */
static void test_strides_rule(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2); /* NULL strides: row-major */
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  make_call(&t, 2, 2);
  int64_t row[2] = {4, 1};
  t.in[0].strides = row;
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  make_call(&t, 1, 1);
  int64_t one_row[2] = {99, 1}; /* a size-1 dim may have any stride */
  t.in[0].strides = one_row;
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  make_call(&t, 2, 2);
  int64_t padded[2] = {8, 1}; /* rows of a wider buffer: not compact */
  t.in[0].strides = padded;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) is not contiguous (row-major strides are "
                      "required)");
  make_call(&t, 2, 2);
  int64_t out_t[2] = {1, 2}; /* a transposed output */
  t.out[0].strides = out_t;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_NOT_SUPPORTED);
  /* The same rule as the host's check. */
  assert_false(aotrun_strides_are_row_major(2, t.y_shape, out_t));
  assert_true(aotrun_strides_are_row_major(2, t.y_shape, NULL));
}

static void test_model_failure_reported(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2);
  t.x[0] = NAN; /* the fixture's hook: a failing shim call inside Run */
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INTERNAL);
  const char *msg = c->api->last_error(c->method);
  assert_non_null(strstr(msg, "method forward: "));
  assert_non_null(strstr(msg, "AOTInductorModelContainerRunSingleThreaded"));
  make_call(&t, 2, 2);
  assert_int_equal(execute(c, &t), AOTRUN_OK); /* still usable */
}

/* issue 13: a model that returns one handle in two slots or views of one
 * buffer must not crash the host (the handle was deleted twice). */
static void test_aliased_outputs(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2);
  t.x[0] = 54321.0f; /* fixture hook: output 1 views y[0][1] */
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  float want[6];
  program_fixture_expected(t.x, 2, want);
  for (int i = 0; i < 6; i++) assert_float_equal(t.y[i], want[i], 0);
  assert_float_equal(t.calls, want[1], 0);
  make_call(&t, 2, 2);
  t.x[0] = 12345.0f; /* fixture hook: output 0's handle in both slots */
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "output 1 (calls) has 2 dims, the caller's tensor has 1");
  make_call(&t, 2, 2);
  assert_int_equal(execute(c, &t), AOTRUN_OK); /* still usable */
}

/* A float input whose first element is not 4-byte aligned is refused
 * before a kernel (here the C fixture) loads from it. */
static void test_misaligned_input_refused(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 2, 2);
  t.in[0].byte_offset = 1;
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(c->api->last_error(c->method),
                         "input 0 (x) starts at an address that is not a "
                         "multiple of its 4-byte element size"));
  make_call(&t, 2, 2);
  assert_int_equal(execute(c, &t), AOTRUN_OK);
}

static void test_io_info(void **state) {
  ctx *c = *state;
  init_forward(c);
  size_t n = 0;
  assert_int_equal(c->api->get_num_io(c->method, AOTRUN_IO_INPUT, &n),
                   AOTRUN_OK);
  assert_int_equal(n, 1);
  assert_int_equal(c->api->get_num_io(c->method, AOTRUN_IO_OUTPUT, &n),
                   AOTRUN_OK);
  assert_int_equal(n, 2);
  aotrun_io_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(c->api->get_io_info(c->method, AOTRUN_IO_INPUT, 0, &info),
                   AOTRUN_OK);
  assert_string_equal(info.name, "x");
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], AOTRUN_DYNAMIC_DIM);
  assert_int_equal(info.shape[1], 4);
  assert_int_equal(info.dtype.code, kDLFloat);
  assert_int_equal(info.dtype.bits, 32);
  assert_int_equal(c->api->get_io_info(c->method, AOTRUN_IO_OUTPUT, 2, &info),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "method forward has 2 outputs, index 2 is out of range");
  assert_int_equal(c->api->get_num_io(c->method, 7, &n),
                   AOTRUN_ERR_INVALID_ARGUMENT);
}

/* The ABI's failure rules: every error return sets a message, NULL-handle
 * calls included (last_error(NULL)); the const queries write nothing into
 * the handle: their failure is this thread's, until its next non-const call
 * on the handle. */
static void expect_null_handle(const ctx *c, aotrun_status s,
                               const char *call) {
  assert_int_equal(s, AOTRUN_ERR_INVALID_ARGUMENT);
  char want[96];
  snprintf(want, sizeof want, "%s: the method handle is NULL", call);
  assert_string_equal(c->api->last_error(NULL), want);
}

typedef struct query_thread {
  const ctx *c;
  aotrun_status status;
  char message[256];
} query_thread;

static void *failing_query(void *p) {
  query_thread *q = p;
  aotrun_io_info info = {.struct_size = sizeof info};
  q->status = q->c->api->get_io_info(q->c->method, AOTRUN_IO_OUTPUT, 9, &info);
  snprintf(q->message, sizeof q->message, "%s",
           q->c->api->last_error(q->c->method));
  return NULL;
}

static void test_null_handle_and_const_queries(void **state) {
  ctx *c = *state;
  call_io t;
  make_call(&t, 2, 2);
  expect_null_handle(c, c->api->execute(NULL, t.in, 1, t.out, 2), "execute");
  size_t n = 7;
  expect_null_handle(c, c->api->get_num_io(NULL, AOTRUN_IO_INPUT, &n),
                     "get_num_io");
  aotrun_io_info info = {.struct_size = sizeof info};
  expect_null_handle(c, c->api->get_io_info(NULL, AOTRUN_IO_INPUT, 0, &info),
                     "get_io_info");
  aotrun_execute_args args = {.struct_size = sizeof args};
  expect_null_handle(c, c->api->execute_ex(NULL, &args), "execute_ex");
  expect_null_handle(c, c->api->synchronize(NULL), "synchronize");

  init_forward(c);
  query_thread q = {.c = c};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, failing_query, &q), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(q.status, AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(q.message,
                      "method forward has 2 outputs, index 9 is out of range");
  /* Not written into the handle: this thread sees no error. */
  assert_string_equal(c->api->last_error(c->method), "");
  assert_int_equal(c->api->get_io_info(c->method, AOTRUN_IO_INPUT, 3, &info),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "method forward has 1 inputs, index 3 is out of range");
  /* The next non-const call on the handle is its last call. */
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_string_equal(c->api->last_error(c->method), "");
}

static void test_init_failures_leave_nothing(void **state) {
  ctx *c = *state;
  int temps_before = count_temp_models();
  assert_int_equal(init_method(c, c->program.manifest,
                               c->program.manifest_size, "decode"),
                   AOTRUN_ERR_NOT_FOUND);
  assert_null(c->method);
  assert_non_null(strstr(c->api->last_error(NULL), "decode"));
  const char bad[] = "{\"format\": \"aotrun-program\"";
  assert_int_equal(init_method(c, bad, sizeof bad - 1, "forward"),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(c->api->last_error(NULL), "malformed manifest"));
  /* A cuda constant cannot live on the cpu backend. */
  program_fixture cuda;
  assert_int_equal(program_fixture_create(&cuda, g_model_path, "cuda"), 0);
  assert_int_equal(init_method(c, cuda.manifest, cuda.manifest_size,
                               "forward"),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(c->api->last_error(NULL),
                      "method forward: constant 'weight' is on cuda; a cpu "
                      "backend runs only programs whose constants are on "
                      "cpu");
  program_fixture_remove(&cuda);
  assert_null(c->method);
  assert_int_equal(aotrun_program_dir_num_mapped(c->dir), 0);
  assert_int_equal(count_temp_models(), temps_before);
}

/* issue 13, found by the plugin_abi fuzz target: an empty input ([0, 4])
 * may have NULL data; the fixture model read x[0] for its failure hook even
 * then (a NULL read inside the model). */
static void test_empty_input_null_data(void **state) {
  ctx *c = *state;
  init_forward(c);
  call_io t;
  make_call(&t, 0, 0);
  t.in[0].data = NULL;
  t.out[0].data = NULL;
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_int_equal(t.y_shape[0], 0);
  assert_float_equal(t.calls, 1.0f, 0);
}

/* issue 13 (plugin_abi fuzz target): a host api of another major version
 * or too small for ABI 1.0, and a named-data service that answers OK with
 * NULL data, are refused with a message instead of being trusted. */
static aotrun_status null_data_get(void *ctx, const char *key,
                                   const void **data, size_t *size,
                                   void **token) {
  (void)ctx;
  (void)key;
  *data = NULL;
  *size = 100;
  *token = NULL;
  return AOTRUN_OK;
}

static void null_data_release(void *ctx, void *token) {
  (void)ctx;
  (void)token;
}

static void test_hostile_host_api(void **state) {
  ctx *c = *state;
  aotrun_key_value spec = {"method", "forward"};
  aotrun_host_api host = *aotrun_program_dir_host_api(c->dir);
  host.abi_version = AOTRUN_MAKE_VERSION(2, 0);
  assert_int_equal(c->api->init(&host, c->program.manifest,
                                c->program.manifest_size, &spec, 1,
                                &c->method),
                   AOTRUN_ERR_VERSION_MISMATCH);
  assert_string_equal(c->api->last_error(NULL),
                      "method runner: the host api has ABI 2.0, this plugin "
                      "has 1.1");
  host = *aotrun_program_dir_host_api(c->dir);
  host.struct_size = 16;
  assert_int_equal(c->api->init(&host, c->program.manifest,
                                c->program.manifest_size, &spec, 1,
                                &c->method),
                   AOTRUN_ERR_VERSION_MISMATCH);
  assert_non_null(strstr(c->api->last_error(NULL),
                         "the host api is 16 bytes, ABI 1.0 needs at least"));
  host = *aotrun_program_dir_host_api(c->dir);
  host.get_named_data = null_data_get;
  host.release_named_data = null_data_release;
  assert_int_equal(c->api->init(&host, c->program.manifest,
                                c->program.manifest_size, &spec, 1,
                                &c->method),
                   AOTRUN_ERR_INTERNAL);
  assert_non_null(strstr(c->api->last_error(NULL),
                         "get_named_data('forward.so') returned OK with NULL "
                         "data of 100 bytes"));
  assert_null(c->method);
}

/* Inits `method` of a copy of the fixture program with `missing` removed;
 * returns the status and leaves the message in c->api->last_error(NULL). */
static aotrun_status init_without(ctx *c, const char *missing) {
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_path, "cpu"), 0);
  char path[600];
  snprintf(path, sizeof path, "%s/%s", p.dir, missing);
  assert_int_equal(unlink(path), 0);
  aotrun_program_dir *dir = NULL;
  assert_int_equal(aotrun_program_dir_open(p.dir, &dir), AOTRUN_OK);
  aotrun_program_dir_set_log_level(dir, AOTRUN_LOG_ERROR + 1);
  aotrun_key_value spec = {"method", "forward"};
  aotrun_method *m = NULL;
  aotrun_status st = c->api->init(aotrun_program_dir_host_api(dir),
                                  p.manifest, p.manifest_size, &spec, 1, &m);
  assert_null(m);
  assert_int_equal(aotrun_program_dir_num_mapped(dir), 0);
  aotrun_program_dir_close(dir);
  program_fixture_remove(&p);
  return st;
}

static void test_missing_files_fail_cleanly(void **state) {
  ctx *c = *state;
  int temps_before = count_temp_models();
  assert_int_equal(init_without(c, "weights.safetensors"),
                   AOTRUN_ERR_NOT_FOUND);
  assert_non_null(strstr(c->api->last_error(NULL), "weights.safetensors"));
  assert_int_equal(init_without(c, "forward.so"), AOTRUN_ERR_NOT_FOUND);
  assert_non_null(strstr(c->api->last_error(NULL), "forward.so"));
  /* Nothing left in the temp directory by either failed load. */
  assert_int_equal(count_temp_models(), temps_before);
}

static void test_options_not_found(void **state) {
  ctx *c = *state;
  init_forward(c);
  aotrun_option opt = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, "forward"};
  assert_int_equal(c->api->set_option(c->method, &opt), AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(c->api->last_error(c->method),
                      "backend cpu_ref has no option "
                      "'enable_cuda_graph_for_method' (its only option is "
                      "the read-only method option load_report)");
  aotrun_option out;
  assert_int_equal(c->api->get_option(NULL, "log_level", &out),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(c->api->last_error(NULL),
                      "backend cpu_ref has no option 'log_level' (its only "
                      "option is the read-only method option load_report)");
}

static double number(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v)) fail_msg("load report: %s is not a number", key);
  return v->valuedouble;
}

static const char *text(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(v)) fail_msg("load report: %s is not a string", key);
  return v->valuestring;
}

/* The load report through the ABI: the read-only method option
 * load_report, one JSON object (docs/loading.md). */
static void test_load_report(void **state) {
  ctx *c = *state;
  init_forward(c);
  aotrun_option out;
  assert_int_equal(c->api->get_option(c->method, "load_report", &out),
                   AOTRUN_OK);
  assert_string_equal(out.key, "load_report");
  assert_int_equal(out.type, AOTRUN_OPTION_STRING);
  cJSON *r = cJSON_Parse(out.string_value);
  assert_non_null(r);
  assert_string_equal(text(r, "method"), "forward");
  assert_string_equal(text(r, "library"), "forward.so");
  assert_string_equal(text(r, "device"), "cpu");
  assert_string_equal(text(r, "library_image"), "memfd");
  assert_string_equal(text(r, "weights_path"), "user_managed");
  assert_string_equal(text(r, "kernels"), "none");
  double lib = number(r, "library_bytes");
  assert_true(lib > 1000);
  /* The fixture's four cpu constants: 48 + 12 + 8 + 4 bytes. */
  assert_true(number(r, "host_bytes") == lib + 72);
  assert_true(number(r, "device_bytes") == 0);
  assert_true(number(r, "weights_file_bytes") > 72);
  const char *phases[] = {"library_write_ns", "dlopen_ns", "container_ns",
                          "weight_read_ns", "weight_upload_ns"};
  double sum = 0;
  for (size_t i = 0; i < 5; i++) {
    assert_true(number(r, phases[i]) >= 0);
    sum += number(r, phases[i]);
  }
  assert_true(number(r, "dlopen_ns") > 0);
  assert_true(number(r, "total_ns") >= sum);
  /* No call yet: first_run_ns is null. */
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "first_run_ns")));
  double total = number(r, "total_ns");
  cJSON_Delete(r);
  /* A failed call is not the first run; the first successful one is, and
   * later calls leave it. The string read before stays valid. */
  const char *before = out.string_value;
  call_io t;
  make_call(&t, 3, 2); /* 3 rows into room for 2: refused */
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(c->api->get_option(c->method, "load_report", &out),
                   AOTRUN_OK);
  r = cJSON_Parse(out.string_value);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "first_run_ns")));
  cJSON_Delete(r);
  double first = 0;
  for (int call = 0; call < 3; call++) {
    make_call(&t, 2, 2);
    assert_int_equal(execute(c, &t), AOTRUN_OK);
    assert_int_equal(c->api->get_option(c->method, "load_report", &out),
                     AOTRUN_OK);
    r = cJSON_Parse(out.string_value);
    assert_non_null(r);
    double now = number(r, "first_run_ns");
    assert_true(now > 0);
    if (call == 0) first = now;
    assert_true(now == first);
    assert_true(number(r, "total_ns") == total); /* the load's alone */
    cJSON_Delete(r);
  }
  r = cJSON_Parse(before);
  assert_non_null(r);
  assert_true(number(r, "total_ns") == total);
  cJSON_Delete(r);
  /* Read-only, and only on a method. */
  aotrun_option set = {"load_report", AOTRUN_OPTION_STRING, 0, 0, "x"};
  assert_int_equal(c->api->set_option(c->method, &set),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(c->api->last_error(c->method),
                      "option 'load_report' is read-only");
  assert_int_equal(c->api->get_option(NULL, "load_report", &out),
                   AOTRUN_ERR_NOT_SUPPORTED);
}

/* The fixture's manifest with a range on s0 (docs/program-format.md,
 * "Dynamic-dim ranges"): execute refuses a batch outside it before the
 * model runs. */
static void test_dim_range_refused(void **state) {
  ctx *c = *state;
  const char *at = strstr(c->program.manifest, "\"inputs\"");
  assert_non_null(at);
  size_t head = (size_t)(at - c->program.manifest);
  const char *ranges = "\"symbols\": {\"s0\": {\"min\": 1, \"max\": 4}}, ";
  size_t size = c->program.manifest_size + strlen(ranges);
  char *manifest = malloc(size + 1);
  assert_non_null(manifest);
  memcpy(manifest, c->program.manifest, head);
  snprintf(manifest + head, size + 1 - head, "%s%s", ranges, at);
  assert_int_equal(init_method(c, manifest, size, "forward"), AOTRUN_OK);
  free(manifest);
  call_io t;
  make_call(&t, 5, 5);
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(c->api->last_error(c->method),
                      "input 0 (x) has size 5 in dim 0 (symbol s0), outside "
                      "its range [1, 4]");
  make_call(&t, 0, 0);
  assert_int_equal(execute(c, &t), AOTRUN_ERR_INVALID_ARGUMENT);
  /* The refused calls never reached the model: its counter is at 1. */
  make_call(&t, 4, 4);
  assert_int_equal(execute(c, &t), AOTRUN_OK);
  assert_float_equal(t.calls, 1.0f, 0);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strstr(argv[i], "cpu_ref")) g_plugin_path = argv[i];
    if (strstr(argv[i], "fixture_model")) g_model_path = argv[i];
  }
  if (g_plugin_path == NULL || g_model_path == NULL) {
    fprintf(stderr, "usage: %s libaotrun_cpu_ref.so fixture_model.so\n",
            argv[0]);
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strides_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fixture_end_to_end, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_output_size_written, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_output_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_input_validation_messages, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_model_failure_reported, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_aliased_outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_misaligned_input_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_io_info, setup, teardown),
      cmocka_unit_test_setup_teardown(test_init_failures_leave_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_missing_files_fail_cleanly, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_options_not_found, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dim_range_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hostile_host_api, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_input_null_data, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_load_report, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_handle_and_const_queries,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
