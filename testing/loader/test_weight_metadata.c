/*
 * test_weight_metadata.c: the pure checks of aot_loader/method_weights.h:
 * manifest constants against an in-memory list of library constants and
 * against a safetensors file, and the blob size. Every message is asserted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/method_weights.h"
#include "testing/loader/test_weight_fixture.h"

static void expect_library_error(weight_fixture *f, const char *message) {
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_check_library(
                       f->forward, f->lib.infos, f->lib.num_infos, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, message);
  weight_fixture_free(f);
}

static void test_library_matches(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_check_library(
                       f->forward, f->lib.infos, f->lib.num_infos, &err),
                   AOTRUN_OK);
  /* A library that cannot tell types or FQNs is not a mismatch. */
  weight_fixture_lib_constant(f, "weight")->type = 0;
  weight_fixture_lib_constant(f, "bias")->fqn = "";
  weight_fixture_lib_constant(f, "calls")->fqn = NULL;
  assert_int_equal(aotrun_method_weights_check_library(
                       f->forward, f->lib.infos, f->lib.num_infos, &err),
                   AOTRUN_OK);
  weight_fixture_free(f);
}

static void test_library_dtype(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "scale64")->dtype = 6;
  expect_library_error(f, "malformed FQN weight metadata: constant 'scale64' "
                       "(fqn 'scale'): dtype float64 in the manifest, float32 "
                       "in the library (method 'forward')");
  f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "weight")->dtype = 26; /* float8_e4m3fnuz */
  expect_library_error(f, "malformed FQN weight metadata: constant 'weight' "
                       "(fqn 'lin.weight'): dtype float32 in the manifest, "
                       "ScalarType 26 in the library (method 'forward')");
}

static void test_library_size(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "bias")->data_size = 16;
  expect_library_error(f, "malformed FQN weight metadata: constant 'bias' "
                       "(fqn 'lin.bias'): nbytes 12 in the manifest, 16 in "
                       "the library (method 'forward')");
}

static void test_library_fqn_and_type(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "bias")->fqn = "linear.bias";
  expect_library_error(f, "malformed FQN weight metadata: constant 'bias': "
                       "fqn 'lin.bias' in the manifest, 'linear.bias' in the "
                       "library (method 'forward')");
  f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "calls")->type = 1;
  expect_library_error(f, "malformed FQN weight metadata: constant 'calls' "
                       "(fqn 'calls'): type buffer in the manifest, parameter "
                       "in the library (method 'forward')");
}

static void test_library_counts(void **state) {
  (void)state;
  /* The library has a constant the manifest lacks. */
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  f->lib.infos[f->lib.num_infos++] =
      (aotrun_constant_info){"extra", "extra", 6, 2, 4, 0};
  expect_library_error(f, "malformed FQN weight metadata: the manifest lists "
                       "4 constants, the library 5 (not counting folded "
                       "ones): the library's constant 5 'extra' (fqn 'extra') "
                       "is not in the manifest (method 'forward')");
  /* The manifest lists a constant the library folded. */
  f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "bias")->from_folded = 1;
  expect_library_error(f, "malformed FQN weight metadata: the manifest lists "
                       "4 constants, the library 3 (not counting folded "
                       "ones): constant 'bias' (fqn 'lin.bias') is not a "
                       "non-folded constant of the library (method "
                       "'forward')");
  /* The library has no constants at all. */
  f = weight_fixture_new(NULL, NULL);
  f->lib.num_infos = 0;
  expect_library_error(f, "malformed FQN weight metadata: the manifest lists "
                       "4 constants, the library 0 (not counting folded "
                       "ones): constant 'weight' (fqn 'lin.weight') is not a "
                       "non-folded constant of the library (method "
                       "'forward')");
}

static void test_library_names_and_order(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_constant_info tmp = f->lib.infos[0];
  f->lib.infos[0] = f->lib.infos[1];
  f->lib.infos[1] = tmp;
  expect_library_error(f, "malformed FQN weight metadata: constant order "
                       "differs: the library's constant 0 is 'bias', which "
                       "the manifest lists at position 1 (it lists 'weight' "
                       "at position 0) (method 'forward')");
  f = weight_fixture_new(NULL, NULL);
  weight_fixture_lib_constant(f, "calls")->name = "counter";
  expect_library_error(f, "malformed FQN weight metadata: the library's "
                       "constant 4 is 'counter', the manifest lists 'calls' "
                       "(fqn 'calls') there and has no 'counter' (method "
                       "'forward')");
  f = weight_fixture_new(NULL, NULL);
  f->lib.infos[3].name = NULL;
  expect_library_error(f, "malformed FQN weight metadata: the library's "
                       "constant 3 has no name (method 'forward')");
}

static void expect_weights_error(weight_fixture *f, const char *message) {
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_check_weights(f->forward, f->weights,
                                                       &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, message);
  weight_fixture_free(f);
}

static void test_weights_file(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_check_weights(f->forward, f->weights,
                                                       &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_method_weights_check_weights(f->forward, NULL,
                                                       &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "malformed FQN weight metadata: the method "
                      "has 4 constants but no weights file (method "
                      "'forward')");
  /* decode has constants too; a method without any needs no file. */
  assert_int_equal(aotrun_method_weights_check_weights(
                       &f->program->methods[1], f->weights, &err),
                   AOTRUN_OK);
  weight_fixture_free(f);

  f = weight_fixture_new("methods.forward.constants.1.fqn", "\"lin.b\"");
  expect_weights_error(f, "malformed FQN weight metadata: constant 'bias' "
                       "(fqn 'lin.b'): no entry 'lin.b' in "
                       "'weights.safetensors' (method 'forward')");
  f = weight_fixture_new("methods.forward.constants.3.dtype", "\"int32\"");
  expect_weights_error(f, "malformed FQN weight metadata: constant 'calls' "
                       "(fqn 'calls'): dtype int32 in the manifest, float32 "
                       "in 'weights.safetensors' (method 'forward')");
  /* A storage larger than the file's entry (the view still fits it). */
  f = weight_fixture_new("methods.forward.constants.0.nbytes", "52");
  expect_weights_error(f, "malformed FQN weight metadata: constant 'weight' "
                       "(fqn 'lin.weight'): nbytes 52 in the manifest, 48 in "
                       "'weights.safetensors' (method 'forward')");
}

static void test_blob_size(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  uint64_t size = 0;
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_blob_size(f->forward, 0, &size, &err),
                   AOTRUN_OK);
  assert_int_equal(size, 48 + 12 + 8 + 4);
  assert_int_equal(aotrun_method_weights_blob_size(f->forward, 1, &size, &err),
                   AOTRUN_OK);
  assert_int_equal(size, 4 * 64);
  weight_fixture_free(f);
  /* 64-byte multiples are not padded further. */
  f = weight_fixture_new("methods.forward.constants.0.nbytes", "128");
  assert_int_equal(aotrun_method_weights_blob_size(f->forward, 1, &size, &err),
                   AOTRUN_OK);
  assert_int_equal(size, 128 + 3 * 64);
  weight_fixture_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_library_matches),
      cmocka_unit_test(test_library_dtype),
      cmocka_unit_test(test_library_size),
      cmocka_unit_test(test_library_fqn_and_type),
      cmocka_unit_test(test_library_counts),
      cmocka_unit_test(test_library_names_and_order),
      cmocka_unit_test(test_weights_file),
      cmocka_unit_test(test_blob_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
