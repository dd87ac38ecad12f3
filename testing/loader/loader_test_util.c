/*
 * loader_test_util.c: see loader_test_util.h.
 */
#include "testing/loader/loader_test_util.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char g_dir[4096];
static char *g_saved_tmpdir;

test_bytes test_read_file(const char *path) {
  test_bytes b = {NULL, 0};
  FILE *f = fopen(path, "rb");
  if (f == NULL) fail_msg("cannot open %s", path);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  assert_int_equal(fseek(f, 0, SEEK_SET), 0);
  b.data = malloc((size_t)n);
  assert_non_null(b.data);
  assert_int_equal(fread(b.data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  b.size = (size_t)n;
  return b;
}

const char *test_tmpdir_begin(void) {
  const char *base = getenv("TEST_TMPDIR");
  if (base == NULL || base[0] == '\0') base = getenv("TMPDIR");
  if (base == NULL || base[0] == '\0') base = "/tmp";
  const char *old = getenv("TMPDIR");
  free(g_saved_tmpdir);
  g_saved_tmpdir = old ? strdup(old) : NULL;
  snprintf(g_dir, sizeof g_dir, "%s/loadlib-test-XXXXXX", base);
  assert_non_null(mkdtemp(g_dir));
  assert_int_equal(setenv("TMPDIR", g_dir, 1), 0);
  return g_dir;
}

static int count_entries(int print) {
  DIR *d = opendir(g_dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      if (print) print_message("left in %s: %s\n", g_dir, e->d_name);
      n++;
    }
  closedir(d);
  return n;
}

int test_tmpdir_count(void) { return count_entries(0); }

void test_tmpdir_end(void) {
  assert_int_equal(count_entries(1), 0);
  assert_int_equal(rmdir(g_dir), 0);
  if (g_saved_tmpdir != NULL)
    setenv("TMPDIR", g_saved_tmpdir, 1);
  else
    unsetenv("TMPDIR");
  free(g_saved_tmpdir);
  g_saved_tmpdir = NULL;
}
