/*
 * test_model_library.c: loads the C fixture models (testing/fixtures)
 * through aot_loader/model_library.h with the shim library in the process,
 * runs them on CPU tensors, and checks every failure path: the error code,
 * the message, that nothing is left in $TMPDIR and (under ASan/valgrind)
 * that nothing leaks.
 *
 * argv: fixture_model.so fixture_no_run.so fixture_no_constants_api.so
 *       fixture_create_fails.so fixture_unknown_import.so
 *       fixture_no_single_threaded.so fixture_nodelete.so
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "aot_loader/library_image.h"
#include "aot_loader/model_library.h"
#include "testing/loader/loader_test_util.h"

enum {
  FULL,
  NO_RUN,
  NO_CONSTANTS_API,
  CREATE_FAILS,
  UNKNOWN_IMPORT,
  NO_SINGLE_THREADED,
  NODELETE,
  NFIX
};
static test_bytes g_fix[NFIX];

/* The fixture's constants (see fixture_model.c). */
static float g_weight[12] = {1, 2, 3, 4, 0.5f, -1, 0, 2, -2, 1, 1, 0.25f};
static float g_bias[3] = {0.5f, -0.5f, 1};
static double g_scale = 2.0;

#define BLOB_SIZE 256

static void make_blob(unsigned char *blob, float calls0) {
  memset(blob, 0xAB, BLOB_SIZE); /* padding must not matter */
  memcpy(blob + 0, g_weight, sizeof g_weight);
  memcpy(blob + 64, g_bias, sizeof g_bias);
  memcpy(blob + 128, &g_scale, sizeof g_scale);
  memcpy(blob + 192, &calls0, sizeof calls0);
}

/* What the fixture computes, in the same order. */
static float expected_y(const float *x, const float *w, const float *b,
                        double scale, int i, int j) {
  float acc = b[j];
  for (int k = 0; k < 4; k++) acc += x[i * 4 + k] * w[j * 4 + k];
  return (float)((double)acc * scale);
}

static int setup(void **state) {
  (void)state;
  test_tmpdir_begin();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_tmpdir_end();
  return 0;
}

static aotrun_model_library *load_ok(int which) {
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_model_library *lib = NULL;
  aotrun_status st = aotrun_model_library_load(
      g_fix[which].data, g_fix[which].size, "cpu", &lib, &err);
  if (st != AOTRUN_OK) fail_msg("load failed (%d): %s", st, err.message);
  assert_non_null(lib);
  return lib;
}

static void load_blob(aotrun_model_library *lib) {
  unsigned char blob[BLOB_SIZE];
  make_blob(blob, 0);
  aotrun_error err;
  assert_int_equal(
      aotrun_model_library_load_constants_blob_sized(lib, blob, BLOB_SIZE,
                                                     &err),
      AOTRUN_OK);
}

/* Runs with x [2, 4], checks y against the given constants, returns the
 * calls output. */
static float run_and_check(aotrun_model_library *lib, const float *w,
                           const float *b, double scale) {
  const float x[8] = {1, -2, 0.5f, 3, 0, 1.5f, -1, 2};
  AtenTensorHandle in[1] = {test_f32_tensor(2, 4, x)};
  AtenTensorHandle out[2] = {NULL, NULL};
  aotrun_error err;
  aotrun_status st = aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err);
  if (st != AOTRUN_OK) fail_msg("run failed (%d): %s", st, err.message);
  int64_t *sizes = NULL, dim = 0;
  assert_int_equal(aoti_torch_get_dim(out[0], &dim), 0);
  assert_int_equal(dim, 2);
  assert_int_equal(aoti_torch_get_sizes(out[0], &sizes), 0);
  assert_int_equal(sizes[0], 2);
  assert_int_equal(sizes[1], 3);
  const float *y = test_f32_data(out[0]);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      assert_float_equal(y[i * 3 + j], expected_y(x, w, b, scale, i, j), 0);
  float calls = test_f32_data(out[1])[0];
  aoti_torch_delete_tensor_object(out[0]);
  aoti_torch_delete_tensor_object(out[1]);
  return calls;
}

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

typedef struct loaded_query {
  const char *path;
  int n;
} loaded_query;

static int on_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  loaded_query *q = data;
  if (info->dlpi_name != NULL && strcmp(info->dlpi_name, q->path) == 0) q->n++;
  return 0;
}

static int mapped(const char *path) {
  loaded_query q = {path, 0};
  dl_iterate_phdr(on_object, &q);
  return q.n;
}

/* ---- happy paths ---- */

static void test_load_run_destroy_with_blob(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(FULL);
  assert_int_equal(aotrun_model_library_num_inputs(lib), 1);
  assert_int_equal(aotrun_model_library_num_outputs(lib), 2);
  assert_true(aotrun_model_library_has_run_single_threaded(lib));
  assert_string_equal(aotrun_model_library_device(lib), "cpu");
  uint64_t size = 0;
  aotrun_error err;
  assert_int_equal(aotrun_model_library_blob_size(lib, &size, &err),
                   AOTRUN_OK);
  assert_int_equal(size, BLOB_SIZE);
  load_blob(lib);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 2, 0);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 3, 0);
  assert_int_equal(test_tmpdir_count(), 0); /* unlinked once mapped */
  aotrun_model_library_destroy(lib);
  assert_int_equal(test_tmpdir_count(), 0);
  aotrun_model_library_destroy(NULL); /* accepted */
}

/* With memfd and O_TMPFILE refused (library_image.h), the copy is a named
 * temp file: private (name under $TMPDIR) and already unlinked once the
 * load returns, so a process killed while the model is loaded (or a
 * constructor that crashes) leaves nothing in the temp directory. */
static void test_temp_file_is_private(void **state) {
  (void)state;
  const char *dir = getenv("TMPDIR"); /* this test's fresh directory */
  aotrun_library_image_test_refuse(1u << AOTRUN_IMAGE_UNNAMED_FILE);
  aotrun_model_library_config c = {.device = "cpu", .temp_file = 1};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_model_library_load_with(g_fix[FULL].data,
                                                  g_fix[FULL].size, &c, &lib,
                                                  &err),
                   AOTRUN_OK);
  aotrun_library_image_test_refuse(0);
  assert_string_equal(aotrun_model_library_image_kind(lib), "temp file");
  char path[4200];
  snprintf(path, sizeof path, "%s", aotrun_model_library_path(lib));
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s/aotrun-model-", dir);
  assert_int_equal(strncmp(path, prefix, strlen(prefix)), 0);
  assert_int_equal(strlen(path), strlen(prefix) + 6 + 3); /* XXXXXX.so */
  assert_string_equal(path + strlen(path) - 3, ".so");
  assert_int_equal(access(path, F_OK), -1); /* unlinked while loaded */
  assert_int_equal(test_tmpdir_count(), 0);
  assert_int_equal(mapped(path), 1); /* but still mapped and usable */
  load_blob(lib);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  aotrun_model_library_destroy(lib);
  assert_int_equal(mapped(path), 0);
  assert_int_equal(test_tmpdir_count(), 0);
}

static void test_constant_info(void **state) {
  (void)state;
  static const struct {
    const char *name, *fqn;
    int32_t dtype, type;
    uint64_t size;
  } want[4] = {{"weight", "lin.weight", 6, 1, 48},
               {"bias", "lin.bias", 6, 1, 12},
               {"scale64", "scale", 7, 2, 8},
               {"calls", "calls", 6, 2, 4}};
  aotrun_model_library *lib = load_ok(FULL);
  aotrun_error err;
  size_t n = 0;
  assert_int_equal(aotrun_model_library_num_constants(lib, &n, &err),
                   AOTRUN_OK);
  assert_int_equal(n, 4);
  for (size_t i = 0; i < 4; i++) {
    aotrun_constant_info info;
    assert_int_equal(aotrun_model_library_constant_info(lib, i, &info, &err),
                     AOTRUN_OK);
    assert_string_equal(info.name, want[i].name);
    assert_string_equal(info.fqn, want[i].fqn);
    assert_int_equal(info.dtype, want[i].dtype);
    assert_int_equal(info.type, want[i].type);
    assert_int_equal(info.data_size, want[i].size);
    assert_int_equal(info.from_folded, 0);
  }
  aotrun_constant_info info;
  assert_int_equal(aotrun_model_library_constant_info(lib, 4, &info, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "constant index 4 is out of range");
  assert_contains(err.message, "has 4 constants");
  assert_null(info.name);
  aotrun_model_library_destroy(lib);
}

/* Non-owning views of memory the test owns, handed over zero-copy. */
typedef struct views {
  float w[12], b[3], calls;
  double scale;
  AtenTensorHandle h[4];
} views;

static void make_views(views *v) {
  memcpy(v->w, g_weight, sizeof v->w);
  memcpy(v->b, g_bias, sizeof v->b);
  v->scale = g_scale;
  v->calls = 10;
  int64_t s34[2] = {3, 4}, st34[2] = {4, 1}, s3 = 3, one = 1;
  int32_t f32 = aoti_torch_dtype_float32(), f64 = aoti_torch_dtype_float64();
  int32_t cpu = aoti_torch_device_type_cpu();
  assert_int_equal(aoti_torch_create_tensor_from_blob(v->w, 2, s34, st34, 0,
                                                      f32, cpu, 0, &v->h[0]),
                   0);
  assert_int_equal(aoti_torch_create_tensor_from_blob(v->b, 1, &s3, &one, 0,
                                                      f32, cpu, 0, &v->h[1]),
                   0);
  assert_int_equal(aoti_torch_create_tensor_from_blob(
                       &v->scale, 1, &one, &one, 0, f64, cpu, 0, &v->h[2]),
                   0);
  assert_int_equal(aoti_torch_create_tensor_from_blob(
                       &v->calls, 1, &one, &one, 0, f32, cpu, 0, &v->h[3]),
                   0);
}

static void drop_views(views *v) {
  for (int i = 0; i < 4; i++) aoti_torch_delete_tensor_object(v->h[i]);
}

static void test_user_managed_constants_are_zero_copy(void **state) {
  (void)state;
  views v;
  make_views(&v);
  aotrun_model_library *lib = load_ok(FULL);
  aotrun_constant_pair pairs[4] = {{"calls", v.h[3]},
                                   {"weight", v.h[0]},
                                   {"scale64", v.h[2]},
                                   {"bias", v.h[1]}};
  aotrun_error err;
  assert_int_equal(
      aotrun_model_library_set_user_managed_constants(lib, pairs, 4, &err),
      AOTRUN_OK);
  drop_views(&v); /* the container keeps its own aliases */
  assert_float_equal(run_and_check(lib, v.w, v.b, v.scale), 11, 0);
  assert_float_equal(v.calls, 11, 0); /* the buffer write reached our memory */
  v.w[5] = 7.5f;                      /* no copy: the model sees the change */
  v.scale = -0.5;
  assert_float_equal(run_and_check(lib, v.w, v.b, v.scale), 12, 0);
  aotrun_model_library_destroy(lib); /* memory freed only after this */
}

static void test_user_managed_constants_refused(void **state) {
  (void)state;
  views v;
  make_views(&v);
  aotrun_model_library *lib = load_ok(FULL);
  aotrun_error err;
  aotrun_constant_pair dup[5] = {{"weight", v.h[0]}, {"bias", v.h[1]},
                                 {"scale64", v.h[2]}, {"calls", v.h[3]},
                                 {"bias", v.h[1]}};
  assert_int_equal(
      aotrun_model_library_set_user_managed_constants(lib, dup, 5, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "'bias' is given twice (pairs 1 and 4)");
  aotrun_constant_pair unknown[4] = {{"weight", v.h[0]}, {"bias", v.h[1]},
                                     {"scale", v.h[2]}, {"calls", v.h[3]}};
  assert_int_equal(
      aotrun_model_library_set_user_managed_constants(lib, unknown, 4, &err),
      AOTRUN_ERR_NOT_FOUND);
  assert_contains(err.message, "'scale' is not a constant of");
  aotrun_constant_pair missing[3] = {
      {"weight", v.h[0]}, {"bias", v.h[1]}, {"calls", v.h[3]}};
  assert_int_equal(
      aotrun_model_library_set_user_managed_constants(lib, missing, 3, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "constant 2 'scale64'");
  assert_contains(err.message, "is not given");
  aotrun_constant_pair null_handle[4] = {{"weight", v.h[0]}, {"bias", NULL},
                                         {"scale64", v.h[2]},
                                         {"calls", v.h[3]}};
  assert_int_equal(aotrun_model_library_set_user_managed_constants(
                       lib, null_handle, 4, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "constant 1 has a NULL handle");
  /* Nothing reached the model: it still has no constants and says so. */
  const float x[4] = {1, 2, 3, 4};
  AtenTensorHandle in[1] = {test_f32_tensor(1, 4, x)};
  AtenTensorHandle out[2] = {(AtenTensorHandle)1, (AtenTensorHandle)1};
  assert_int_equal(aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err),
                   AOTRUN_ERR_INTERNAL);
  assert_contains(err.message,
                  "AOTInductorModelContainerRunSingleThreaded returned 1");
  assert_contains(err.message, "the model printed the reason to stderr");
  assert_null(out[0]);
  assert_null(out[1]);
  aotrun_model_library_destroy(lib);
  drop_views(&v);
}

static void test_blob_only_library(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(NO_CONSTANTS_API);
  aotrun_error err;
  size_t n = 99;
  assert_int_equal(aotrun_model_library_num_constants(lib, &n, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(n, 0);
  assert_contains(err.message, "cannot list its constants (no "
                               "AOTInductorModelContainerGetNumConstants)");
  aotrun_constant_info info;
  assert_int_equal(aotrun_model_library_constant_info(lib, 0, &info, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(
      aotrun_model_library_set_user_managed_constants(lib, NULL, 0, &err),
      AOTRUN_ERR_NOT_SUPPORTED);
  load_blob(lib);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  aotrun_model_library_destroy(lib);
}

static void test_blob_refusals(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(FULL);
  unsigned char blob[BLOB_SIZE];
  make_blob(blob, 0);
  aotrun_error err;
  assert_int_equal(
      aotrun_model_library_load_constants_blob_sized(lib, blob, 100, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "has 100 bytes, the library expects 256");
  assert_int_equal(aotrun_model_library_load_constants_blob(lib, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(aotrun_model_library_load_constants_blob(lib, blob, &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_model_library_load_constants_blob(lib, blob, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "is already loaded");
  aotrun_model_library_destroy(lib);
}

/* ---- run refusals and failures ---- */

static void test_run_wrong_counts_refused_before_the_model(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(FULL);
  load_blob(lib);
  const float x[4] = {1, 2, 3, 4};
  AtenTensorHandle in[2] = {test_f32_tensor(1, 4, x), test_f32_tensor(1, 4, x)};
  AtenTensorHandle out[3] = {NULL, NULL, NULL};
  aotrun_error err;
  assert_int_equal(aotrun_model_library_run(lib, in, 2, out, 2, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "takes 1 inputs, got 2");
  assert_int_equal(aotrun_model_library_run(lib, in, 0, out, 2, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "takes 1 inputs, got 0");
  assert_int_equal(aotrun_model_library_run(lib, in, 1, out, 3, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "returns 2 outputs, got room for 3");
  assert_int_equal(aotrun_model_library_run(lib, in, 1, NULL, 2, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "output array is NULL");
  AtenTensorHandle null_in[1] = {NULL};
  assert_int_equal(
      aotrun_model_library_run(lib, null_in, 1, out, 2, NULL, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "input 0 is a NULL tensor handle");
  assert_int_equal(aotrun_model_library_run(NULL, in, 1, out, 2, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  /* Refused calls did not consume the inputs: they are still ours. */
  aoti_torch_delete_tensor_object(in[0]);
  aoti_torch_delete_tensor_object(in[1]);
  /* ... and the model never ran. */
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  aotrun_model_library_destroy(lib);
}

static void test_run_failure_reports_shim_error(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(FULL);
  load_blob(lib);
  const float x[4] = {NAN, 2, 3, 4}; /* fixture hook: a failing shim call */
  AtenTensorHandle in[1] = {test_f32_tensor(1, 4, x)};
  AtenTensorHandle out[2] = {NULL, NULL};
  aotrun_error err;
  assert_int_equal(aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err),
                   AOTRUN_ERR_INTERNAL);
  const char *shim = aotrun_shim_last_error();
  assert_true(strlen(shim) > 0);
  assert_contains(err.message,
                  "AOTInductorModelContainerRunSingleThreaded returned 1 for ");
  assert_contains(err.message, shim);
  assert_null(out[0]);
  assert_null(out[1]);
  /* The failed run consumed its input (ASan would see a leak otherwise) and
   * the library still works. */
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  aotrun_model_library_destroy(lib);
}

static void test_failure_after_an_output_was_written(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(FULL);
  load_blob(lib);
  const float x[4] = {INFINITY, 2, 3, 4}; /* fixture hook */
  AtenTensorHandle in[1] = {test_f32_tensor(1, 4, x)};
  AtenTensorHandle out[2] = {NULL, NULL};
  aotrun_error err;
  assert_int_equal(aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err),
                   AOTRUN_ERR_INTERNAL);
  /* The model had handed out output 0: the loader deleted it (a leak under
   * ASan/valgrind otherwise) and hands back nothing. */
  assert_null(out[0]);
  assert_null(out[1]);
  aotrun_model_library_destroy(lib);
}

static void test_falls_back_to_run(void **state) {
  (void)state;
  aotrun_model_library *lib = load_ok(NO_SINGLE_THREADED);
  assert_false(aotrun_model_library_has_run_single_threaded(lib));
  load_blob(lib);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  const float x[4] = {NAN, 2, 3, 4};
  AtenTensorHandle in[1] = {test_f32_tensor(1, 4, x)};
  AtenTensorHandle out[2] = {NULL, NULL};
  aotrun_error err;
  assert_int_equal(aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err),
                   AOTRUN_ERR_INTERNAL);
  assert_contains(err.message, "AOTInductorModelContainerRun returned 1");
  aotrun_model_library_destroy(lib);
}

/* ---- load failures: code, message, nothing left behind ---- */

static void expect_load_failure(const void *bytes, size_t size,
                                const char *device, aotrun_status code,
                                const char *text) {
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_model_library *lib = (aotrun_model_library *)&err; /* overwritten */
  aotrun_status st = aotrun_model_library_load(bytes, size, device, &lib, &err);
  if (st != code)
    fail_msg("load returned %d, expected %d: %s", st, code, err.message);
  assert_int_equal(err.code, code);
  assert_null(lib);
  assert_contains(err.message, text);
  assert_int_equal(test_tmpdir_count(), 0);
}

static void test_missing_required_entry_points_all_named(void **state) {
  (void)state;
  expect_load_failure(g_fix[NO_RUN].data, g_fix[NO_RUN].size, "cpu",
                      AOTRUN_ERR_NOT_FOUND,
                      "missing required entry points "
                      "AOTInductorModelContainerDelete, "
                      "AOTInductorModelContainerRun");
}

static void test_create_fails(void **state) {
  (void)state;
  expect_load_failure(g_fix[CREATE_FAILS].data, g_fix[CREATE_FAILS].size,
                      "cpu", AOTRUN_ERR_ACCESS_FAILED,
                      "AOTInductorModelContainerCreateWithDevice returned 1");
}

/* Refused before dlopen (the imports are read from the bytes and checked
 * against the shim), naming the import and the way out. */
static void test_unresolvable_import_named(void **state) {
  (void)state;
  expect_load_failure(g_fix[UNKNOWN_IMPORT].data, g_fix[UNKNOWN_IMPORT].size,
                      "cpu", AOTRUN_ERR_NOT_SUPPORTED,
                      "model library imports 1 aoti_torch_* function that "
                      "the shim library");
  expect_load_failure(g_fix[UNKNOWN_IMPORT].data, g_fix[UNKNOWN_IMPORT].size,
                      "cpu", AOTRUN_ERR_NOT_SUPPORTED,
                      "does not export: aoti_torch_fixture_no_such_op: use "
                      "the shim library of the aotrun");
}

static void test_not_elf(void **state) {
  (void)state;
  static const char garbage[] = "this is not a shared library at all";
  expect_load_failure(garbage, sizeof garbage, "cpu",
                      AOTRUN_ERR_INVALID_ARGUMENT, "no ELF magic");
  expect_load_failure(garbage, 0, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "model library is empty (0 bytes)");
  expect_load_failure(NULL, 10, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "model library is empty");
}

/* Where the file's last loadable segment ends (what dlopen maps): a cut
 * before it is a truncated library, a cut after it only loses sections
 * that are not loaded (debug info, which a -g build puts at the end). */
static size_t segments_end(const test_bytes *f) {
  ElfW(Ehdr) eh;
  assert_true(f->size >= sizeof eh);
  memcpy(&eh, f->data, sizeof eh);
  size_t end = 0;
  for (int i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    size_t at = (size_t)eh.e_phoff + (size_t)i * eh.e_phentsize;
    assert_true(at + sizeof ph <= f->size);
    memcpy(&ph, (const char *)f->data + at, sizeof ph);
    if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > end)
      end = (size_t)(ph.p_offset + ph.p_filesz);
  }
  assert_true(end > 0 && end <= f->size);
  return end;
}

static void test_truncated(void **state) {
  (void)state;
  const test_bytes *f = &g_fix[FULL];
  expect_load_failure(f->data, 40, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "truncated: 40 bytes, an ELF header needs 64");
  expect_load_failure(f->data, 100, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "truncated: its program headers end at byte");
  /* Past the headers but short of the segments: would SIGBUS in dlopen.
   * (Cut inside the last segment, not at half the file: with -g the
   * second half can be debug sections alone.) */
  expect_load_failure(f->data, segments_end(f) - 1, "cpu",
                      AOTRUN_ERR_INVALID_ARGUMENT, "truncated: segment");
}

static void test_corrupt_headers(void **state) {
  (void)state;
  const test_bytes *f = &g_fix[FULL];
  unsigned char *copy = malloc(f->size);
  assert_non_null(copy);
  memcpy(copy, f->data, f->size);
  copy[16] = 2; /* e_type = ET_EXEC */
  expect_load_failure(copy, f->size, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "is not a shared library (ELF type 2, expected 3)");
  memcpy(copy, f->data, f->size);
  copy[4] = 1; /* ELFCLASS32 */
  expect_load_failure(copy, f->size, "cpu", AOTRUN_ERR_INVALID_ARGUMENT,
                      "is not a 64-bit ELF file");
  /* Passes our checks, refused by dlopen after the temp file was written:
   * the file must still be removed. */
  memcpy(copy, f->data, f->size);
  copy[6] = 0; /* EI_VERSION */
  expect_load_failure(copy, f->size, "cpu", AOTRUN_ERR_ACCESS_FAILED,
                      "cannot dlopen model library");
  free(copy);
}

static void test_bad_arguments(void **state) {
  (void)state;
  const test_bytes *f = &g_fix[FULL];
  const char *bad[] = {"gpu", "", "cuda:", "cuda:x", "cuda0", "cpu:0",
                       "cuda:1234567890"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    expect_load_failure(f->data, f->size, bad[i],
                        AOTRUN_ERR_INVALID_ARGUMENT,
                        "is not \"cpu\", \"cuda\" or \"cuda:N\"");
  expect_load_failure(f->data, f->size, NULL, AOTRUN_ERR_INVALID_ARGUMENT,
                      "device is NULL");
  aotrun_error err;
  assert_int_equal(
      aotrun_model_library_load(f->data, f->size, "cpu", NULL, &err),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(err.message, "out is NULL");
  /* A NULL error object is allowed. */
  aotrun_model_library *lib = NULL;
  assert_int_equal(aotrun_model_library_load(f->data, 3, "cpu", &lib, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(lib);
}

/* The default image is a memfd: a missing $TMPDIR does not matter. With
 * library_temp_file both on-disk kinds fail, naming the directory. */
static void test_unwritable_tmpdir(void **state) {
  (void)state;
  const char *dir = getenv("TMPDIR");
  char missing[4200];
  snprintf(missing, sizeof missing, "%s/does-not-exist", dir);
  setenv("TMPDIR", missing, 1);
  aotrun_model_library *lib = load_ok(FULL);
  assert_string_equal(aotrun_model_library_image_kind(lib), "memfd");
  aotrun_model_library_destroy(lib);
  const test_bytes *f = &g_fix[FULL];
  aotrun_error err;
  lib = NULL;
  aotrun_model_library_config c = {.device = "cpu", .temp_file = 1};
  assert_int_equal(
      aotrun_model_library_load_with(f->data, f->size, &c, &lib, &err),
      AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(err.message, "cannot create a temp file in ");
  assert_contains(err.message, "does-not-exist");
  assert_contains(err.message, "unnamed temp file: O_TMPFILE in ");
  assert_null(lib);
  setenv("TMPDIR", dir, 1);
}

/* A CUDA device makes libcudart global before the model is opened; the
 * fixture refuses anything but cpu, so the load then fails cleanly. */
static void test_cuda_device_loads_cudart(void **state) {
  (void)state;
  void *probe = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_LOCAL);
  if (probe == NULL) {
    print_message("skipped: libcudart.so.13 is not installed here (%s)\n",
                  dlerror());
    skip();
  }
  dlclose(probe);
  const test_bytes *f = &g_fix[FULL];
  expect_load_failure(f->data, f->size, "cuda:0", AOTRUN_ERR_ACCESS_FAILED,
                      "AOTInductorModelContainerCreateWithDevice returned 1");
  void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h); /* loaded (and kept) by the loader */
  assert_non_null(dlsym(RTLD_DEFAULT, "cudaMalloc")); /* global */
  dlclose(h);
}

/* ---- several libraries in one process ---- */

static void test_two_loads_of_the_same_bytes(void **state) {
  (void)state;
  aotrun_model_library *a = load_ok(FULL);
  aotrun_model_library *b = load_ok(FULL);
  assert_string_not_equal(aotrun_model_library_path(a),
                          aotrun_model_library_path(b));
  /* Two distinct objects are mapped, not one shared by refcount. */
  assert_int_equal(mapped(aotrun_model_library_path(a)), 1);
  assert_int_equal(mapped(aotrun_model_library_path(b)), 1);
  assert_int_equal(test_tmpdir_count(), 0); /* both copies already unlinked */
  load_blob(a);
  load_blob(b);
  assert_float_equal(run_and_check(a, g_weight, g_bias, g_scale), 1, 0);
  assert_float_equal(run_and_check(a, g_weight, g_bias, g_scale), 2, 0);
  assert_float_equal(run_and_check(b, g_weight, g_bias, g_scale), 1, 0);
  char path_a[4200];
  snprintf(path_a, sizeof path_a, "%s", aotrun_model_library_path(a));
  aotrun_model_library_destroy(a);
  assert_int_equal(mapped(path_a), 0); /* really unloaded */
  assert_int_equal(test_tmpdir_count(), 0);
  assert_float_equal(run_and_check(b, g_weight, g_bias, g_scale), 2, 0);
  aotrun_model_library_destroy(b);
}

static void test_many_libraries_load_and_delete(void **state) {
  (void)state;
  enum { N = 6 };
  aotrun_model_library *libs[N];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      libs[i] = load_ok(i % 2 ? NO_CONSTANTS_API : FULL);
      load_blob(libs[i]);
    }
    assert_int_equal(test_tmpdir_count(), 0); /* unlinked once mapped */
    /* Delete in an interleaved order while the others keep running. */
    for (int i = 0; i < N; i += 2) {
      aotrun_model_library_destroy(libs[i]);
      for (int j = i + 1; j < N; j += 2)
        assert_true(run_and_check(libs[j], g_weight, g_bias, g_scale) >= 1);
    }
    for (int i = 1; i < N; i += 2) aotrun_model_library_destroy(libs[i]);
    assert_int_equal(test_tmpdir_count(), 0);
  }
}

/* A library that stays loaded after dlclose keeps its /proc/self/fd/N
 * name; the next image must not be opened under that name (ld.so would
 * hand back the old library: seen on the GPU with two methods of one
 * program, the second method got the first one's code). */
static void test_stale_name_of_a_library_kept_loaded(void **state) {
  (void)state;
  aotrun_model_library *kept = load_ok(NODELETE);
  char kept_path[4200];
  snprintf(kept_path, sizeof kept_path, "%s", aotrun_model_library_path(kept));
  aotrun_model_library_destroy(kept);
  assert_int_equal(mapped(kept_path), 1); /* still loaded, fd closed */
  aotrun_model_library *lib = load_ok(NO_CONSTANTS_API);
  assert_string_not_equal(aotrun_model_library_path(lib), kept_path);
  aotrun_error err;
  size_t n = 99;
  /* The library asked for, not the one kept loaded. */
  assert_int_equal(aotrun_model_library_num_constants(lib, &n, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  load_blob(lib);
  assert_float_equal(run_and_check(lib, g_weight, g_bias, g_scale), 1, 0);
  aotrun_model_library_destroy(lib);
  assert_int_equal(test_tmpdir_count(), 0);
}

int main(int argc, char **argv) {
  if (argc != 1 + NFIX) {
    fprintf(stderr,
            "usage: %s fixture_model.so fixture_no_run.so "
            "fixture_no_constants_api.so fixture_create_fails.so "
            "fixture_unknown_import.so fixture_no_single_threaded.so "
            "fixture_nodelete.so\n",
            argv[0]);
    return 2;
  }
  for (int i = 0; i < NFIX; i++) g_fix[i] = test_read_file(argv[1 + i]);
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(test_load_run_destroy_with_blob),
      T(test_temp_file_is_private),
      T(test_constant_info),
      T(test_user_managed_constants_are_zero_copy),
      T(test_user_managed_constants_refused),
      T(test_blob_only_library),
      T(test_blob_refusals),
      T(test_run_wrong_counts_refused_before_the_model),
      T(test_run_failure_reports_shim_error),
      T(test_failure_after_an_output_was_written),
      T(test_falls_back_to_run),
      T(test_missing_required_entry_points_all_named),
      T(test_create_fails),
      T(test_unresolvable_import_named),
      T(test_not_elf),
      T(test_truncated),
      T(test_corrupt_headers),
      T(test_bad_arguments),
      T(test_unwritable_tmpdir),
      T(test_cuda_device_loads_cudart),
      T(test_two_loads_of_the_same_bytes),
      T(test_many_libraries_load_and_delete),
      T(test_stale_name_of_a_library_kept_loaded),
#undef T
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  for (int i = 0; i < NFIX; i++) free(g_fix[i].data);
  return rc;
}
