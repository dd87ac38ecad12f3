/*
 * test_cpu_ref_execute_ex.c: ABI 1.1 execute_ex of the cpu_ref plugin on
 * the fixture program, through the host library (aotrun_host_method_*):
 * backend-allocated outputs (values, shape, deleter; all or nothing on
 * failure), AOTRUN_ERR_OUTPUT_TOO_SMALL with the needed shape (nothing
 * written), ASYNC accepted (synchronous), a stream refused, synchronize.
 *
 * Arguments: the plugin (libaotrun_cpu_ref.so) and fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

static const char *g_plugin_path;
static const char *g_model_path;

typedef struct ctx {
  program_fixture program;
  aotrun_registry *registry;
  aotrun_program_dir *dir;
  aotrun_host_method *method;
  /* one call: x [n, 4] in, y [rows, 3] and calls [1] out */
  float x[5 * 4], y[5 * 3], calls;
  int64_t x_shape[2], y_shape[2], calls_shape[1];
  DLTensor in[1], out[2];
  DLManagedTensor *managed[2];
  aotrun_execute_args args;
} ctx;

static const DLDataType kF32 = {kDLFloat, 32, 1};

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static int setup(void **state) {
  ctx *c = calloc(1, sizeof *c);
  if (c == NULL ||
      program_fixture_create(&c->program, g_model_path, "cpu") != 0 ||
      aotrun_registry_create(&c->registry) != AOTRUN_OK ||
      aotrun_registry_load(c->registry, g_plugin_path, NULL) != AOTRUN_OK ||
      aotrun_program_dir_open(c->program.dir, &c->dir) != AOTRUN_OK) {
    fprintf(stderr, "setup: %s\n", aotrun_host_last_error());
    return -1;
  }
  aotrun_program_dir_set_log_level(c->dir, AOTRUN_LOG_ERROR + 1);
  aotrun_key_value spec = {"method", "forward"};
  if (aotrun_host_method_open(c->registry, "cpu_ref",
                              aotrun_program_dir_host_api(c->dir),
                              c->program.manifest, c->program.manifest_size,
                              &spec, 1, &c->method) != AOTRUN_OK) {
    fprintf(stderr, "open: %s\n", aotrun_host_last_error());
    return -1;
  }
  *state = c;
  return 0;
}

static int teardown(void **state) {
  ctx *c = *state;
  if (c == NULL) return 0;
  aotrun_host_method_close(c->method);
  aotrun_program_dir_close(c->dir);
  aotrun_registry_destroy(c->registry);
  program_fixture_remove(&c->program);
  free(c);
  return 0;
}

/* x has n rows; y gets room for `rows` rows (data NULL when rows < 0). */
static void make_call(ctx *c, int64_t n, int64_t rows) {
  for (int i = 0; i < n * 4; i++) c->x[i] = 0.5f * (float)i - 2.0f;
  memset(c->y, 0, sizeof c->y);
  c->calls = -1;
  c->x_shape[0] = n;
  c->x_shape[1] = 4;
  c->y_shape[0] = rows < 0 ? 0 : rows;
  c->y_shape[1] = 3;
  c->calls_shape[0] = 1;
  c->in[0] = (DLTensor){c->x, {kDLCPU, 0}, 2, kF32, c->x_shape, NULL, 0};
  c->out[0] = (DLTensor){rows < 0 ? NULL : c->y, {kDLCPU, 0}, 2, kF32,
                         c->y_shape, NULL, 0};
  c->out[1] = (DLTensor){&c->calls, {kDLCPU, 0}, 1, kF32, c->calls_shape,
                         NULL, 0};
  c->args = (aotrun_execute_args){.struct_size = sizeof c->args,
                                  .inputs = c->in,
                                  .num_inputs = 1,
                                  .outputs = c->out,
                                  .num_outputs = 2,
                                  .managed_outputs = c->managed};
}

static aotrun_status run(ctx *c) {
  return aotrun_host_method_execute_ex(c->method, &c->args);
}

static void expect_rows(const float *y, const float *x, int64_t n) {
  float want[5 * 3];
  program_fixture_expected(x, n, want);
  for (int64_t i = 0; i < n * 3; i++) assert_float_equal(y[i], want[i], 0);
}

/* An output without data comes back allocated by the backend; the other
 * is written into the caller's buffer; the deleter frees it (ASan/LSan). */
static void test_managed_output(void **state) {
  ctx *c = *state;
  make_call(c, 3, -1);
  assert_int_equal(run(c), AOTRUN_OK);
  DLManagedTensor *y = c->managed[0];
  assert_non_null(y);
  assert_null(c->managed[1]);
  assert_non_null(y->deleter);
  assert_int_equal(y->dl_tensor.device.device_type, kDLCPU);
  assert_int_equal(y->dl_tensor.ndim, 2);
  assert_int_equal(y->dl_tensor.shape[0], 3);
  assert_int_equal(y->dl_tensor.shape[1], 3);
  assert_int_equal(y->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(y->dl_tensor.dtype.bits, 32);
  expect_rows(y->dl_tensor.data, c->x, 3);
  assert_float_equal(c->calls, 1.0f, 0);
  assert_int_equal(c->args.too_small_output, -1);
  /* The tensor outlives the method: the deleter needs no handle. */
  aotrun_host_method_close(c->method);
  c->method = NULL;
  y->deleter(y);
}

/* Both outputs managed, with ASYNC (accepted: the CPU is synchronous, the
 * outputs are complete on return) and synchronize. */
static void test_all_managed_async(void **state) {
  ctx *c = *state;
  make_call(c, 2, -1);
  c->out[1].data = NULL;
  c->args.flags = AOTRUN_EXECUTE_ASYNC;
  assert_int_equal(run(c), AOTRUN_OK);
  assert_int_equal(aotrun_host_method_synchronize(c->method), AOTRUN_OK);
  assert_non_null(c->managed[0]);
  assert_non_null(c->managed[1]);
  expect_rows(c->managed[0]->dl_tensor.data, c->x, 2);
  assert_float_equal(*(float *)c->managed[1]->dl_tensor.data, 1.0f, 0);
  for (int i = 0; i < 2; i++) c->managed[i]->deleter(c->managed[i]);
}

/* Too little room: OUTPUT_TOO_SMALL, which output, the shape it needs;
 * nothing written, no managed tensor left. Then the retry fits. */
static void test_output_too_small(void **state) {
  ctx *c = *state;
  make_call(c, 4, 2);
  c->out[1].data = NULL; /* would be managed: must come back NULL */
  assert_int_equal(run(c), AOTRUN_ERR_OUTPUT_TOO_SMALL);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'cpu_ref': execute_ex failed (output buffer "
                      "too small): output 0 (y) needs shape [4, 3], more "
                      "than the caller's buffer holds");
  assert_int_equal(c->args.too_small_output, 0);
  assert_int_equal(c->args.needed_ndim, 2);
  assert_int_equal(c->args.needed_shape[0], 4);
  assert_int_equal(c->args.needed_shape[1], 3);
  assert_null(c->managed[0]);
  assert_null(c->managed[1]);
  assert_float_equal(c->y[0], 0.0f, 0);
  c->y_shape[0] = c->args.needed_shape[0];
  c->out[1].data = &c->calls;
  assert_int_equal(run(c), AOTRUN_OK);
  assert_int_equal(c->args.too_small_output, -1);
  expect_rows(c->y, c->x, 4);
  /* A static dim that differs is the caller's error, not "too small";
   * the managed output made before the copy failed is freed. */
  make_call(c, 2, 2);
  c->y_shape[1] = 2;
  c->out[1].data = NULL;
  assert_int_equal(run(c), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(c->args.too_small_output, -1);
  assert_null(c->managed[1]);
  assert_contains(aotrun_host_last_error(), "has size 3 in dim 1");
}

/* The CPU has no device stream; a caller struct without the out members
 * still gets the status, and nothing is written beyond its size. */
static void test_stream_refused_and_short_args(void **state) {
  ctx *c = *state;
  make_call(c, 2, 2);
  int stream;
  c->args.stream = &stream;
  assert_int_equal(run(c), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'cpu_ref': execute_ex failed (not supported): "
                      "backend cpu_ref runs on the CPU: it takes no device "
                      "stream (pass stream NULL)");
  make_call(c, 4, 2);
  c->args.struct_size =
      (uint32_t)AOTRUN_MEMBER_END(aotrun_execute_args, managed_outputs);
  c->args.too_small_output = 99;
  assert_int_equal(run(c), AOTRUN_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(c->args.too_small_output, 99);
}

/* A model failure after the first managed output was made: all entries
 * NULL, nothing leaks (the fixture fails on an infinity in x[0][0]). */
static void test_failure_leaves_no_managed_output(void **state) {
  ctx *c = *state;
  make_call(c, 2, -1);
  c->x[0] = 1.0f / 0.0f;
  assert_int_not_equal(run(c), AOTRUN_OK);
  assert_null(c->managed[0]);
  assert_null(c->managed[1]);
  assert_int_equal(c->args.too_small_output, -1);
}

/* The load report's first_run_ns: null until the first successful call;
 * a too-small refusal is not it; execute_ex's first success is. */
static int first_run_is_null(ctx *c, double *value) {
  aotrun_option out;
  assert_int_equal(
      aotrun_host_method_get_option(c->method, "load_report", &out),
      AOTRUN_OK);
  cJSON *r = cJSON_Parse(out.string_value);
  assert_non_null(r);
  cJSON *v = cJSON_GetObjectItemCaseSensitive(r, "first_run_ns");
  int null = cJSON_IsNull(v);
  if (!null) {
    assert_true(cJSON_IsNumber(v));
    *value = v->valuedouble;
  }
  cJSON_Delete(r);
  return null;
}

static void test_first_run_in_load_report(void **state) {
  ctx *c = *state;
  double first = 0, again = 0;
  assert_true(first_run_is_null(c, &first));
  make_call(c, 4, 2);
  assert_int_equal(run(c), AOTRUN_ERR_OUTPUT_TOO_SMALL);
  assert_true(first_run_is_null(c, &first));
  make_call(c, 2, 2);
  assert_int_equal(run(c), AOTRUN_OK);
  assert_false(first_run_is_null(c, &first));
  assert_true(first > 0);
  make_call(c, 2, 2);
  assert_int_equal(run(c), AOTRUN_OK);
  assert_false(first_run_is_null(c, &again));
  assert_true(again == first);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so FIXTURE_MODEL.so\n", argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  g_model_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_managed_output, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_run_in_load_report, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_all_managed_async, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_output_too_small, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_refused_and_short_args,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_failure_leaves_no_managed_output,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
