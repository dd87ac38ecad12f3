/*
 * test_safetensors.c: the safetensors parser (aot_loader/safetensors.h):
 * valid files (entries point into the caller's bytes: no copies) and every
 * malformed case with its exact message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/safetensors.h"

#define PREFIX "malformed safetensors file 'weights.safetensors': "

typedef struct file {
  uint8_t *bytes;
  size_t size;
} file;

/* 8-byte little-endian length, the header, data_size bytes 0, 1, 2, ... */
static file make_file(const char *header, size_t data_size) {
  size_t n = strlen(header);
  file f = {malloc(8 + n + data_size), 8 + n + data_size};
  assert_non_null(f.bytes);
  for (int i = 0; i < 8; i++) f.bytes[i] = (uint8_t)((uint64_t)n >> (8 * i));
  memcpy(f.bytes + 8, header, n);
  for (size_t i = 0; i < data_size; i++) f.bytes[8 + n + i] = (uint8_t)i;
  return f;
}

static uint8_t *exact(const uint8_t *bytes, size_t n) {
  uint8_t *d = malloc(n);
  assert_non_null(d);
  memcpy(d, bytes, n);
  return d;
}

static void expect_error_file(file f, const char *message) {
  aotrun_safetensors *st = (aotrun_safetensors *)0x1;
  aotrun_error err = {0};
  assert_int_equal(aotrun_safetensors_parse(f.bytes, f.size,
                                            "weights.safetensors", &st, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(st);
  assert_string_equal(err.message, message);
  free(f.bytes);
}

static void expect_error(const char *header, size_t data_size,
                         const char *message) {
  expect_error_file(make_file(header, data_size), message);
}

static const char kValid[] =
    "{\"__metadata__\": {\"format\": \"pt\"},"
    " \"l1.weight\": {\"dtype\": \"F32\", \"shape\": [3, 4],"
    "                 \"data_offsets\": [0, 48]},"
    " \"scale\": {\"dtype\": \"F64\", \"shape\": [1],"
    "             \"data_offsets\": [48, 56]},"
    " \"empty\": {\"dtype\": \"BF16\", \"shape\": [0, 3],"
    "             \"data_offsets\": [56, 56]},"
    " \"flag\": {\"dtype\": \"BOOL\", \"shape\": [], \"data_offsets\": [56, 57]}"
    "}        ";

static void test_valid(void **state) {
  (void)state;
  file f = make_file(kValid, 64); /* 7 bytes of trailing padding */
  aotrun_safetensors *st = NULL;
  aotrun_error err = {0};
  assert_int_equal(aotrun_safetensors_parse(f.bytes, f.size,
                                            "weights.safetensors", &st, &err),
                   AOTRUN_OK);
  assert_string_equal(aotrun_safetensors_name(st), "weights.safetensors");
  assert_int_equal(aotrun_safetensors_num_entries(st), 4);
  const uint8_t *data = f.bytes + 8 + strlen(kValid);

  const aotrun_safetensors_entry *w = aotrun_safetensors_find(st, "l1.weight");
  assert_non_null(w);
  assert_string_equal(w->key, "l1.weight");
  assert_int_equal(w->dtype, 6);
  assert_int_equal(w->ndim, 2);
  assert_int_equal(w->shape[0], 3);
  assert_int_equal(w->shape[1], 4);
  assert_int_equal(w->begin, 0);
  assert_int_equal(w->end, 48);
  assert_int_equal(w->nbytes, 48);
  assert_ptr_equal(w->data, data); /* borrowed, not copied */

  const aotrun_safetensors_entry *s = aotrun_safetensors_find(st, "scale");
  assert_int_equal(s->dtype, 7);
  assert_ptr_equal(s->data, data + 48);
  assert_int_equal(s->data[0], 48);
  const aotrun_safetensors_entry *e = aotrun_safetensors_find(st, "empty");
  assert_int_equal(e->dtype, 15);
  assert_int_equal(e->nbytes, 0);
  const aotrun_safetensors_entry *b = aotrun_safetensors_find(st, "flag");
  assert_int_equal(b->dtype, 11);
  assert_int_equal(b->ndim, 0);
  assert_int_equal(b->nbytes, 1);

  assert_null(aotrun_safetensors_find(st, "__metadata__"));
  assert_null(aotrun_safetensors_find(st, "l2.weight"));
  /* Sorted by key. */
  assert_string_equal(aotrun_safetensors_entry_at(st, 0)->key, "empty");
  assert_string_equal(aotrun_safetensors_entry_at(st, 3)->key, "scale");
  assert_null(aotrun_safetensors_entry_at(st, 4));
  aotrun_safetensors_destroy(st);
  free(f.bytes);
}

static void test_empty_header_object(void **state) {
  (void)state;
  file f = make_file("{}", 0);
  aotrun_safetensors *st = NULL;
  aotrun_error err = {0};
  assert_int_equal(aotrun_safetensors_parse(f.bytes, f.size, "w", &st, &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_safetensors_num_entries(st), 0);
  aotrun_safetensors_destroy(st);
  free(f.bytes);
}

static void test_every_dtype(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int code;
    int size;
  } kTypes[] = {{"F64", 7, 8},    {"F32", 6, 4},     {"F16", 5, 2},
                {"BF16", 15, 2},  {"F8_E5M2", 23, 1}, {"F8_E4M3", 24, 1},
                {"I64", 4, 8},    {"I32", 3, 4},     {"I16", 2, 2},
                {"I8", 1, 1},     {"U8", 0, 1},      {"U16", 27, 2},
                {"U32", 28, 4},   {"U64", 29, 8},    {"BOOL", 11, 1},
                {"C64", 9, 8}};
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++) {
    char header[160];
    snprintf(header, sizeof header,
             "{\"t\": {\"dtype\": \"%s\", \"shape\": [2, 3], "
             "\"data_offsets\": [0, %d]}}", kTypes[i].name, 6 * kTypes[i].size);
    file f = make_file(header, (size_t)(6 * kTypes[i].size));
    aotrun_safetensors *st = NULL;
    aotrun_error err = {0};
    assert_int_equal(aotrun_safetensors_parse(f.bytes, f.size, "w", &st, &err),
                     AOTRUN_OK);
    assert_int_equal(aotrun_safetensors_find(st, "t")->dtype, kTypes[i].code);
    aotrun_safetensors_destroy(st);
    free(f.bytes);
  }
}

static void test_header_length(void **state) {
  (void)state;
  uint8_t short_file[5] = {1, 0, 0, 0, 0};
  expect_error_file((file){exact(short_file, 5), 5},
                    PREFIX "the file is 5 bytes, shorter than the 8-byte "
                    "header length");
  file f = make_file("{}", 0);
  f.bytes[0] = 3; /* 3 > 2 bytes after the length */
  expect_error_file(f, PREFIX "header length 3 is past the end of the file (2 "
                    "bytes after the length)");
  f = make_file("{}", 0);
  memset(f.bytes, 0xff, 8);
  expect_error_file(f, PREFIX "header length 18446744073709551615 is past the "
                    "end of the file (2 bytes after the length)");
}

static void test_header_too_large(void **state) {
  (void)state;
  /* A file big enough for the claimed length; only 8 bytes are read. */
  uint64_t n = AOTRUN_SAFETENSORS_MAX_HEADER + 1;
  file f = {calloc(1, (size_t)n + 8), (size_t)n + 8};
  assert_non_null(f.bytes);
  for (int i = 0; i < 8; i++) f.bytes[i] = (uint8_t)(n >> (8 * i));
  expect_error_file(f, PREFIX "header length 104857601 is larger than the "
                    "limit 104857600");
}

static void test_header_not_json(void **state) {
  (void)state;
  expect_error("{\"a\": ", 0, PREFIX "the header is not valid JSON (error at "
               "byte 5 of 6)");
  expect_error("", 4, PREFIX "the header is empty (0 bytes), not JSON");
  expect_error("[]", 0, PREFIX "the header must be a JSON object, found an "
               "array");
  expect_error("{} x", 0, PREFIX "the header is not valid JSON (unexpected "
               "data at byte 3 of 4 after the value)");
}

static void test_entry_fields(void **state) {
  (void)state;
  expect_error("{\"w\": 3}", 0, PREFIX "entry 'w' must be an object, found "
               "number 3");
  expect_error("{\"w\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
               PREFIX "entry 'w': 'dtype' must be a string, found nothing");
  expect_error("{\"w\": {\"dtype\": \"F4\", \"shape\": [1], \"data_offsets\": "
               "[0, 4]}}", 4, PREFIX "entry 'w': unknown dtype 'F4'");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": 1, \"data_offsets\": "
               "[0, 4]}}", 4, PREFIX "entry 'w': 'shape' must be an array, "
               "found number 1");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [2, -1], "
               "\"data_offsets\": [0, 4]}}", 4, PREFIX "entry 'w': shape[1] "
               "is -1, must be non-negative");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1.5], "
               "\"data_offsets\": [0, 4]}}", 4, PREFIX "entry 'w': shape[0] "
               "is 1.5, not an integer");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], "
               "\"data_offsets\": [0]}}", 4, PREFIX "entry 'w': "
               "'data_offsets' must be an array of 2 integers, found an "
               "array");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], "
               "\"data_offsets\": [0, \"4\"]}}", 4, PREFIX "entry 'w': "
               "data_offsets[1] must be an integer, found string '4'");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], "
               "\"data_offsets\": [-4, 0]}}", 4, PREFIX "entry 'w': "
               "data_offsets[0] is -4, must be non-negative");
}

static void test_offsets(void **state) {
  (void)state;
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], "
               "\"data_offsets\": [8, 4]}}", 8, PREFIX "entry 'w': "
               "data_offsets begin 8 is after end 4");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [2], "
               "\"data_offsets\": [4, 12]}}", 8, PREFIX "entry 'w': "
               "data_offsets end 12 is past the end of the data region (8 "
               "bytes)");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [3], "
               "\"data_offsets\": [0, 8]}}", 8, PREFIX "entry 'w': "
               "data_offsets span 8 bytes, but its shape needs 12 bytes of "
               "float32");
  expect_error("{\"w\": {\"dtype\": \"F64\", \"shape\": [1], "
               "\"data_offsets\": [0, 4]}}", 8, PREFIX "entry 'w': "
               "data_offsets span 4 bytes, but its shape needs 8 bytes of "
               "float64");
}

static void test_shape_overflow(void **state) {
  (void)state;
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1099511627776, "
               "1099511627776], \"data_offsets\": [0, 4]}}", 4,
               PREFIX "entry 'w': shape's byte size overflows 64 bits (dim 1 "
               "is 1099511627776)");
  expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": "
               "[4611686018427387904], \"data_offsets\": [0, 4]}}", 4,
               PREFIX "entry 'w': shape[0] is 4.6116860184273879e+18, larger "
               "than 2^53");
}

static void test_overlap(void **state) {
  (void)state;
  expect_error("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], "
               "\"data_offsets\": [0, 16]},"
               " \"b\": {\"dtype\": \"F32\", \"shape\": [1], "
               "\"data_offsets\": [20, 24]},"
               " \"c\": {\"dtype\": \"F32\", \"shape\": [2], "
               "\"data_offsets\": [12, 20]}}", 24,
               PREFIX "entries 'a' [0, 16) and 'c' [12, 20) overlap");
  /* Nested inside a larger entry, listed after an entry that starts later. */
  expect_error("{\"big\": {\"dtype\": \"U8\", \"shape\": [32], "
               "\"data_offsets\": [0, 32]},"
               " \"x\": {\"dtype\": \"U8\", \"shape\": [4], "
               "\"data_offsets\": [8, 12]},"
               " \"y\": {\"dtype\": \"U8\", \"shape\": [4], "
               "\"data_offsets\": [20, 24]}}", 32,
               PREFIX "entries 'big' [0, 32) and 'x' [8, 12) overlap");
  /* Touching ranges and empty entries do not overlap. */
  file f = make_file("{\"a\": {\"dtype\": \"U8\", \"shape\": [4], "
                     "\"data_offsets\": [0, 4]},"
                     " \"e\": {\"dtype\": \"U8\", \"shape\": [0], "
                     "\"data_offsets\": [2, 2]},"
                     " \"b\": {\"dtype\": \"U8\", \"shape\": [4], "
                     "\"data_offsets\": [4, 8]}}", 8);
  aotrun_safetensors *st = NULL;
  aotrun_error err = {0};
  assert_int_equal(aotrun_safetensors_parse(f.bytes, f.size, "w", &st, &err),
                   AOTRUN_OK);
  aotrun_safetensors_destroy(st);
  free(f.bytes);
}

static void test_duplicates_and_metadata(void **state) {
  (void)state;
  expect_error("{\"w\": {\"dtype\": \"U8\", \"shape\": [1], "
               "\"data_offsets\": [0, 1]}, \"w\": {\"dtype\": \"U8\", "
               "\"shape\": [1], \"data_offsets\": [1, 2]}}", 2,
               PREFIX "entry 'w' appears twice");
  expect_error("{\"__metadata__\": {\"format\": 1}}", 0,
               PREFIX "'__metadata__' value 'format' must be a string, found "
               "number 1");
  expect_error("{\"__metadata__\": []}", 0,
               PREFIX "'__metadata__' must be an object, found an array");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_empty_header_object),
      cmocka_unit_test(test_every_dtype),
      cmocka_unit_test(test_header_length),
      cmocka_unit_test(test_header_too_large),
      cmocka_unit_test(test_header_not_json),
      cmocka_unit_test(test_entry_fields),
      cmocka_unit_test(test_offsets),
      cmocka_unit_test(test_shape_overflow),
      cmocka_unit_test(test_overlap),
      cmocka_unit_test(test_duplicates_and_metadata),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
