/*
 * test_program_limits.c: manifest parsing is linear in the manifest's size
 * and bounded by the documented limits (program.h, docs/program-format.md).
 * Before the fix 50,000 constants took 35 s and 60,000 inputs about 20 s
 * (cJSON_GetArrayItem(i) in loops, O(n^2) duplicate-name checks). The
 * check is relative, so slow machines, sanitizers and valgrind do not make
 * it flaky: 10x the entries must take less than 30x the time (linear work
 * takes about 10x, quadratic work 100x).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "aot_loader/program.h"
#include "testing/loader/test_program_json.h"

#define MAX_RATIO 30.0
#define NOISE_SECONDS 0.05 /* timer and allocator noise on tiny inputs */

/* A growable text buffer. */
typedef struct text {
  char *p;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap * 2 + (size_t)n + 1;
    t->p = realloc(t->p, t->cap);
    assert_non_null(t->p);
  }
}

static void begin(text *t) {
  memset(t, 0, sizeof *t);
  t->cap = 1 << 20;
  t->p = malloc(t->cap);
  assert_non_null(t->p);
  t->p[0] = '\0';
  put(t, "{\"format\": \"aotrun-program\", \"format_version\": 1, "
         "\"weights\": \"w.safetensors\", \"methods\": {");
}

static void put_io(text *t, const char *key, size_t n) {
  put(t, "\"%s\": [", key);
  for (size_t i = 0; i < n; i++)
    put(t, "%s{\"name\": \"%s%zu\", \"dtype\": \"float32\", \"shape\": [2]}",
        i ? ", " : "", key, i);
  put(t, "]");
}

static void put_constants(text *t, size_t n, int duplicate_last) {
  put(t, ", \"constants\": [");
  for (size_t i = 0; i < n; i++)
    put(t, "%s{\"name\": \"c%zu\", \"fqn\": \"l.c%zu\", \"type\": "
           "\"parameter\", \"dtype\": \"float32\", \"device\": \"cuda\", "
           "\"sizes\": [2], \"strides\": [1], \"storage_offset\": 0, "
           "\"nbytes\": 8}",
        i ? ", " : "", duplicate_last && i + 1 == n ? 0 : i, i);
  put(t, "]");
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parses t (exact-size copy), returns the status; *elapsed in seconds. */
static aotrun_status parse_text(const text *t, aotrun_program **p,
                                aotrun_error *err, double *elapsed) {
  void *copy = exact_copy(t->p, t->len);
  double start = seconds_now();
  aotrun_status s = aotrun_program_parse(copy, t->len, p, err);
  *elapsed = seconds_now() - start;
  free(copy);
  return s;
}

/* A manifest with n inputs and n outputs. */
static void make_io_manifest(text *t, size_t n) {
  begin(t);
  put(t, "\"forward\": {\"library\": \"f.so\", ");
  put_io(t, "inputs", n);
  put(t, ", ");
  put_io(t, "outputs", n);
  put(t, "}}}");
}

/* A manifest with n constants, the last one named like the first when
 * duplicate_last is set. */
static void make_constants_manifest(text *t, size_t n, int duplicate_last) {
  begin(t);
  put(t, "\"forward\": {\"library\": \"f.so\", \"inputs\": [], "
         "\"outputs\": []");
  put_constants(t, n, duplicate_last);
  put(t, "}}}");
}

/* Seconds to parse a manifest of n entries made by make (must succeed). */
static double time_parse(void (*make)(text *, size_t), size_t n,
                         size_t *bytes) {
  text t;
  make(&t, n);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  double s;
  aotrun_status st = parse_text(&t, &p, &err, &s);
  if (st != AOTRUN_OK) fail_msg("parse failed: %s", err.message);
  aotrun_program_destroy(p);
  *bytes = t.len;
  free(t.p);
  return s;
}

static void make_constants_unique(text *t, size_t n) {
  make_constants_manifest(t, n, 0);
}

static void assert_linear(void (*make)(text *, size_t), size_t n,
                          const char *what) {
  /* Best of three of each: a loaded machine (parallel builds) only ever
   * adds time, and a quadratic parse stays far above the bound anyway. */
  size_t small_bytes, big_bytes;
  double small = 1e30, big = 1e30;
  for (int k = 0; k < 3; k++) {
    double a = time_parse(make, n / 10, &small_bytes);
    double b = time_parse(make, n, &big_bytes);
    small = a < small ? a : small;
    big = b < big ? b : big;
  }
  print_message("%zu %s (%zu bytes): %.3f s; %zu (%zu bytes): %.3f s\n",
                n / 10, what, small_bytes, small, n, big_bytes, big);
  if (big > MAX_RATIO * small + NOISE_SECONDS)
    fail_msg("%zu %s took %.3f s, %zu took %.3f s: not linear", n, what, big,
             n / 10, small);
}

static void test_many_inputs_outputs_are_linear(void **state) {
  (void)state;
  const size_t n = 60000;
  assert_linear(make_io_manifest, n, "inputs+outputs");
  text t;
  make_io_manifest(&t, n);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  double s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_OK);
  assert_int_equal(p->methods[0].num_inputs, n);
  assert_int_equal(p->methods[0].num_outputs, n);
  assert_string_equal(p->methods[0].inputs[n - 1].name, "inputs59999");
  aotrun_program_destroy(p);
  free(t.p);
}

static void test_many_constants_are_linear(void **state) {
  (void)state;
  const size_t n = 100000;
  assert_linear(make_constants_unique, n, "constants");
  /* The duplicate is still found, naming both indices. */
  text t;
  make_constants_manifest(&t, n, 1);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  double s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_non_null(strstr(err.message, "the name is used by constants 0 and "
                                      "99999"));
  free(t.p);
}

static void test_many_methods_are_linear(void **state) {
  (void)state;
  const size_t n = AOTRUN_PROGRAM_MAX_METHODS;
  text t;
  begin(&t);
  for (size_t i = 0; i < n; i++)
    put(&t, "%s\"m%zu\": {\"library\": \"f.so\", \"inputs\": [], "
            "\"outputs\": []}",
        i ? ", " : "", i);
  put(&t, "}}");
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  double s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_OK);
  assert_int_equal(p->num_methods, n);
  aotrun_program_destroy(p);
  free(t.p);
}

static void expect_limit(text *t, const char *message) {
  aotrun_program *p = (aotrun_program *)0x1;
  aotrun_error err = {0};
  double s;
  assert_int_equal(parse_text(t, &p, &err, &s), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  if (strstr(err.message, message) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", err.message, message);
  free(t->p);
}

static void test_limits_are_named(void **state) {
  (void)state;
  text t;
  begin(&t);
  for (size_t i = 0; i <= AOTRUN_PROGRAM_MAX_METHODS; i++)
    put(&t, "%s\"m%zu\": {}", i ? ", " : "", i);
  put(&t, "}}");
  expect_limit(&t, "malformed manifest: field 'methods' has 4097 entries, at "
                   "most 4096 are supported");
  begin(&t);
  put(&t, "\"forward\": {\"library\": \"f.so\", ");
  put_io(&t, "inputs", AOTRUN_PROGRAM_MAX_IO + 1);
  put(&t, ", \"outputs\": []}}}");
  expect_limit(&t, "method 'forward': field 'inputs' has 65537 entries, at "
                   "most 65536 are supported");
  begin(&t);
  put(&t, "\"forward\": {\"library\": \"f.so\", \"inputs\": [], "
          "\"outputs\": [], \"constants\": [");
  for (size_t i = 0; i <= AOTRUN_PROGRAM_MAX_CONSTANTS; i++)
    put(&t, "%s0", i ? "," : "");
  put(&t, "]}}}");
  expect_limit(&t, "field 'constants' has 262145 entries, at most 262144");
  /* The byte limit is checked before any parsing: no need for real JSON. */
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  static const char tiny[] = "{}";
  assert_int_equal(aotrun_program_parse(tiny, (size_t)AOTRUN_PROGRAM_MAX_BYTES
                                                  + 1, &p, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "larger than the limit of 134217728 "
                                      "bytes"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_inputs_outputs_are_linear),
      cmocka_unit_test(test_many_constants_are_linear),
      cmocka_unit_test(test_many_methods_are_linear),
      cmocka_unit_test(test_limits_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
