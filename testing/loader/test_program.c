/*
 * test_program.c: manifest.json parsing (aot_loader/program.h): a valid
 * program read field by field, and every malformed top-level, method, input
 * and output case with its exact message. Constants: test_program_constants.c.
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

static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,"
    " \"producer\": \"aotrun-export 0.1 (torch 2.11.0)\","
    " \"weights\": \"weights.safetensors\", \"future_key\": [1, 2],"
    " \"methods\": {"
    "  \"forward\": {\"library\": \"forward.so\","
    "   \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\","
    "                 \"shape\": [\"s0\", 16]},"
    "                {\"name\": \"mask\", \"dtype\": \"bool\", \"shape\": []}],"
    "   \"outputs\": [{\"name\": \"out0\", \"dtype\": \"float64\","
    "                  \"shape\": [\"s0\", 8]}],"
    "   \"constants\": [{\"name\": \"l1_weight\", \"fqn\": \"l1.weight\","
    "     \"type\": \"parameter\", \"dtype\": \"float32\", \"device\": \"cuda\","
    "     \"sizes\": [32, 16], \"strides\": [16, 1], \"storage_offset\": 0,"
    "     \"nbytes\": 2048}]},"
    "  \"decode\": {\"library\": \"decode.so\", \"inputs\": [],"
    "   \"outputs\": [{\"name\": \"tok\", \"dtype\": \"int64\","
    "                  \"shape\": [1]}]}}}";

/* Parses an exact-size copy of json (no NUL terminator). */
static aotrun_status parse(const char *json, aotrun_program **out,
                           aotrun_error *err) {
  size_t n = strlen(json);
  void *copy = exact_copy(json, n);
  aotrun_status s = aotrun_program_parse(copy, n, out, err);
  free(copy);
  return s;
}

static void expect_error(const char *json, aotrun_status code,
                         const char *message) {
  aotrun_program *p = (aotrun_program *)0x1;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), code);
  assert_null(p);
  assert_int_equal(err.code, code);
  assert_string_equal(err.message, message);
}

/* kManifest with one field replaced (value NULL: removed), must fail. */
static void expect_edit_error(const char *path, const char *value,
                              const char *message) {
  char *json = json_with(kManifest, path, value);
  expect_error(json, AOTRUN_ERR_INVALID_ARGUMENT, message);
  free(json);
}

static void test_valid_manifest(void **state) {
  (void)state;
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(kManifest, &p, &err), AOTRUN_OK);
  assert_int_equal(p->format_version, 1);
  assert_string_equal(p->producer, "aotrun-export 0.1 (torch 2.11.0)");
  assert_string_equal(p->weights, "weights.safetensors");
  assert_int_equal(p->num_methods, 2);

  const aotrun_program_method *m = &p->methods[0];
  assert_string_equal(m->name, "forward");
  assert_string_equal(m->library, "forward.so");
  assert_int_equal(m->num_inputs, 2);
  assert_string_equal(m->inputs[0].name, "x");
  assert_int_equal(m->inputs[0].dtype, 6);
  assert_int_equal(m->inputs[0].ndim, 2);
  assert_int_equal(m->inputs[0].dims[0], -1);
  assert_string_equal(m->inputs[0].symbols[0], "s0");
  assert_int_equal(m->inputs[0].dims[1], 16);
  assert_null(m->inputs[0].symbols[1]);
  assert_int_equal(m->inputs[1].dtype, 11);
  assert_int_equal(m->inputs[1].ndim, 0);
  assert_int_equal(m->num_outputs, 1);
  assert_int_equal(m->outputs[0].dtype, 7);
  assert_string_equal(m->outputs[0].symbols[0], "s0");
  assert_int_equal(m->outputs[0].dims[1], 8);

  assert_int_equal(m->num_constants, 1);
  const aotrun_program_constant *c = &m->constants[0];
  assert_string_equal(c->name, "l1_weight");
  assert_string_equal(c->fqn, "l1.weight");
  assert_int_equal(c->type, AOTRUN_CONSTANT_TYPE_PARAMETER);
  assert_int_equal(c->dtype, 6);
  assert_int_equal(c->device_type, AOTRUN_DEVICE_TYPE_CUDA);
  assert_int_equal(c->ndim, 2);
  assert_int_equal(c->sizes[0], 32);
  assert_int_equal(c->sizes[1], 16);
  assert_int_equal(c->strides[0], 16);
  assert_int_equal(c->strides[1], 1);
  assert_int_equal(c->storage_offset, 0);
  assert_int_equal(c->nbytes, 2048);

  const aotrun_program_method *d = &p->methods[1];
  assert_string_equal(d->name, "decode");
  assert_int_equal(d->num_inputs, 0);
  assert_int_equal(d->num_constants, 0);
  assert_int_equal(d->outputs[0].dtype, 4);

  const aotrun_program_method *found = NULL;
  assert_int_equal(aotrun_program_find_method(p, "decode", &found, &err),
                   AOTRUN_OK);
  assert_ptr_equal(found, d);
  aotrun_program_destroy(p);
}

static void test_optional_fields(void **state) {
  (void)state;
  /* No producer, no weights, no constants anywhere: valid. */
  char *a = json_with(kManifest, "methods.forward.constants", NULL);
  char *b = json_with(a, "weights", NULL);
  char *c = json_with(b, "producer", NULL);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(c, &p, &err), AOTRUN_OK);
  assert_null(p->producer);
  assert_null(p->weights);
  assert_int_equal(p->methods[0].num_constants, 0);
  aotrun_program_destroy(p);
  free(a);
  free(b);
  free(c);
}

static void test_method_not_found(void **state) {
  (void)state;
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(kManifest, &p, &err), AOTRUN_OK);
  const aotrun_program_method *m = (const aotrun_program_method *)0x1;
  assert_int_equal(aotrun_program_find_method(p, "prefill", &m, &err),
                   AOTRUN_ERR_NOT_FOUND);
  assert_null(m);
  assert_string_equal(err.message,
                      "method 'prefill' not found in the program; available "
                      "methods: 'forward', 'decode'");
  aotrun_program_destroy(p);
}

static void test_not_json(void **state) {
  (void)state;
  expect_error("", AOTRUN_ERR_INVALID_ARGUMENT,
               "malformed manifest: empty (0 bytes), not JSON");
  expect_error("{\"format\": ", AOTRUN_ERR_INVALID_ARGUMENT,
               "malformed manifest: not valid JSON (error at byte 10 of 11)");
  expect_error("{} {}", AOTRUN_ERR_INVALID_ARGUMENT,
               "malformed manifest: not valid JSON (unexpected data at byte 3 "
               "of 5 after the value)");
  expect_error("[1, 2]", AOTRUN_ERR_INVALID_ARGUMENT,
               "malformed manifest: the top level must be an object, found "
               "an array");
}

static void test_format_fields(void **state) {
  (void)state;
  expect_edit_error("format", NULL, "malformed manifest: missing field "
                    "'format'");
  expect_edit_error("format", "\"executorch\"", "malformed manifest: field "
                    "'format' is 'executorch', expected 'aotrun-program'");
  expect_edit_error("format", "7", "malformed manifest: field 'format' must "
                    "be a string, found number 7");
  expect_edit_error("format_version", NULL, "malformed manifest: missing "
                    "field 'format_version'");
  expect_edit_error("format_version", "\"1\"", "malformed manifest: field "
                    "'format_version' must be an integer, found string '1'");
  expect_edit_error("format_version", "1.5", "malformed manifest: field "
                    "'format_version' is 1.5, not an integer");
  expect_edit_error("format_version", "0", "malformed manifest: field "
                    "'format_version' is 0, must be at least 1");
  expect_edit_error("producer", "[]", "malformed manifest: field 'producer' "
                    "must be a string, found an array");
}

static void test_format_version_too_new(void **state) {
  (void)state;
  char *json = json_with(kManifest, "format_version", "2");
  expect_error(json, AOTRUN_ERR_NOT_SUPPORTED,
               "malformed manifest: format_version 2 is newer than this "
               "loader supports (1)");
  free(json);
}

static void test_weights_field(void **state) {
  (void)state;
  expect_edit_error("weights", NULL, "malformed manifest: field 'weights' is "
                    "missing, but method 'forward' has 1 constants");
  expect_edit_error("weights", "\"../w.safetensors\"", "malformed manifest: "
                    "field 'weights' is '../w.safetensors', must be a plain "
                    "file name (no '/', not '.' or '..')");
  expect_edit_error("weights", "\"\"", "malformed manifest: field 'weights' "
                    "is an empty string");
}

static void test_methods_field(void **state) {
  (void)state;
  expect_edit_error("methods", NULL, "malformed manifest: missing field "
                    "'methods'");
  expect_edit_error("methods", "{}", "malformed manifest: field 'methods' "
                    "has no method");
  expect_edit_error("methods", "[]", "malformed manifest: field 'methods' "
                    "must be an object, found an array");
  expect_edit_error("methods.forward", "true", "malformed manifest: method "
                    "'forward': must be an object, found true");
  expect_edit_error("methods.", "{}", "malformed manifest: a method has an "
                    "empty name");
  /* cJSON keeps both of two equal keys. */
  expect_error("{\"format\": \"aotrun-program\", \"format_version\": 1,"
               " \"methods\": {\"f\": {\"library\": \"a.so\", \"inputs\": [],"
               " \"outputs\": []}, \"f\": {\"library\": \"b.so\", \"inputs\":"
               " [], \"outputs\": []}}}",
               AOTRUN_ERR_INVALID_ARGUMENT,
               "malformed manifest: method 'f' is defined twice");
}

static void test_library_field(void **state) {
  (void)state;
  expect_edit_error("methods.forward.library", NULL, "malformed manifest: "
                    "method 'forward': missing field 'library'");
  expect_edit_error("methods.forward.library", "\"lib/forward.so\"",
                    "malformed manifest: method 'forward': field 'library' "
                    "is 'lib/forward.so', must be a plain file name (no '/', "
                    "not '.' or '..')");
  expect_edit_error("methods.decode.library", "\"..\"",
                    "malformed manifest: method 'decode': field 'library' is "
                    "'..', must be a plain file name (no '/', not '.' or "
                    "'..')");
  expect_edit_error("methods.forward.library", "null", "malformed manifest: "
                    "method 'forward': field 'library' must be a string, "
                    "found null");
}

static void test_io_fields(void **state) {
  (void)state;
  expect_edit_error("methods.forward.inputs", NULL, "malformed manifest: "
                    "method 'forward': missing field 'inputs'");
  expect_edit_error("methods.decode.outputs", "{}", "malformed manifest: "
                    "method 'decode': field 'outputs' must be an array, "
                    "found an object");
  expect_edit_error("methods.forward.inputs.1", "\"x\"", "malformed "
                    "manifest: method 'forward': input 1: must be an object, "
                    "found string 'x'");
  expect_edit_error("methods.forward.inputs.0.name", NULL, "malformed "
                    "manifest: method 'forward': input 0: missing field "
                    "'name'");
  expect_edit_error("methods.forward.inputs.0.dtype", "\"float33\"",
                    "malformed manifest: method 'forward': input 0 ('x'): "
                    "field 'dtype' is 'float33', not a known dtype (float32, "
                    "float64, int64, ...; see docs/program-format.md)");
  expect_edit_error("methods.forward.outputs.0.dtype", NULL, "malformed "
                    "manifest: method 'forward': output 0 ('out0'): missing "
                    "field 'dtype'");
  expect_edit_error("methods.forward.inputs.0.shape", "\"s0\"", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape' must be an array, found string 's0'");
}

static void test_shape_items(void **state) {
  (void)state;
  expect_edit_error("methods.forward.inputs.0.shape.1", "-16", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape[1]' is -16, must be at least 0");
  expect_edit_error("methods.forward.inputs.0.shape.1", "2.5", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape[1]' is 2.5, not an integer");
  expect_edit_error("methods.forward.inputs.0.shape.0", "\"\"", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape[0]' is an empty symbol name");
  expect_edit_error("methods.forward.outputs.0.shape.1", "false", "malformed "
                    "manifest: method 'forward': output 0 ('out0'): field "
                    "'shape[1]' must be an integer or a symbol name, found "
                    "false");
  expect_edit_error("methods.forward.inputs.0.shape.0", "1e300", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape[0]' is 1.0000000000000001e+300, larger than "
                    "2^53");
  expect_edit_error("methods.forward.inputs.0.shape",
                    "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "malformed "
                    "manifest: method 'forward': input 0 ('x'): field "
                    "'shape' has 17 dims, at most 16 are supported");
}

static void test_every_dtype_name(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int code;
  } kNames[] = {{"uint8", 0},     {"int8", 1},          {"int16", 2},
                {"int32", 3},     {"int64", 4},         {"float16", 5},
                {"float32", 6},   {"float64", 7},       {"complex64", 9},
                {"bool", 11},     {"bfloat16", 15},     {"float8_e5m2", 23},
                {"float8_e4m3fn", 24}, {"uint16", 27},  {"uint32", 28},
                {"uint64", 29}};
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; i++) {
    char value[40];
    snprintf(value, sizeof value, "\"%s\"", kNames[i].name);
    char *json = json_with(kManifest, "methods.decode.outputs.0.dtype", value);
    aotrun_program *p = NULL;
    aotrun_error err = {0};
    assert_int_equal(parse(json, &p, &err), AOTRUN_OK);
    assert_int_equal(p->methods[1].outputs[0].dtype, kNames[i].code);
    aotrun_program_destroy(p);
    free(json);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_manifest),
      cmocka_unit_test(test_optional_fields),
      cmocka_unit_test(test_method_not_found),
      cmocka_unit_test(test_not_json),
      cmocka_unit_test(test_format_fields),
      cmocka_unit_test(test_format_version_too_new),
      cmocka_unit_test(test_weights_field),
      cmocka_unit_test(test_methods_field),
      cmocka_unit_test(test_library_field),
      cmocka_unit_test(test_io_fields),
      cmocka_unit_test(test_shape_items),
      cmocka_unit_test(test_every_dtype_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
