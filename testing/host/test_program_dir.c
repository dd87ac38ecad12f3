/* test_program_dir.c: the named-data service and the stderr logger. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"

static char g_dir[256];

static void write_file(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/progXXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(g_dir) == NULL) return -1;
  write_file("forward.so", "model bytes");
  write_file("empty.bin", "");
  char sub[512];
  snprintf(sub, sizeof sub, "%s/subdir", g_dir);
  return mkdir(sub, 0700);
}

static int teardown(void **state) {
  (void)state;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd);
}

static aotrun_program_dir *open_dir(void) {
  aotrun_program_dir *d = NULL;
  assert_int_equal(aotrun_program_dir_open(g_dir, &d), AOTRUN_OK);
  return d;
}

static aotrun_status get(aotrun_program_dir *d, const char *key,
                         const void **data, size_t *size, void **token) {
  const aotrun_host_api *h = aotrun_program_dir_host_api(d);
  return h->get_named_data(h->ctx, key, data, size, token);
}

static void test_reads_and_releases(void **state) {
  (void)state;
  aotrun_program_dir *d = open_dir();
  const aotrun_host_api *h = aotrun_program_dir_host_api(d);
  assert_int_equal(h->abi_version, AOTRUN_ABI_VERSION);
  assert_int_equal(h->struct_size, sizeof(aotrun_host_api));
  assert_null(h->alloc);
  const void *data;
  size_t size;
  void *token;
  assert_int_equal(get(d, "forward.so", &data, &size, &token), AOTRUN_OK);
  assert_int_equal(size, 11);
  assert_memory_equal(data, "model bytes", 11);
  const void *data2;
  void *token2;
  assert_int_equal(get(d, "forward.so", &data2, &size, &token2), AOTRUN_OK);
  assert_int_equal(aotrun_program_dir_num_mapped(d), 2);
  h->release_named_data(h->ctx, token);
  assert_int_equal(aotrun_program_dir_num_mapped(d), 1);
  h->release_named_data(h->ctx, NULL); /* ignored, never fails */
  assert_int_equal(aotrun_program_dir_num_mapped(d), 1);
  /* An empty file is valid: size 0, non-NULL data. */
  assert_int_equal(get(d, "empty.bin", &data, &size, &token), AOTRUN_OK);
  assert_int_equal(size, 0);
  assert_non_null(data);
  h->release_named_data(h->ctx, token);
  /* token2 is still mapped: close unmaps it. */
  assert_int_equal(aotrun_program_dir_num_mapped(d), 1);
  assert_string_equal(aotrun_program_dir_path(d), g_dir);
  aotrun_program_dir_close(d);
  aotrun_program_dir_close(NULL);
}

static void expect_bad_key(aotrun_program_dir *d, const char *key,
                           aotrun_status code, const char *message) {
  const void *data = &data;
  size_t size = 7;
  void *token = &token;
  assert_int_equal(get(d, key, &data, &size, &token), code);
  assert_null(data);
  assert_int_equal(size, 0);
  assert_null(token);
  if (strstr(aotrun_host_last_error(), message) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", message, aotrun_host_last_error());
}

static void test_bad_keys(void **state) {
  (void)state;
  aotrun_program_dir *d = open_dir();
  expect_bad_key(d, "", AOTRUN_ERR_INVALID_ARGUMENT,
                 "named data key is empty");
  expect_bad_key(d, NULL, AOTRUN_ERR_INVALID_ARGUMENT,
                 "named data key is empty");
  expect_bad_key(d, "../forward.so", AOTRUN_ERR_INVALID_ARGUMENT,
                 "named data key '../forward.so' is not a plain file name");
  expect_bad_key(d, "subdir/x", AOTRUN_ERR_INVALID_ARGUMENT,
                 "'subdir/x' is not a plain file name");
  expect_bad_key(d, "/etc/passwd", AOTRUN_ERR_INVALID_ARGUMENT,
                 "'/etc/passwd' is not a plain file name");
  expect_bad_key(d, "..", AOTRUN_ERR_INVALID_ARGUMENT,
                 "'..' is not a plain file name");
  expect_bad_key(d, ".", AOTRUN_ERR_INVALID_ARGUMENT,
                 "'.' is not a plain file name");
  char want[512];
  snprintf(want, sizeof want, "named data %s/missing.bin: No such file",
           g_dir);
  expect_bad_key(d, "missing.bin", AOTRUN_ERR_NOT_FOUND, want);
  snprintf(want, sizeof want, "named data %s/subdir is not a regular file",
           g_dir);
  expect_bad_key(d, "subdir", AOTRUN_ERR_INVALID_ARGUMENT, want);
  assert_int_equal(aotrun_program_dir_num_mapped(d), 0);
  aotrun_program_dir_close(d);
}

static void test_open_errors(void **state) {
  (void)state;
  aotrun_program_dir *d = (aotrun_program_dir *)&d;
  assert_int_equal(aotrun_program_dir_open("/nonexistent/prog", &d),
                   AOTRUN_ERR_NOT_FOUND);
  assert_null(d);
  assert_string_equal(aotrun_host_last_error(),
                      "program directory /nonexistent/prog: No such file or "
                      "directory");
  char file[512];
  snprintf(file, sizeof file, "%s/forward.so", g_dir);
  assert_int_equal(aotrun_program_dir_open(file, &d),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(aotrun_host_last_error(), "is not a directory"));
  assert_int_equal(aotrun_program_dir_open("", &d),
                   AOTRUN_ERR_INVALID_ARGUMENT);
}

/* Runs fn with stderr captured into buf. */
static void capture_stderr(void (*fn)(void *), void *arg, char *buf,
                           size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/stderr.txt", g_dir);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  close(fd);
  fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  FILE *f = fopen(path, "rb");
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
  unlink(path);
}

static void log_through_dir(void *arg) {
  aotrun_program_dir *d = arg;
  const aotrun_host_api *h = aotrun_program_dir_host_api(d);
  h->log(h->ctx, AOTRUN_LOG_DEBUG, "debug hidden");
  h->log(h->ctx, AOTRUN_LOG_INFO, "info shown");
  h->log(h->ctx, AOTRUN_LOG_ERROR, "error shown");
  aotrun_log_stderr(AOTRUN_LOG_DEBUG, 42, "odd level");
}

static void test_logger(void **state) {
  (void)state;
  aotrun_program_dir *d = open_dir();
  aotrun_program_dir_set_log_level(d, AOTRUN_LOG_INFO);
  char out[512];
  capture_stderr(log_through_dir, d, out, sizeof out);
  assert_string_equal(out,
                      "[aotrun INFO] info shown\n"
                      "[aotrun ERROR] error shown\n"
                      "[aotrun ERROR] odd level\n");
  aotrun_program_dir_close(d);
  int32_t level = -1;
  assert_int_equal(aotrun_log_level_parse("Warning", &level), AOTRUN_OK);
  assert_int_equal(level, AOTRUN_LOG_WARNING);
  assert_int_equal(aotrun_log_level_parse("loud", &level),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "unknown log level 'loud' (use debug, info, warning or "
                      "error)");
  assert_string_equal(aotrun_log_level_name(AOTRUN_LOG_DEBUG), "DEBUG");
}

/* A FIFO as named data is refused without blocking in open(); symbolic
 * links are followed only to files inside the program directory. */
static void test_special_files_and_links(void **state) {
  (void)state;
  char path[600], target[600];
  snprintf(path, sizeof path, "%s/weights.fifo", g_dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  snprintf(path, sizeof path, "%s/outside.so", g_dir);
  assert_int_equal(symlink("/etc/passwd", path), 0);
  snprintf(path, sizeof path, "%s/dotdot.so", g_dir);
  assert_int_equal(symlink("../", path), 0);
  snprintf(path, sizeof path, "%s/alias.so", g_dir);
  snprintf(target, sizeof target, "%s/forward.so", g_dir);
  assert_int_equal(symlink("forward.so", path), 0);
  aotrun_program_dir *d = open_dir();
  alarm(10); /* a hang fails the test */
  expect_bad_key(d, "weights.fifo", AOTRUN_ERR_INVALID_ARGUMENT,
                 "weights.fifo is not a regular file (a FIFO)");
  expect_bad_key(d, "outside.so", AOTRUN_ERR_INVALID_ARGUMENT,
                 "outside.so resolves to /etc/passwd, outside the program "
                 "directory");
  expect_bad_key(d, "dotdot.so", AOTRUN_ERR_INVALID_ARGUMENT,
                 "outside the program directory");
  alarm(0);
  const void *data = NULL;
  size_t size = 0;
  void *token = NULL;
  assert_int_equal(get(d, "alias.so", &data, &size, &token), AOTRUN_OK);
  assert_int_equal(size, strlen("model bytes"));
  assert_memory_equal(data, "model bytes", size);
  aotrun_program_dir_host_api(d)->release_named_data(
      aotrun_program_dir_host_api(d)->ctx, token);
  assert_int_equal(aotrun_program_dir_num_mapped(d), 0);
  aotrun_program_dir_close(d);
  const char *made[] = {"weights.fifo", "outside.so", "dotdot.so",
                        "alias.so"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", g_dir, made[i]);
    unlink(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reads_and_releases),
      cmocka_unit_test(test_bad_keys),
      cmocka_unit_test(test_open_errors),
      cmocka_unit_test(test_special_files_and_links),
      cmocka_unit_test(test_logger),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
