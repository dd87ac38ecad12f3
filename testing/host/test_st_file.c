/* test_st_file.c: .safetensors round trips for every dtype (bit-exact),
 * the written layout, and malformed, hostile and unwritable files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/st_file.h"

static char g_path[512];

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_path, sizeof g_path, "%s/test_st_%d.safetensors",
           tmp ? tmp : "/tmp", (int)getpid());
  return 0;
}

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Every ABI dtype with its safetensors name. */
static const struct {
  const char *name;
  DLDataType dtype;
} kDtypes[] = {
    {"F64", {kDLFloat, 64, 1}},      {"F32", {kDLFloat, 32, 1}},
    {"F16", {kDLFloat, 16, 1}},      {"BF16", {kDLBfloat, 16, 1}},
    {"F8_E5M2", {12, 8, 1}},         {"F8_E4M3", {10, 8, 1}},
    {"I64", {kDLInt, 64, 1}},        {"I32", {kDLInt, 32, 1}},
    {"I16", {kDLInt, 16, 1}},        {"I8", {kDLInt, 8, 1}},
    {"U64", {kDLUInt, 64, 1}},       {"U32", {kDLUInt, 32, 1}},
    {"U16", {kDLUInt, 16, 1}},       {"U8", {kDLUInt, 8, 1}},
    {"BOOL", {AOTRUN_DL_BOOL, 8, 1}}, {"C64", {kDLComplex, 64, 1}},
};
#define NUM_DTYPES (sizeof kDtypes / sizeof kDtypes[0])

/* Pseudo-random bytes: every bit pattern shows up, NaN payloads included
 * (a float conversion anywhere would change them). */
static void fill(uint8_t *p, size_t n, unsigned seed, int is_bool) {
  uint32_t x = 2463534242u + seed;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = is_bool ? (uint8_t)(x & 1) : (uint8_t)x;
  }
}

static void test_dtype_table(void **state) {
  (void)state;
  for (size_t k = 0; k < NUM_DTYPES; k++) {
    DLDataType t;
    assert_int_equal(aotrun_st_dtype(kDtypes[k].name, &t), AOTRUN_OK);
    assert_int_equal(t.code, kDtypes[k].dtype.code);
    assert_int_equal(t.bits, kDtypes[k].dtype.bits);
    assert_int_equal(t.lanes, 1);
    assert_string_equal(aotrun_st_dtype_name(t), kDtypes[k].name);
    assert_string_not_equal(aotrun_dtype_name(t), "unknown");
  }
  DLDataType t;
  assert_int_equal(aotrun_st_dtype("F4", &t), AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "safetensors dtype 'F4'");
  assert_null(aotrun_st_dtype_name((DLDataType){kDLFloat, 32, 2}));
  assert_null(aotrun_st_dtype_name((DLDataType){kDLFloat, 24, 1}));
}

/* All dtypes in one file, then each alone: read back bit-exact. */
static void test_round_trip_every_dtype(void **state) {
  (void)state;
  enum { MAX_BYTES = 4 * 3 * 8 };
  static uint8_t data[NUM_DTYPES][MAX_BYTES];
  DLTensor t[NUM_DTYPES];
  int64_t shapes[NUM_DTYPES][2];
  const char *names[NUM_DTYPES];
  for (size_t k = 0; k < NUM_DTYPES; k++) {
    shapes[k][0] = (int64_t)(k % 4) + 1;
    shapes[k][1] = 3;
    size_t n = (size_t)shapes[k][0] * 3 * kDtypes[k].dtype.bits / 8;
    fill(data[k], n, (unsigned)k, kDtypes[k].dtype.code == AOTRUN_DL_BOOL);
    t[k] = (DLTensor){.data = data[k], .device = {kDLCPU, 0}, .ndim = 2,
                      .dtype = kDtypes[k].dtype, .shape = shapes[k]};
    names[k] = kDtypes[k].name;
  }
  for (size_t alone = 0; alone <= NUM_DTYPES; alone++) {
    /* alone == NUM_DTYPES: every tensor in one file */
    size_t first = alone < NUM_DTYPES ? alone : 0;
    size_t count = alone < NUM_DTYPES ? 1 : NUM_DTYPES;
    assert_int_equal(
        aotrun_st_file_write(g_path, count, names + first, t + first),
        AOTRUN_OK);
    aotrun_st_file f;
    assert_int_equal(aotrun_st_file_read(g_path, &f), AOTRUN_OK);
    assert_int_equal(f.count, count);
    for (size_t k = first; k < first + count; k++) {
      const aotrun_st_tensor *r = aotrun_st_file_find(&f, names[k]);
      assert_non_null(r);
      assert_int_equal(r->dtype.code, kDtypes[k].dtype.code);
      assert_int_equal(r->dtype.bits, kDtypes[k].dtype.bits);
      assert_int_equal(r->dtype.lanes, 1);
      assert_int_equal(r->ndim, 2);
      assert_int_equal(r->shape[0], shapes[k][0]);
      assert_int_equal(r->shape[1], 3);
      size_t n = (size_t)shapes[k][0] * 3 * kDtypes[k].dtype.bits / 8;
      assert_int_equal(r->nbytes, n);
      assert_memory_equal(r->data, data[k], n);
      aotrun_npy a;
      assert_int_equal(aotrun_st_tensor_copy(r, &a), AOTRUN_OK);
      assert_int_equal(a.nbytes, n);
      assert_memory_equal(a.data, data[k], n);
      aotrun_npy_free(&a);
    }
    aotrun_st_file_free(&f);
    aotrun_st_file_free(&f); /* a zeroed file frees cleanly */
  }
  unlink(g_path);
}

static uint8_t *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static uint8_t buf[1 << 16];
  *size = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

/* The layout other readers expect: 8-aligned header, tensors in order. */
static void test_written_layout(void **state) {
  (void)state;
  float v[4] = {1, 2, 3, 4};
  uint16_t h[2] = {0x3f80, 0xc000}; /* bfloat16 1, -2 */
  int64_t s4[1] = {4}, s2[1] = {2};
  DLTensor t[2] = {
      {.data = v, .device = {kDLCPU, 0}, .ndim = 1,
       .dtype = {kDLFloat, 32, 1}, .shape = s4},
      {.data = h, .device = {kDLCPU, 0}, .ndim = 1,
       .dtype = {kDLBfloat, 16, 1}, .shape = s2},
  };
  const char *names[2] = {"y", "a \"quoted\"\\name \xc3\xa9"};
  assert_int_equal(aotrun_st_file_write(g_path, 2, names, t), AOTRUN_OK);
  size_t size;
  const uint8_t *b = slurp(g_path, &size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | b[i];
  assert_int_equal((8 + n) % 8, 0);
  assert_int_equal(size, 8 + n + 16 + 4);
  const char *want =
      "{\"y\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
      "\"a \\\"quoted\\\"\\\\name \xc3\xa9\":{\"dtype\":\"BF16\",\"shape\":[2],"
      "\"data_offsets\":[16,20]}}";
  assert_memory_equal(b + 8, want, strlen(want));
  for (size_t i = 8 + strlen(want); i < 8 + n; i++) assert_int_equal(b[i], ' ');
  assert_memory_equal(b + 8 + n, v, 16);
  assert_memory_equal(b + 8 + n + 16, h, 4);
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_read(g_path, &f), AOTRUN_OK);
  assert_non_null(aotrun_st_file_find(&f, names[1]));
  aotrun_st_file_free(&f);
  unlink(g_path);
}

static void test_zero_d_zero_size_and_empty(void **state) {
  (void)state;
  double scalar = -0.0;
  int64_t zs[3] = {2, 0, 5};
  DLTensor t[2] = {
      {.data = &scalar, .device = {kDLCPU, 0}, .ndim = 0,
       .dtype = {kDLFloat, 64, 1}},
      {.data = NULL, .device = {kDLCPU, 0}, .ndim = 3,
       .dtype = {kDLInt, 32, 1}, .shape = zs},
  };
  const char *names[2] = {"s", "z"};
  assert_int_equal(aotrun_st_file_write(g_path, 2, names, t), AOTRUN_OK);
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_read(g_path, &f), AOTRUN_OK);
  const aotrun_st_tensor *s = aotrun_st_file_find(&f, "s");
  assert_int_equal(s->ndim, 0);
  assert_int_equal(s->nbytes, 8);
  assert_memory_equal(s->data, &scalar, 8);
  const aotrun_st_tensor *z = aotrun_st_file_find(&f, "z");
  assert_int_equal(z->ndim, 3);
  assert_int_equal(z->nbytes, 0);
  aotrun_npy a;
  assert_int_equal(aotrun_st_tensor_copy(z, &a), AOTRUN_OK);
  assert_non_null(a.data);
  aotrun_npy_free(&a);
  aotrun_st_file_free(&f);
  assert_int_equal(aotrun_st_file_write(g_path, 0, NULL, NULL), AOTRUN_OK);
  assert_int_equal(aotrun_st_file_read(g_path, &f), AOTRUN_OK);
  assert_int_equal(f.count, 0);
  aotrun_st_file_free(&f);
  unlink(g_path);
}

/* Every proper prefix of a valid file is refused, never read past. */
static void test_truncated(void **state) {
  (void)state;
  int32_t v[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor t = {.data = v, .device = {kDLCPU, 0}, .ndim = 2,
                .dtype = {kDLInt, 32, 1}, .shape = shape};
  const char *name = "x";
  assert_int_equal(aotrun_st_file_write(g_path, 1, &name, &t), AOTRUN_OK);
  size_t size;
  const uint8_t *b = slurp(g_path, &size);
  for (size_t cut = 0; cut < size; cut++) {
    uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
    memcpy(copy, b, cut);
    aotrun_st_file f;
    assert_int_equal(aotrun_st_file_parse("cut.safetensors", copy, cut, &f),
                     AOTRUN_ERR_INVALID_ARGUMENT);
    assert_contains(aotrun_host_last_error(), "cut.safetensors");
    assert_int_equal(f.count, 0);
    free(copy);
  }
  unlink(g_path);
}

/* A file of the given header text plus `data` bytes of 0x11. */
static size_t make(uint8_t *buf, uint64_t declared, const char *header,
                   size_t data) {
  for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(declared >> (8 * i));
  size_t h = strlen(header);
  memcpy(buf + 8, header, h);
  memset(buf + 8 + h, 0x11, data);
  return 8 + h + data;
}

static void expect_bad(const char *header, uint64_t declared, size_t data,
                       aotrun_status code, const char *message) {
  static uint8_t buf[4096];
  if (declared == 0) declared = strlen(header);
  size_t n = make(buf, declared, header, data);
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_parse("bad.safetensors", buf, n, &f), code);
  assert_contains(aotrun_host_last_error(), message);
  assert_null(f.tensors);
}

static void test_header_lies(void **state) {
  (void)state;
  const char *ok = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],"
                   "\"data_offsets\":[0,8]}}";
  expect_bad(ok, 1000, 8, AOTRUN_ERR_INVALID_ARGUMENT,
             "header length 1000 is past the end of the file");
  expect_bad(ok, (uint64_t)1 << 62, 8, AOTRUN_ERR_INVALID_ARGUMENT,
             "past the end of the file");
  expect_bad(ok, 10, 8, AOTRUN_ERR_INVALID_ARGUMENT, "the header is");
  expect_bad(ok, 0, 4, AOTRUN_ERR_INVALID_ARGUMENT,
             "data_offsets end 8 is past the end of the data region (4 "
             "bytes)");
  expect_bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
             0, 8, AOTRUN_ERR_INVALID_ARGUMENT,
             "entry 'x': data_offsets span 8 bytes, but its shape needs 12");
  expect_bad("{\"x\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,8]}}",
             0, 8, AOTRUN_ERR_INVALID_ARGUMENT,
             "entry 'x': unknown dtype 'F4'");
  expect_bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
             "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
             0, 8, AOTRUN_ERR_INVALID_ARGUMENT, "overlap");
  expect_bad("{\"x\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],"
             "\"data_offsets\":[0,0]}}",
             0, 0, AOTRUN_ERR_INVALID_ARGUMENT, "overflows 64 bits");
  expect_bad("{\"x\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
             "1,1,1],\"data_offsets\":[0,1]}}",
             0, 1, AOTRUN_ERR_NOT_SUPPORTED,
             "bad.safetensors: tensor 'x' has rank 17, more than 16");
  expect_bad("[1, 2]", 0, 0, AOTRUN_ERR_INVALID_ARGUMENT,
             "the header must be a JSON object");
  expect_bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],"
             "\"data_offsets\":[0,0]}}",
             0, 0, AOTRUN_ERR_INVALID_ARGUMENT, "must be non-negative");
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_parse("short", "\x01\x02", 2, &f),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "shorter than the 8-byte header");
}

/* Refused before anything is created: no file is left behind. */
static void expect_write_error(const char *const *names, const DLTensor *t,
                               size_t n, aotrun_status code,
                               const char *message) {
  unlink(g_path);
  assert_int_equal(aotrun_st_file_write(g_path, n, names, t), code);
  assert_contains(aotrun_host_last_error(), message);
  assert_false(exists(g_path));
}

static void test_write_errors(void **state) {
  (void)state;
  float v[2] = {1, 2};
  int64_t shape[1] = {2}, neg[1] = {-2};
  DLTensor ok = {.data = v, .device = {kDLCPU, 0}, .ndim = 1,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor t[2] = {ok, ok};
  const char *names[2] = {"a", "b"};
  t[1].dtype = (DLDataType){kDLFloat, 32, 2};
  expect_write_error(names, t, 2, AOTRUN_ERR_NOT_SUPPORTED,
                     "tensor 'b' has dtype unknown (code 2, 32 bits, 2 "
                     "lanes), which safetensors cannot hold");
  t[1] = ok;
  t[1].shape = neg;
  expect_write_error(names, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 'b' dim 0 is negative (-2)");
  t[1] = ok;
  t[1].data = NULL;
  expect_write_error(names, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 'b' has NULL data for 8 bytes");
  t[1] = ok;
  t[1].device = (DLDevice){kDLCUDA, 0};
  expect_write_error(names, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 'b' is not in CPU memory");
  t[1] = ok;
  t[1].ndim = 17;
  expect_write_error(names, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 'b' has bad rank 17");
  t[1] = ok;
  const char *dup[2] = {"a", "a"};
  expect_write_error(dup, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "two tensors are named 'a'");
  const char *meta[2] = {"a", "__metadata__"};
  expect_write_error(meta, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 1 has the name '__metadata__'");
  const char *empty[2] = {"", "b"};
  expect_write_error(empty, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 0 has the name ''");
  int64_t huge[2] = {INT64_MAX, 4};
  t[1].shape = huge;
  t[1].ndim = 2;
  expect_write_error(names, t, 2, AOTRUN_ERR_INVALID_ARGUMENT,
                     "tensor 'b' overflows the address space (dim 0 is "
                     "9223372036854775807)");
}

/* A write that fails half-way (file size limit) leaves nothing behind. */
static void test_failed_write_removes_file(void **state) {
  (void)state;
  static uint8_t big[1 << 16];
  int64_t shape[1] = {sizeof big};
  DLTensor t = {.data = big, .device = {kDLCPU, 0}, .ndim = 1,
                .dtype = {kDLUInt, 8, 1}, .shape = shape};
  const char *name = "big";
  struct rlimit old, small;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 4096;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG, not a signal */
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  aotrun_status s = aotrun_st_file_write(g_path, 1, &name, &t);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  assert_int_equal(s, AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(aotrun_host_last_error(), "error writing");
  assert_false(exists(g_path));
}

/* Writing never follows a symbolic link: the link's target is untouched. */
static void test_write_refuses_symlink(void **state) {
  (void)state;
  char target[600], link[600];
  snprintf(target, sizeof target, "%s.target", g_path);
  snprintf(link, sizeof link, "%s.link", g_path);
  FILE *f = fopen(target, "wb");
  assert_non_null(f);
  fputs("precious", f);
  fclose(f);
  unlink(link);
  assert_int_equal(symlink(target, link), 0);
  float v = 1;
  int64_t shape[1] = {1};
  DLTensor t = {.data = &v, .device = {kDLCPU, 0}, .ndim = 1,
                .dtype = {kDLFloat, 32, 1}, .shape = shape};
  const char *name = "x";
  assert_int_equal(aotrun_st_file_write(link, 1, &name, &t),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(aotrun_host_last_error(), "is a symbolic link, refused");
  char buf[32] = {0};
  f = fopen(target, "rb");
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 8);
  fclose(f);
  assert_string_equal(buf, "precious");
  unlink(link);
  unlink(target);
}

static void test_special_files_refused(void **state) {
  (void)state;
  aotrun_st_file f;
  assert_int_equal(aotrun_st_file_read("/dev/zero", &f),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  ".safetensors file /dev/zero is not a regular file");
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s.fifo", g_path);
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(aotrun_st_file_read(fifo, &f), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "(a FIFO)");
  unlink(fifo);
  assert_int_equal(aotrun_st_file_read("/nonexistent/x.safetensors", &f),
                   AOTRUN_ERR_NOT_FOUND);
  assert_null(f.tensors);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_round_trip_every_dtype),
      cmocka_unit_test(test_written_layout),
      cmocka_unit_test(test_zero_d_zero_size_and_empty),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_header_lies),
      cmocka_unit_test(test_write_errors),
      cmocka_unit_test(test_failed_write_removes_file),
      cmocka_unit_test(test_write_refuses_symlink),
      cmocka_unit_test(test_special_files_refused),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
