/*
 * test_program_constants.c: the FQN weight metadata of a manifest
 * (aot_loader/program.h): valid layouts (strided, offset, empty, scalar) and
 * every malformed case with its exact "malformed FQN weight metadata" text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/program.h"
#include "testing/loader/test_program_json.h"

#define C0 "methods.forward.constants.0."

static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,"
    " \"weights\": \"weights.safetensors\", \"methods\": {"
    "  \"forward\": {\"library\": \"forward.so\", \"inputs\": [],"
    "   \"outputs\": [], \"constants\": ["
    "    {\"name\": \"l1_weight\", \"fqn\": \"l1.weight\","
    "     \"type\": \"parameter\", \"dtype\": \"float32\", \"device\": \"cuda\","
    "     \"sizes\": [32, 16], \"strides\": [16, 1], \"storage_offset\": 0,"
    "     \"nbytes\": 2048},"
    "    {\"name\": \"pred\", \"fqn\": \"pred\", \"type\": \"buffer\","
    "     \"dtype\": \"bool\", \"device\": \"cpu\", \"sizes\": [],"
    "     \"strides\": [], \"storage_offset\": 0, \"nbytes\": 1}]}}}";

static aotrun_status parse(const char *json, aotrun_program **out,
                           aotrun_error *err) {
  size_t n = strlen(json);
  void *copy = exact_copy(json, n);
  aotrun_status s = aotrun_program_parse(copy, n, out, err);
  free(copy);
  return s;
}

/* kManifest with constant 0's `field` set to value (NULL: removed). */
static void expect_error(const char *field, const char *value,
                         const char *message) {
  char path[128];
  snprintf(path, sizeof path, C0 "%s", field);
  char *json = json_with(kManifest, path, value);
  aotrun_program *p = (aotrun_program *)0x1;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(err.message, message);
  free(json);
}

/* Applies up to three edits to constant 0 and expects success. */
static aotrun_program *parse_edited(const char *f1, const char *v1,
                                    const char *f2, const char *v2,
                                    const char *f3, const char *v3) {
  const char *fields[3] = {f1, f2, f3}, *values[3] = {v1, v2, v3};
  char *json = strdup(kManifest);
  for (int i = 0; i < 3 && fields[i] != NULL; i++) {
    char path[128];
    snprintf(path, sizeof path, C0 "%s", fields[i]);
    char *next = json_with(json, path, values[i]);
    free(json);
    json = next;
  }
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  aotrun_status s = parse(json, &p, &err);
  if (s != AOTRUN_OK) print_message("unexpected error: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  free(json);
  return p;
}

static void test_valid_constants(void **state) {
  (void)state;
  aotrun_program *p = parse_edited(NULL, NULL, NULL, NULL, NULL, NULL);
  const aotrun_program_constant *c = &p->methods[0].constants[1];
  assert_string_equal(c->name, "pred");
  assert_int_equal(c->type, AOTRUN_CONSTANT_TYPE_BUFFER);
  assert_int_equal(c->dtype, 11);
  assert_int_equal(c->device_type, AOTRUN_DEVICE_TYPE_CPU);
  assert_int_equal(c->ndim, 0);
  assert_int_equal(c->nbytes, 1);
  aotrun_program_destroy(p);
}

static void test_valid_views(void **state) {
  (void)state;
  /* Transposed view with an offset: span 1 + 15*1 + 31*16 = 512, + 8 = 520
   * elements = 2080 bytes. */
  aotrun_program *p = parse_edited("strides", "[1, 32]", "storage_offset",
                                   "8", "nbytes", "2080");
  assert_int_equal(p->methods[0].constants[0].strides[1], 32);
  assert_int_equal(p->methods[0].constants[0].storage_offset, 8);
  aotrun_program_destroy(p);
  /* A size-0 dim: no elements, 0 bytes needed whatever the offset. */
  p = parse_edited("sizes", "[0, 16]", "storage_offset", "100", "nbytes", "0");
  assert_int_equal(p->methods[0].constants[0].sizes[0], 0);
  aotrun_program_destroy(p);
  /* Storage larger than the view (a slice of a bigger tensor). */
  p = parse_edited("nbytes", "4096", NULL, NULL, NULL, NULL);
  aotrun_program_destroy(p);
  /* Types and a float64 constant. */
  p = parse_edited("type", "\"tensor_constant\"", "dtype", "\"float64\"",
                   "nbytes", "4096");
  assert_int_equal(p->methods[0].constants[0].type,
                   AOTRUN_CONSTANT_TYPE_TENSOR_CONSTANT);
  assert_int_equal(p->methods[0].constants[0].dtype, 7);
  aotrun_program_destroy(p);
  p = parse_edited("type", "\"unknown\"", NULL, NULL, NULL, NULL);
  assert_int_equal(p->methods[0].constants[0].type,
                   AOTRUN_CONSTANT_TYPE_UNKNOWN);
  aotrun_program_destroy(p);
}

static void test_nbytes_not_multiple(void **state) {
  (void)state;
  expect_error("nbytes", "2050", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): nbytes 2050 is not a multiple "
               "of float32 size 4 (method 'forward')");
}

static void test_missing_fields(void **state) {
  (void)state;
  expect_error("name", NULL, "malformed FQN weight metadata: constant 0: "
               "missing field 'name' (method 'forward')");
  expect_error("fqn", NULL, "malformed FQN weight metadata: constant "
               "'l1_weight': missing field 'fqn' (method 'forward')");
  static const char *kFields[] = {"type",    "dtype",          "device",
                                  "sizes",   "strides",        "storage_offset",
                                  "nbytes"};
  for (size_t i = 0; i < sizeof kFields / sizeof kFields[0]; i++) {
    char message[256];
    snprintf(message, sizeof message, "malformed FQN weight metadata: "
             "constant 'l1_weight' (fqn 'l1.weight'): missing field '%s' "
             "(method 'forward')", kFields[i]);
    expect_error(kFields[i], NULL, message);
  }
}

static void test_wrong_types(void **state) {
  (void)state;
  expect_error("name", "3", "malformed FQN weight metadata: constant 0: field "
               "'name' must be a string, found number 3 (method 'forward')");
  expect_error("fqn", "\"\"", "malformed FQN weight metadata: constant "
               "'l1_weight': field 'fqn' is an empty string (method "
               "'forward')");
  expect_error("type", "\"weight\"", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): field 'type' is 'weight', "
               "expected 'parameter', 'buffer', 'tensor_constant' or "
               "'unknown' (method 'forward')");
  expect_error("dtype", "\"F32\"", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): field 'dtype' is 'F32', not a "
               "known dtype (float32, float64, int64, ...; see "
               "docs/program-format.md) (method 'forward')");
  expect_error("device", "\"cuda:0\"", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field 'device' is "
               "'cuda:0', expected 'cuda' or 'cpu' (method 'forward')");
  expect_error("sizes", "{}", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): field 'sizes' must be an "
               "array, found an object (method 'forward')");
  expect_error("strides", "[16, \"1\"]", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field 'strides[1]' "
               "must be an integer, found string '1' (method 'forward')");
  expect_error("nbytes", "2048.5", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): field 'nbytes' is 2048.5, not "
               "an integer (method 'forward')");
  expect_error("storage_offset", "null", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field "
               "'storage_offset' must be an integer, found null (method "
               "'forward')");
  char *json = json_with(kManifest, "methods.forward.constants", "{}");
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "malformed manifest: method 'forward': "
                      "field 'constants' must be an array, found an object");
  free(json);
  json = json_with(kManifest, "methods.forward.constants.1", "[]");
  assert_int_equal(parse(json, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "malformed FQN weight metadata: constant "
                      "1: must be an object, found an array (method "
                      "'forward')");
  free(json);
}

static void test_negative_values(void **state) {
  (void)state;
  expect_error("sizes", "[32, -16]", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field 'sizes[1]' is "
               "-16, must be at least 0 (method 'forward')");
  expect_error("strides", "[-16, 1]", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field 'strides[0]' is "
               "-16, must be at least 0 (method 'forward')");
  expect_error("storage_offset", "-1", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): field "
               "'storage_offset' is -1, must be at least 0 (method "
               "'forward')");
  expect_error("nbytes", "-4", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): field 'nbytes' is -4, must be "
               "at least 0 (method 'forward')");
}

static void test_strides_sizes_length(void **state) {
  (void)state;
  expect_error("strides", "[1]", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): 'strides' has 1 entries, "
               "'sizes' has 2 (method 'forward')");
  expect_error("sizes", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "malformed FQN "
               "weight metadata: constant 'l1_weight' (fqn 'l1.weight'): "
               "field 'sizes' has 17 dims, at most 16 are supported (method "
               "'forward')");
}

static void test_view_does_not_fit(void **state) {
  (void)state;
  expect_error("nbytes", "2044", "malformed FQN weight metadata: constant "
               "'l1_weight' (fqn 'l1.weight'): the view (sizes [32, 16], "
               "strides [16, 1], storage_offset 0) needs 2048 bytes, nbytes "
               "is 2044 (method 'forward')");
  expect_error("storage_offset", "1", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): the view (sizes [32, "
               "16], strides [16, 1], storage_offset 1) needs 2052 bytes, "
               "nbytes is 2048 (method 'forward')");
  expect_error("strides", "[17, 1]", "malformed FQN weight metadata: "
               "constant 'l1_weight' (fqn 'l1.weight'): the view (sizes [32, "
               "16], strides [17, 1], storage_offset 0) needs 2172 bytes, "
               "nbytes is 2048 (method 'forward')");
}

static void test_overflow(void **state) {
  (void)state;
  /* 2^62 cannot be read exactly from JSON: refused by value. */
  expect_error("sizes", "[4611686018427387904, 1]", "malformed FQN weight "
               "metadata: constant 'l1_weight' (fqn 'l1.weight'): field "
               "'sizes[0]' is 4.6116860184273879e+18, larger than 2^53 "
               "(method 'forward')");
  /* Large but exact: 1 + (2^40 - 1) * 16 + 15 = 2^44 elements, 2^46 bytes. */
  expect_error("sizes", "[1099511627776, 16]", "malformed FQN weight "
               "metadata: constant 'l1_weight' (fqn 'l1.weight'): the view "
               "(sizes [1099511627776, 16], strides [16, 1], storage_offset "
               "0) needs 70368744177664 bytes, nbytes is 2048 (method "
               "'forward')");
}

static void expect_overflow(const char *sizes, const char *strides,
                            const char *dtype, const char *message) {
  char *a = json_with(kManifest, C0 "sizes", sizes);
  char *b = json_with(a, C0 "strides", strides);
  char *c = json_with(b, C0 "dtype", dtype);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(c, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(err.message, message);
  free(a);
  free(b);
  free(c);
}

static void test_overflow_64_bits(void **state) {
  (void)state;
  /* (2^40 - 1) * 2^40 overflows in the span. */
  expect_overflow("[1099511627776, 1099511627776]", "[1099511627776, 1]",
                  "\"float32\"", "malformed FQN weight metadata: constant "
                  "'l1_weight' (fqn 'l1.weight'): the view (sizes "
                  "[1099511627776, 1099511627776], strides [1099511627776, "
                  "1], storage_offset 0) overflows 64 bits (method "
                  "'forward')");
  /* The span (about 2^62 elements) fits; times 8 bytes it does not. */
  expect_overflow("[1024, 1]", "[4503599627370496, 1]", "\"float64\"",
                  "malformed FQN weight metadata: constant 'l1_weight' (fqn "
                  "'l1.weight'): the view (sizes [1024, 1], strides "
                  "[4503599627370496, 1], storage_offset 0) overflows 64 "
                  "bits (method 'forward')");
}

static void test_duplicate_names(void **state) {
  (void)state;
  char *json = json_with(kManifest, "methods.forward.constants.1.name",
                         "\"l1_weight\"");
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "malformed FQN weight metadata: constant "
                      "'l1_weight' (fqn 'pred'): the name is used by "
                      "constants 0 and 1 (method 'forward')");
  free(json);
  /* Two constants may share one FQN (they share its bytes). */
  json = json_with(kManifest, "methods.forward.constants.1.fqn",
                   "\"l1.weight\"");
  assert_int_equal(parse(json, &p, &err), AOTRUN_OK);
  aotrun_program_destroy(p);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_constants),
      cmocka_unit_test(test_valid_views),
      cmocka_unit_test(test_nbytes_not_multiple),
      cmocka_unit_test(test_missing_fields),
      cmocka_unit_test(test_wrong_types),
      cmocka_unit_test(test_negative_values),
      cmocka_unit_test(test_strides_sizes_length),
      cmocka_unit_test(test_view_does_not_fit),
      cmocka_unit_test(test_overflow),
      cmocka_unit_test(test_overflow_64_bits),
      cmocka_unit_test(test_duplicate_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
