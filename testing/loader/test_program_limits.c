/*
 * test_program_limits.c: manifest parsing does linear work in the number of
 * entries and is bounded by the documented limits (program.h,
 * docs/program-format.md). Before the fix 50,000 constants took 35 s and
 * 60,000 inputs about 20 s (cJSON_GetArrayItem(i) in loops, O(n^2)
 * duplicate-name checks).
 *
 * The work is counted, never timed: the test binary is linked with
 * --wrap for the calls whose cost grows with the input (see BUILD):
 * string comparisons (duplicate checks, hash probes), cJSON's list walks
 * (GetArrayItem(i) walks i nodes, GetArraySize and a missed object lookup
 * the whole list, a found one up to the item) and heap allocations. 10x
 * the entries must cost at most 12x the work (linear work is about 10x,
 * quadratic work 100x), on any machine, under any sanitizer or valgrind.
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

#include <cjson/cJSON.h>

#define MAX_RATIO 12 /* linear: about 10 */

/* ---- the counted work (link-time wrappers, BUILD: --wrap) --------------- */

static uint64_t g_work;

int __real_strcmp(const char *a, const char *b);
int __wrap_strcmp(const char *a, const char *b) {
  g_work++;
  return __real_strcmp(a, b);
}

int __real_strncmp(const char *a, const char *b, size_t n);
int __wrap_strncmp(const char *a, const char *b, size_t n) {
  g_work++;
  return __real_strncmp(a, b, n);
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n) {
  g_work++;
  return __real_malloc(n);
}

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) {
  g_work++;
  return __real_calloc(n, size);
}

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n) {
  g_work++;
  return __real_realloc(p, n);
}

/* Nodes a lookup walks in cJSON's linked list: up to `found`, or all. */
static uint64_t walk_cost(const cJSON *parent, const cJSON *found) {
  uint64_t n = 1;
  for (const cJSON *c = parent ? parent->child : NULL; c != NULL && c != found;
       c = c->next)
    n++;
  return n;
}

int __real_cJSON_GetArraySize(const cJSON *array);
int __wrap_cJSON_GetArraySize(const cJSON *array) {
  g_work += walk_cost(array, NULL);
  return __real_cJSON_GetArraySize(array);
}

cJSON *__real_cJSON_GetArrayItem(const cJSON *array, int index);
cJSON *__wrap_cJSON_GetArrayItem(const cJSON *array, int index) {
  cJSON *item = __real_cJSON_GetArrayItem(array, index);
  g_work += walk_cost(array, item);
  return item;
}

cJSON *__real_cJSON_GetObjectItemCaseSensitive(const cJSON *object,
                                               const char *key);
cJSON *__wrap_cJSON_GetObjectItemCaseSensitive(const cJSON *object,
                                               const char *key) {
  cJSON *item = __real_cJSON_GetObjectItemCaseSensitive(object, key);
  g_work += walk_cost(object, item);
  return item;
}

cJSON *__real_cJSON_GetObjectItem(const cJSON *object, const char *key);
cJSON *__wrap_cJSON_GetObjectItem(const cJSON *object, const char *key) {
  cJSON *item = __real_cJSON_GetObjectItem(object, key);
  g_work += walk_cost(object, item);
  return item;
}

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

/* Parses t (exact-size copy), returns the status; *work: the counted work
 * of the parse alone. */
static aotrun_status parse_text(const text *t, aotrun_program **p,
                                aotrun_error *err, uint64_t *work) {
  void *copy = exact_copy(t->p, t->len);
  uint64_t start = g_work;
  aotrun_status s = aotrun_program_parse(copy, t->len, p, err);
  *work = g_work - start;
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

/* The work of parsing a manifest of n entries made by make (must
 * succeed). */
static uint64_t parse_work(void (*make)(text *, size_t), size_t n,
                           size_t *bytes) {
  text t;
  make(&t, n);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  uint64_t s;
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
  size_t small_bytes, big_bytes;
  uint64_t small = parse_work(make, n / 10, &small_bytes);
  uint64_t big = parse_work(make, n, &big_bytes);
  print_message("%zu %s (%zu bytes): %llu units of work; %zu (%zu bytes): "
                "%llu\n",
                n / 10, what, small_bytes, (unsigned long long)small, n,
                big_bytes, (unsigned long long)big);
  assert_true(small > n / 10); /* the wrappers count */
  if (big > MAX_RATIO * small)
    fail_msg("%zu %s cost %llu units of work, %zu cost %llu: not linear", n,
             what, (unsigned long long)big, n / 10,
             (unsigned long long)small);
}

static void test_many_inputs_outputs_are_linear(void **state) {
  (void)state;
  const size_t n = 20000;
  assert_linear(make_io_manifest, n, "inputs+outputs");
  text t;
  make_io_manifest(&t, n);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  uint64_t s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_OK);
  assert_int_equal(p->methods[0].num_inputs, n);
  assert_int_equal(p->methods[0].num_outputs, n);
  assert_string_equal(p->methods[0].inputs[n - 1].name, "inputs19999");
  aotrun_program_destroy(p);
  free(t.p);
}

static void test_many_constants_are_linear(void **state) {
  (void)state;
  const size_t n = 20000;
  assert_linear(make_constants_unique, n, "constants");
  /* The duplicate is still found, naming both indices. */
  text t;
  make_constants_manifest(&t, n, 1);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  uint64_t s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_non_null(strstr(err.message, "the name is used by constants 0 and "
                                      "19999"));
  free(t.p);
}

/* A manifest with n methods (all valid, no inputs). */
static void make_methods_manifest(text *t, size_t n) {
  begin(t);
  for (size_t i = 0; i < n; i++)
    put(t, "%s\"m%zu\": {\"library\": \"f.so\", \"inputs\": [], "
           "\"outputs\": []}",
        i ? ", " : "", i);
  put(t, "}}");
}

static void test_many_methods_are_linear(void **state) {
  (void)state;
  const size_t n = AOTRUN_PROGRAM_MAX_METHODS;
  assert_linear(make_methods_manifest, n, "methods");
  text t;
  make_methods_manifest(&t, n);
  aotrun_program *p = NULL;
  aotrun_error err = {0};
  uint64_t s;
  assert_int_equal(parse_text(&t, &p, &err, &s), AOTRUN_OK);
  assert_int_equal(p->num_methods, n);
  aotrun_program_destroy(p);
  free(t.p);
}

static void expect_limit(text *t, const char *message) {
  aotrun_program *p = (aotrun_program *)0x1;
  aotrun_error err = {0};
  uint64_t s;
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
