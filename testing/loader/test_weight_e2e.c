/*
 * test_weight_e2e.c: the bundled example program end to end on the CPU:
 * manifest.json + weights.safetensors (testing/example_program) bound to the
 * C fixture model through the real model library and shim, on both paths
 * (user-managed views; binary blob when the library cannot list its
 * constants), then run. The weights file is freed right after binding (the
 * bound constants are copies) and the documented destroy order is followed,
 * so ASan catches any use after free.
 *
 * argv: manifest.json weights.safetensors forward.so
 *       fixture_no_constants_api.so
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/constant_target.h"
#include "aot_loader/method_weights.h"
#include "aot_loader/model_library.h"
#include "aot_loader/program.h"
#include "aot_loader/safetensors.h"
#include "aot_loader/weight_cache.h"
#include "testing/loader/loader_test_util.h"
#include "testing/loader/test_program_json.h"

static const char *g_manifest, *g_weights, *g_forward, *g_no_constants_api;

/* A program method bound to a loaded library. */
typedef struct bound {
  aotrun_program *program;
  aotrun_model_library *lib;
  aotrun_weight_cache *cache;
  aotrun_method_weights *weights;
} bound;

/* Parses the manifest (edited when path != NULL) and the weights, loads
 * library_path and binds; returns the bind status (message in err). The
 * weights file and its parsed view are freed before returning. */
static aotrun_status bind_program(const char *library_path,
                                  const char *edit_path,
                                  const char *edit_value, bound *b,
                                  aotrun_error *err) {
  memset(b, 0, sizeof *b);
  test_bytes manifest = test_read_file(g_manifest);
  char *text = NULL;
  if (edit_path != NULL) {
    char *nul = malloc(manifest.size + 1); /* json_with wants a C string */
    assert_non_null(nul);
    memcpy(nul, manifest.data, manifest.size);
    nul[manifest.size] = '\0';
    text = json_with(nul, edit_path, edit_value);
    free(nul);
  }
  aotrun_status s = aotrun_program_parse(
      text ? text : (const char *)manifest.data,
      text ? strlen(text) : manifest.size, &b->program, err);
  free(text);
  free(manifest.data);
  assert_int_equal(s, AOTRUN_OK);
  const aotrun_program_method *forward = NULL;
  assert_int_equal(aotrun_program_find_method(b->program, "forward", &forward,
                                              err),
                   AOTRUN_OK);

  test_bytes file = test_read_file(g_weights);
  aotrun_safetensors *st = NULL;
  assert_int_equal(aotrun_safetensors_parse(file.data, file.size,
                                            b->program->weights, &st, err),
                   AOTRUN_OK);
  test_bytes so = test_read_file(library_path);
  s = aotrun_model_library_load(so.data, so.size, "cpu", &b->lib, err);
  free(so.data);
  assert_int_equal(s, AOTRUN_OK);
  /* A cpu model: host memory for both kinds of constants. */
  assert_int_equal(aotrun_weight_cache_create(aotrun_host_device_ops(), NULL,
                                              NULL, NULL, &b->cache, err),
                   AOTRUN_OK);
  aotrun_constant_target target = aotrun_constant_target_of_library(b->lib);
  s = aotrun_method_weights_bind(&target, forward, st, b->cache,
                                 aotrun_shim_tensor_view_ops(), 0,
                                 &b->weights, err);
  aotrun_safetensors_destroy(st);
  free(file.data);
  return s;
}

/* The documented order: container first, then the copies it aliases. */
static void unbind(bound *b) {
  aotrun_model_library_destroy(b->lib);
  aotrun_method_weights_release(b->weights);
  aotrun_weight_cache_destroy(b->cache);
  aotrun_program_destroy(b->program);
}

/* The example's weights (make_example_program.py) and the model's math. */
static void expected_y(const float *x, int64_t rows, float *y) {
  static const float kBias[3] = {0.5f, -1.0f, 0.25f};
  for (int64_t i = 0; i < rows; i++)
    for (int j = 0; j < 3; j++) {
      float acc = kBias[j];
      for (int k = 0; k < 4; k++)
        acc += x[i * 4 + k] * ((float)(4 * j + k + 1) / 8.0f);
      y[i * 3 + j] = (float)((double)acc * 2.0);
    }
}

static void run_and_check(bound *b, float expected_calls) {
  static const float x[8] = {1, 2, 3, 4, -1, 0.5f, 0, 2};
  float want[6];
  expected_y(x, 2, want);
  AtenTensorHandle in[1] = {test_f32_tensor(2, 4, x)};
  AtenTensorHandle out[2] = {NULL, NULL};
  aotrun_error err = {0};
  aotrun_status s = aotrun_model_library_run(b->lib, in, 1, out, 2, NULL,
                                             &err);
  if (s != AOTRUN_OK) print_message("run: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  const float *y = test_f32_data(out[0]);
  for (int i = 0; i < 6; i++) assert_float_equal(y[i], want[i], 0.0);
  assert_float_equal(test_f32_data(out[1])[0], expected_calls, 0.0);
  aoti_torch_delete_tensor_object(out[0]);
  aoti_torch_delete_tensor_object(out[1]);
}

static void expect_all_host_constants(const aotrun_method_weights *w) {
  static const char *kNames[4] = {"weight", "bias", "scale64", "calls"};
  assert_int_equal(aotrun_method_weights_num_host_constants(w), 4);
  for (size_t i = 0; i < 4; i++)
    assert_string_equal(aotrun_method_weights_host_constant(w, i), kNames[i]);
}

static void test_user_managed_path(void **state) {
  (void)state;
  test_tmpdir_begin();
  bound b;
  aotrun_error err = {0};
  aotrun_status s = bind_program(g_forward, NULL, NULL, &b, &err);
  if (s != AOTRUN_OK) print_message("bind: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  assert_int_equal(aotrun_method_weights_used_blob(b.weights), 0);
  assert_int_equal(aotrun_method_weights_constants_unlisted(b.weights), 0);
  expect_all_host_constants(b.weights);
  assert_int_equal(aotrun_weight_cache_num_copies(b.cache), 4);
  /* The counter buffer lives in the cache's memory: state persists. */
  run_and_check(&b, 1.0f);
  run_and_check(&b, 2.0f);
  unbind(&b);
  test_tmpdir_end();
}

static void test_blob_path(void **state) {
  (void)state;
  test_tmpdir_begin();
  bound b;
  aotrun_error err = {0};
  aotrun_status s = bind_program(g_no_constants_api, NULL, NULL, &b, &err);
  if (s != AOTRUN_OK) print_message("bind: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  assert_int_equal(aotrun_method_weights_used_blob(b.weights), 1);
  assert_int_equal(aotrun_method_weights_constants_unlisted(b.weights), 1);
  expect_all_host_constants(b.weights);
  assert_int_equal(aotrun_weight_cache_num_copies(b.cache), 0);
  run_and_check(&b, 1.0f);
  unbind(&b);
  test_tmpdir_end();
}

static void test_manifest_disagrees_with_library(void **state) {
  (void)state;
  test_tmpdir_begin();
  bound b;
  aotrun_error err = {0};
  assert_int_equal(bind_program(g_forward, "methods.forward.constants.3.name",
                                "\"counter\"", &b, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(b.weights);
  assert_string_equal(err.message, "malformed FQN weight metadata: the "
                      "library's constant 3 is 'calls', the manifest lists "
                      "'counter' (fqn 'calls') there and has no 'calls' "
                      "(method 'forward')");
  assert_int_equal(aotrun_weight_cache_num_copies(b.cache), 0);
  unbind(&b);
  test_tmpdir_end();
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s manifest.json weights.safetensors forward.so "
            "fixture_no_constants_api.so\n", argv[0]);
    return 2;
  }
  g_manifest = argv[1];
  g_weights = argv[2];
  g_forward = argv[3];
  g_no_constants_api = argv[4];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_user_managed_path),
      cmocka_unit_test(test_blob_path),
      cmocka_unit_test(test_manifest_disagrees_with_library),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
