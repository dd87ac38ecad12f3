/*
 * test_program_dims.c: dynamic-dim ranges in the manifest (a method's
 * "symbols", an input's "dims"; aot_loader/program_dims.c) and the check
 * of a call's inputs against them (aot_loader/dim_ranges.h): good, bad,
 * missing and limits, each with its exact message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/dim_ranges.h"
#include "aot_loader/program.h"
#include "testing/loader/test_program_json.h"

/* x [s0, 4], y [2*s0, 4], z [s0 + 1], w [s1] (s1 unbounded above). */
static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,"
    " \"methods\": {\"forward\": {\"library\": \"forward.so\","
    "  \"symbols\": {\"s0\": {\"min\": 1, \"max\": 1024, \"hint\": 4},"
    "               \"s1\": {\"min\": 2, \"max\": null}},"
    "  \"inputs\": ["
    "   {\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"s0\", 4]},"
    "   {\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [\"2*s0\", 4],"
    "    \"dims\": [{\"symbol\": \"s0\", \"scale\": 2}, null]},"
    "   {\"name\": \"z\", \"dtype\": \"int64\", \"shape\": [\"s0 + 1\"],"
    "    \"dims\": [{\"symbol\": \"s0\", \"scale\": 1, \"offset\": 1}]},"
    "   {\"name\": \"w\", \"dtype\": \"int64\", \"shape\": [\"s1\"]}],"
    "  \"outputs\": [{\"name\": \"o\", \"dtype\": \"float32\","
    "                 \"shape\": [\"s0\", 4]}]}}}";

static aotrun_status parse(const char *json, aotrun_program **out,
                           aotrun_error *err) {
  size_t n = strlen(json);
  void *copy = exact_copy(json, n);
  aotrun_status s = aotrun_program_parse(copy, n, out, err);
  free(copy);
  return s;
}

static void expect_edit_error(const char *path, const char *value,
                              const char *message) {
  char *json = json_with(kManifest, path, value);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(err.message, message);
  free(json);
}

static void test_valid_ranges(void **state) {
  (void)state;
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(kManifest, &p, &err), AOTRUN_OK);
  const aotrun_program_method *m = &p->methods[0];
  assert_int_equal(m->num_symbols, 2);
  assert_string_equal(m->symbols[0].name, "s0");
  assert_int_equal(m->symbols[0].min, 1);
  assert_int_equal(m->symbols[0].max, 1024);
  assert_int_equal(m->symbols[0].hint, 4);
  assert_string_equal(m->symbols[1].name, "s1");
  assert_int_equal(m->symbols[1].min, 2);
  assert_true(m->symbols[1].max == AOTRUN_PROGRAM_NO_MAX);
  assert_int_equal(m->symbols[1].hint, -1); /* none given */
  /* x's "s0" is the symbol itself (no "dims" needed). */
  assert_int_equal(m->inputs[0].exprs[0].symbol, 0);
  assert_int_equal(m->inputs[0].exprs[0].scale, 1);
  assert_int_equal(m->inputs[0].exprs[1].symbol, -1); /* static 4 */
  assert_int_equal(m->inputs[1].exprs[0].scale, 2);
  assert_int_equal(m->inputs[1].exprs[0].offset, 0);
  assert_int_equal(m->inputs[2].exprs[0].offset, 1);
  assert_int_equal(m->inputs[3].exprs[0].symbol, 1);
  assert_int_equal(m->outputs[0].exprs[0].symbol, -1); /* outputs: none */
  char buf[64];
  assert_string_equal(aotrun_dim_expr_format(m, &m->inputs[1].exprs[0], buf,
                                             sizeof buf), "2*s0");
  assert_string_equal(aotrun_dim_expr_format(m, &m->inputs[2].exprs[0], buf,
                                             sizeof buf), "s0 + 1");
  aotrun_dim_expr e = {0, 3, -2};
  assert_string_equal(aotrun_dim_expr_format(m, &e, buf, sizeof buf),
                      "3*s0 - 2");
  aotrun_program_destroy(p);
}

/* Old manifests (no "symbols") load as before: no expressions. */
static void test_missing_ranges_load(void **state) {
  (void)state;
  char *json = json_with(kManifest, "methods.forward.symbols", NULL);
  char *json2 = json_with(json, "methods.forward.inputs.1.dims", NULL);
  char *json3 = json_with(json2, "methods.forward.inputs.2.dims", NULL);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json3, &p, &err), AOTRUN_OK);
  const aotrun_program_method *m = &p->methods[0];
  assert_int_equal(m->num_symbols, 0);
  for (size_t i = 0; i < m->num_inputs; i++)
    for (int d = 0; d < m->inputs[i].ndim; d++)
      assert_int_equal(m->inputs[i].exprs[d].symbol, -1);
  int64_t shape[2] = {5000, 4};
  DLTensor t = {0};
  t.ndim = 2;
  t.shape = shape;
  assert_int_equal(aotrun_dim_ranges_check(m, &t, 1, &err), AOTRUN_OK);
  aotrun_program_destroy(p);
  free(json);
  free(json2);
  free(json3);
}

static void test_bad_symbols(void **state) {
  (void)state;
  const char *m = "malformed manifest: method 'forward': ";
  char want[512];
#define EXPECT(path, value, msg)                         \
  snprintf(want, sizeof want, "%s%s", m, msg);           \
  expect_edit_error(path, value, want)
  EXPECT("methods.forward.symbols", "[1]",
         "field 'symbols' must be an object, found an array");
  EXPECT("methods.forward.symbols.s0", "5",
         "symbol 's0' must be an object, found number 5");
  EXPECT("methods.forward.symbols.s0", "{\"max\": 3}",
         "missing field 'symbols.s0.min'");
  EXPECT("methods.forward.symbols.s0", "{\"min\": -1}",
         "field 'symbols.s0.min' is -1, must be at least 0");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 1.5}",
         "field 'symbols.s0.min' is 1.5, not an integer");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 8, \"max\": 4}",
         "field 'symbols.s0.max' is 4, must be at least 8");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 1, \"max\": \"big\"}",
         "field 'symbols.s0.max' must be an integer, found string 'big'");
  EXPECT("methods.forward.symbols.s0",
         "{\"min\": 1, \"max\": 1e300}",
         "field 'symbols.s0.max' is 1.0000000000000001e+300, larger than "
         "2^53");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 2, \"max\": 8, \"hint\": 1}",
         "field 'symbols.s0.hint' is 1, must be at least 2");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 2, \"max\": 8, \"hint\": 9}",
         "field 'symbols.s0.hint' is 9, above the symbol's max 8");
  EXPECT("methods.forward.symbols.s0", "{\"min\": 2, \"hint\": \"4\"}",
         "field 'symbols.s0.hint' must be an integer, found string '4'");
#undef EXPECT
}

static void test_bad_dims(void **state) {
  (void)state;
  const char *m = "malformed manifest: method 'forward': input 1 ('y'): ";
  char want[512];
#define EXPECT(path, value, msg)                         \
  snprintf(want, sizeof want, "%s%s", m, msg);           \
  expect_edit_error(path, value, want)
  EXPECT("methods.forward.inputs.1.dims", "{}",
         "field 'dims' must be an array, found an object");
  EXPECT("methods.forward.inputs.1.dims", "[null]",
         "field 'dims' has 1 entries, field 'shape' 2");
  EXPECT("methods.forward.inputs.1.dims.1", "{\"symbol\": \"s0\"}",
         "field 'dims[1]' describes a static dim (shape[1] is 4); only "
         "symbolic dims have expressions");
  EXPECT("methods.forward.inputs.1.dims.0", "7",
         "field 'dims[0]' must be an object or null, found number 7");
  EXPECT("methods.forward.inputs.1.dims.0", "{\"scale\": 2}",
         "field 'dims[0].symbol' must be a symbol name, found nothing");
  EXPECT("methods.forward.inputs.1.dims.0", "{\"symbol\": \"s9\"}",
         "field 'dims[0].symbol' is 's9', not a key of the method's "
         "'symbols'");
  EXPECT("methods.forward.inputs.1.dims.0",
         "{\"symbol\": \"s0\", \"scale\": 0}",
         "field 'dims[0].scale' is 0, must be at least 1");
  EXPECT("methods.forward.inputs.1.dims.0",
         "{\"symbol\": \"s0\", \"offset\": 0.5}",
         "field 'dims[0].offset' is 0.5, not an integer");
  EXPECT("methods.forward.inputs.1.dims.0",
         /* exact through json_with's cJSON print (15 digits) */
         "{\"symbol\": \"s0\", \"scale\": 9e15, \"offset\": 9e15}",
         "field 'dims[0]': 9000000000000000*s0+9000000000000000 overflows "
         "a 64-bit size at s0 = 1024");
#undef EXPECT
}

static void test_duplicate_and_too_many_symbols(void **state) {
  (void)state;
  /* cJSON keeps both keys of {"s0": .., "s0": ..}. */
  const char *dup =
      "{\"format\": \"aotrun-program\", \"format_version\": 1,"
      " \"methods\": {\"f\": {\"library\": \"f.so\", \"inputs\": [],"
      " \"outputs\": [], \"symbols\": {\"s0\": {\"min\": 1},"
      " \"s0\": {\"min\": 2}}}}}";
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(dup, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "malformed manifest: method 'f': symbol 's0' is "
                      "defined twice in field 'symbols'");
  /* One over the limit. */
  size_t n = AOTRUN_PROGRAM_MAX_SYMBOLS + 1;
  size_t cap = 256 + n * 32;
  char *big = malloc(cap);
  size_t used = (size_t)snprintf(
      big, cap,
      "{\"format\": \"aotrun-program\", \"format_version\": 1, \"methods\":"
      " {\"f\": {\"library\": \"f.so\", \"inputs\": [], \"outputs\": [],"
      " \"symbols\": {");
  for (size_t i = 0; i < n; i++)
    used += (size_t)snprintf(big + used, cap - used,
                             "%s\"s%zu\": {\"min\": 0}", i ? "," : "", i);
  snprintf(big + used, cap - used, "}}}}");
  assert_int_equal(parse(big, &p, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "malformed manifest: method 'f': field 'symbols' has "
                      "4097 entries, at most 4096 are supported");
  free(big);
}

/* ---- the check at execute ---- */

typedef struct call {
  int64_t shape[4][2];
  DLTensor in[4];
} call;

/* x [n, 4], y [2n, 4], z [n + 1], w [s1]. */
static void make_call(call *c, int64_t n, int64_t w) {
  memset(c, 0, sizeof *c);
  int64_t shapes[4][2] = {{n, 4}, {2 * n, 4}, {n + 1, 0}, {w, 0}};
  int ndims[4] = {2, 2, 1, 1};
  memcpy(c->shape, shapes, sizeof shapes);
  for (int i = 0; i < 4; i++) {
    c->in[i].ndim = ndims[i];
    c->in[i].shape = c->shape[i];
  }
}

static void check_call(const aotrun_program_method *m, call *c,
                         const char *message) {
  aotrun_error err = {0};
  aotrun_status st = aotrun_dim_ranges_check(m, c->in, 4, &err);
  if (message == NULL) {
    assert_int_equal(st, AOTRUN_OK);
    return;
  }
  assert_int_equal(st, AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, message);
}

static void test_check_inputs(void **state) {
  (void)state;
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(kManifest, &p, &err), AOTRUN_OK);
  const aotrun_program_method *m = &p->methods[0];
  call c;
  make_call(&c, 1, 2);
  check_call(m, &c, NULL);
  make_call(&c, 1024, 1 << 30);
  check_call(m, &c, NULL);
  make_call(&c, 2000, 2);
  check_call(m, &c,
               "input 0 (x) has size 2000 in dim 0 (symbol s0), outside its "
               "range [1, 1024]");
  make_call(&c, 0, 2);
  check_call(m, &c,
               "input 0 (x) has size 0 in dim 0 (symbol s0), outside its "
               "range [1, 1024]");
  make_call(&c, 4, 2);
  c.shape[1][0] = 7;
  check_call(m, &c,
               "input 1 (y) has size 7 in dim 0, expected 8 (2*s0 with s0 = "
               "4 from input 0 (x) dim 0)");
  make_call(&c, 4, 2);
  c.shape[2][0] = 4;
  check_call(m, &c,
               "input 2 (z) has size 4 in dim 0, expected 5 (s0 + 1 with s0 "
               "= 4 from input 0 (x) dim 0)");
  make_call(&c, 4, 1);
  check_call(m, &c,
               "input 3 (w) has size 1 in dim 0 (symbol s1), outside its "
               "range [2, inf]");
  aotrun_program_destroy(p);
}

/* A symbol first seen through an expression is solved from it. */
static void test_check_expression_first(void **state) {
  (void)state;
  char *json = json_with(kManifest, "methods.forward.inputs.0", NULL);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_OK);
  const aotrun_program_method *m = &p->methods[0];
  int64_t ys[2] = {7, 4}, zs[1] = {4}, ws[1] = {2};
  DLTensor in[3] = {{0}};
  in[0].ndim = 2, in[0].shape = ys;
  in[1].ndim = 1, in[1].shape = zs;
  in[2].ndim = 1, in[2].shape = ws;
  assert_int_equal(aotrun_dim_ranges_check(m, in, 3, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 0 (y) has size 7 in dim 0, which is not 2*s0 "
                      "for any integer s0");
  ys[0] = 4000;
  assert_int_equal(aotrun_dim_ranges_check(m, in, 3, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 0 (y) has size 4000 in dim 0 (2*s0), outside "
                      "its range [2, 2048] (s0 in [1, 1024])");
  ys[0] = 0;
  assert_int_equal(aotrun_dim_ranges_check(m, in, 3, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 0 (y) has size 0 in dim 0 (2*s0), outside its "
                      "range [2, 2048] (s0 in [1, 1024])");
  ys[0] = 6; /* s0 = 3, so z must be 4 */
  assert_int_equal(aotrun_dim_ranges_check(m, in, 3, &err), AOTRUN_OK);
  aotrun_program_destroy(p);
  free(json);
}

/* More symbols than the stack holds: the checker allocates. */
static void test_check_many_symbols(void **state) {
  (void)state;
  size_t n = 40, cap = 4096;
  char *json = malloc(cap);
  size_t used = (size_t)snprintf(
      json, cap,
      "{\"format\": \"aotrun-program\", \"format_version\": 1, \"methods\":"
      " {\"f\": {\"library\": \"f.so\", \"outputs\": [], \"symbols\": {");
  for (size_t i = 0; i < n; i++)
    used += (size_t)snprintf(json + used, cap - used,
                             "%s\"s%zu\": {\"min\": 1, \"max\": 8}",
                             i ? "," : "", i);
  used += (size_t)snprintf(json + used, cap - used,
                           "}, \"inputs\": [{\"name\": \"x\", \"dtype\": "
                           "\"float32\", \"shape\": [\"s39\"]}]}}}");
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  assert_int_equal(parse(json, &p, &err), AOTRUN_OK);
  int64_t shape[1] = {9};
  DLTensor t = {0};
  t.ndim = 1;
  t.shape = shape;
  assert_int_equal(aotrun_dim_ranges_check(&p->methods[0], &t, 1, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 0 (x) has size 9 in dim 0 (symbol s39), outside "
                      "its range [1, 8]");
  shape[0] = 8;
  assert_int_equal(aotrun_dim_ranges_check(&p->methods[0], &t, 1, &err),
                   AOTRUN_OK);
  aotrun_program_destroy(p);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_ranges),
      cmocka_unit_test(test_missing_ranges_load),
      cmocka_unit_test(test_bad_symbols),
      cmocka_unit_test(test_bad_dims),
      cmocka_unit_test(test_duplicate_and_too_many_symbols),
      cmocka_unit_test(test_check_inputs),
      cmocka_unit_test(test_check_expression_first),
      cmocka_unit_test(test_check_many_symbols),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
