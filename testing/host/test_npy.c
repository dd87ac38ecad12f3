/* test_npy.c: .npy round trips for every dtype and malformed files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"

static char g_path[512];

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_path, sizeof g_path, "%s/test_npy_%d.npy", tmp ? tmp : "/tmp",
           (int)getpid());
  return 0;
}

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static void test_round_trip_every_dtype(void **state) {
  (void)state;
  static const char *const descrs[] = {"<f8", "<f4", "<f2", "<i8", "<i4",
                                       "<i2", "|i1", "|u1", "<u2", "<u4",
                                       "<u8", "|b1", "<c8"};
  for (size_t k = 0; k < sizeof descrs / sizeof descrs[0]; k++) {
    DLDataType t;
    assert_int_equal(aotrun_npy_dtype(descrs[k], &t), AOTRUN_OK);
    assert_string_equal(aotrun_npy_descr(t), descrs[k]);
    size_t item = aotrun_dtype_size(t);
    int64_t shape[2] = {2, 3};
    uint8_t data[6 * 8];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + k);
    if (t.code == AOTRUN_DL_BOOL)
      for (size_t i = 0; i < 6; i++) data[i] = (uint8_t)(i & 1);
    assert_int_equal(aotrun_npy_write(g_path, t, 2, shape, data), AOTRUN_OK);
    aotrun_npy a;
    assert_int_equal(aotrun_npy_read(g_path, &a), AOTRUN_OK);
    assert_int_equal(a.dtype.code, t.code);
    assert_int_equal(a.dtype.bits, t.bits);
    assert_int_equal(a.dtype.lanes, 1);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.shape[0], 2);
    assert_int_equal(a.shape[1], 3);
    assert_int_equal(a.nbytes, 6 * item);
    assert_memory_equal(a.data, data, 6 * item);
    aotrun_npy_free(&a);
  }
  unlink(g_path);
}

static void test_header_matches_numpy(void **state) {
  (void)state;
  float v[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  assert_int_equal(
      aotrun_npy_write(g_path, (DLDataType){kDLFloat, 32, 1}, 1, shape, v),
      AOTRUN_OK);
  uint8_t buf[256];
  FILE *f = fopen(g_path, "rb");
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_int_equal(n, 128 + 16);
  assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  assert_memory_equal(buf + 10, dict, strlen(dict));
  for (size_t i = 10 + strlen(dict); i < 127; i++) assert_int_equal(buf[i], ' ');
  assert_int_equal(buf[127], '\n');
  assert_memory_equal(buf + 128, v, 16);
  unlink(g_path);
}

static void test_zero_d_and_zero_size(void **state) {
  (void)state;
  double scalar = 3.25;
  assert_int_equal(aotrun_npy_write(g_path, (DLDataType){kDLFloat, 64, 1}, 0,
                                    NULL, &scalar),
                   AOTRUN_OK);
  aotrun_npy a;
  assert_int_equal(aotrun_npy_read(g_path, &a), AOTRUN_OK);
  assert_int_equal(a.ndim, 0);
  assert_int_equal(a.nbytes, 8);
  assert_memory_equal(a.data, &scalar, 8);
  aotrun_npy_free(&a);
  int64_t shape[3] = {2, 0, 5};
  assert_int_equal(aotrun_npy_write(g_path, (DLDataType){kDLInt, 32, 1}, 3,
                                    shape, NULL),
                   AOTRUN_OK);
  assert_int_equal(aotrun_npy_read(g_path, &a), AOTRUN_OK);
  assert_int_equal(a.ndim, 3);
  assert_int_equal(a.shape[1], 0);
  assert_int_equal(a.nbytes, 0);
  assert_non_null(a.data);
  aotrun_npy_free(&a);
  aotrun_npy_free(&a); /* a zeroed array frees cleanly */
  unlink(g_path);
}

/* Builds a .npy of the given version and header text plus nbytes of 0xAB. */
static size_t make(uint8_t *buf, int major, const char *header,
                   size_t nbytes) {
  size_t h = strlen(header), pre = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major;
  buf[7] = 0;
  buf[8] = (uint8_t)(h & 0xFF);
  buf[9] = (uint8_t)(h >> 8);
  if (major != 1) buf[10] = buf[11] = 0;
  memcpy(buf + pre, header, h);
  memset(buf + pre + h, 0xAB, nbytes);
  return pre + h + nbytes;
}

static void test_version_2_read(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = make(buf, 2, "{'shape': (3,), 'fortran_order': False, "
                          "'descr': '<i2'}\n", 6);
  aotrun_npy a;
  assert_int_equal(aotrun_npy_parse("v2.npy", buf, n, &a), AOTRUN_OK);
  assert_int_equal(a.dtype.code, kDLInt);
  assert_int_equal(a.dtype.bits, 16);
  assert_int_equal(a.shape[0], 3);
  aotrun_npy_free(&a);
}

static void expect_bad(const uint8_t *buf, size_t n, aotrun_status code,
                       const char *message) {
  aotrun_npy a;
  memset(&a, 0x5A, sizeof a);
  assert_int_equal(aotrun_npy_parse("bad.npy", buf, n, &a), code);
  assert_null(a.data);
  assert_contains(aotrun_host_last_error(), message);
}

static void test_malformed(void **state) {
  (void)state;
  uint8_t buf[512];
  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  size_t n = make(buf, 1, ok, 8);
  buf[1] = 'X';
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy is not a .npy file (bad magic)");
  expect_bad(buf, 4, AOTRUN_ERR_INVALID_ARGUMENT, "bad magic");
  n = make(buf, 3, ok, 8);
  expect_bad(buf, n, AOTRUN_ERR_NOT_SUPPORTED,
             "bad.npy: .npy format 3.0 is not supported");
  n = make(buf, 1, ok, 8);
  expect_bad(buf, 30, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy: truncated .npy header");
  expect_bad(buf, n - 1, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy: data is 7 bytes, shape and dtype need 8");
  n = make(buf, 1, ok, 9);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "data is 9 bytes");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8);
  expect_bad(buf, n, AOTRUN_ERR_NOT_SUPPORTED,
             "bad.npy: fortran_order True is not supported");
  n = make(buf, 1,
           "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
  expect_bad(buf, n, AOTRUN_ERR_NOT_SUPPORTED,
             "bad.npy: dtype '>f4' is not supported: the data is big-endian");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': "
           "(4294967296, 4294967296, 4294967296), }", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy: shape overflows the address space");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': "
           "(99999999999999999999,), }", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "dim overflows int64");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "non-negative integer");
  n = make(buf, 1, "{'descr': '<f4', 'shape': (2,), }", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "malformed .npy header in bad.npy: it has no 'fortran_order'");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
           "'extra': 1}", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "unknown key 'extra'");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "text after the dict");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "(n) needs a comma");
  n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "malformed .npy header in "
                                                  "bad.npy");
  n = make(buf, 1, "[1, 2]", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "header is not a dict");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': "
           "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4);
  expect_bad(buf, n, AOTRUN_ERR_NOT_SUPPORTED, "more than 16 dims");
  n = make(buf, 1, ok, 8);
  buf[20] = '\0';
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "NUL byte");
}

/* Each message names the actual problem (issue 13: the version of a short
 * file was "bad magic", a key was "unknown or repeated", a missing key
 * one of three). */
static void test_malformed_names_the_problem(void **state) {
  (void)state;
  uint8_t buf[512];
  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  size_t n = make(buf, 1, ok, 8);
  expect_bad(buf, 8, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy: truncated .npy file (8 bytes; its preamble alone has "
             "10)");
  expect_bad(buf, 3, AOTRUN_ERR_INVALID_ARGUMENT, "truncated .npy file");
  expect_bad(buf, 0, AOTRUN_ERR_INVALID_ARGUMENT,
             "bad.npy is empty (0 bytes)");
  n = make(buf, 1,
           "{'descr': '<f4', 'shape': (2,), 'fortran_order': False, "
           "'shape': (2,)}", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "repeated key 'shape' (the header has descr, fortran_order and "
             "shape)");
  n = make(buf, 1, "{'descr': '<f4', 'fortran_order': False}", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "it has no 'shape'");
  n = make(buf, 1, "{'fortran_order': False, 'shape': (2,)}", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT, "it has no 'descr'");
  n = make(buf, 1,
           "{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }", 8);
  expect_bad(buf, n, AOTRUN_ERR_NOT_SUPPORTED,
             "bad.npy: dtype '<q9' is not supported (little-endian f8 f4");
  n = make(buf, 1, "{'descr': <f4, 'fortran_order': False, 'shape': (2,)}",
           8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "malformed .npy header in bad.npy at byte 10 of its");
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "expected a quoted string, found '<'");
  /* A header cut short by its declared length. */
  n = make(buf, 1, "{'descr': '<f4', ", 0);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "expected a quoted string, found the end of the header");
  n = make(buf, 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8);
  expect_bad(buf, n, AOTRUN_ERR_INVALID_ARGUMENT,
             "expected a tuple for shape, found '['");
}

static void test_file_errors(void **state) {
  (void)state;
  aotrun_npy a;
  assert_int_equal(aotrun_npy_read("/nonexistent/x.npy", &a),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(aotrun_host_last_error(),
                      "cannot open .npy file /nonexistent/x.npy: No such file or "
                      "directory");
  float v = 1;
  int64_t shape[1] = {1};
  assert_int_equal(aotrun_npy_write("/nonexistent/y.npy",
                                    (DLDataType){kDLFloat, 32, 1}, 1, shape,
                                    &v),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(aotrun_host_last_error(), "cannot create /nonexistent/y.npy");
  /* bfloat16 has no .npy form: refused, and nothing is left behind. */
  assert_int_equal(aotrun_npy_write(g_path, (DLDataType){kDLBfloat, 16, 1}, 1,
                                    shape, &v),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "dtype bfloat16");
  assert_int_equal(access(g_path, F_OK), -1);
  int64_t neg[1] = {-1};
  assert_int_equal(aotrun_npy_write(g_path, (DLDataType){kDLFloat, 32, 1}, 1,
                                    neg, &v),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "dim 0 is negative (-1)");
  assert_int_equal(access(g_path, F_OK), -1);
  DLDataType t;
  assert_int_equal(aotrun_npy_dtype("<U8", &t), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_dtype_name((DLDataType){kDLFloat, 16, 1}),
                      "float16");
  assert_string_equal(aotrun_dtype_name((DLDataType){kDLFloat, 32, 4}),
                      "unknown");
}

/* A FIFO or a device as input is refused without blocking in open() (a
 * hang becomes SIGALRM, failing the test), naming the file. */
static void test_special_files_refused(void **state) {
  (void)state;
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s.fifo", g_path);
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(10);
  aotrun_npy a;
  assert_int_equal(aotrun_npy_read(fifo, &a), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), fifo);
  assert_contains(aotrun_host_last_error(), "is not a regular file (a FIFO)");
  assert_int_equal(aotrun_npy_read("/dev/zero", &a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "/dev/zero is not a regular file (a device)");
  assert_null(a.data);
  alarm(0);
  unlink(fifo);
}

/* Sizes are computed with overflow checks: 2^32 x 2^32 float32 is refused
 * (it wrapped to 0 bytes in `demo` before). */
static void test_alloc_checks_overflow(void **state) {
  (void)state;
  aotrun_npy a = {.dtype = {kDLFloat, 32, 1}, .ndim = 2};
  a.shape[0] = (int64_t)1 << 32;
  a.shape[1] = (int64_t)1 << 32;
  assert_int_equal(aotrun_npy_alloc("input 0", &a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "input 0: shape overflows the address space (dim 1 is "
                  "4294967296)");
  assert_null(a.data);
  a.shape[1] = -1;
  assert_int_equal(aotrun_npy_alloc("input 0", &a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  a.shape[0] = 3;
  a.shape[1] = 2;
  assert_int_equal(aotrun_npy_alloc("input 0", &a), AOTRUN_OK);
  assert_int_equal(a.nbytes, 24);
  assert_non_null(a.data);
  aotrun_npy_free(&a);
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
  assert_int_equal(aotrun_npy_write(link, (DLDataType){kDLFloat, 32, 1}, 1,
                                    shape, &v),
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_every_dtype),
      cmocka_unit_test(test_header_matches_numpy),
      cmocka_unit_test(test_zero_d_and_zero_size),
      cmocka_unit_test(test_version_2_read),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_malformed_names_the_problem),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_special_files_refused),
      cmocka_unit_test(test_write_refuses_symlink),
      cmocka_unit_test(test_alloc_checks_overflow),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
