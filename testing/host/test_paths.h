/*
 * test_paths.h: the test binaries get their plugin paths as arguments
 * ($(rootpath ...) in BUILD); this finds one by file name.
 */
#ifndef AOTRUN_TEST_PATHS_H
#define AOTRUN_TEST_PATHS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_test_argc;
static char **g_test_argv;

static inline void test_paths_init(int argc, char **argv) {
  g_test_argc = argc;
  g_test_argv = argv;
}

/* The argument whose last path component is `file` (e.g.
 * "libminimal_plugin.so"); aborts the test binary if it was not passed. */
static inline const char *test_path(const char *file) {
  for (int i = 1; i < g_test_argc; i++) {
    const char *slash = strrchr(g_test_argv[i], '/');
    const char *base = slash ? slash + 1 : g_test_argv[i];
    if (strcmp(base, file) == 0) return g_test_argv[i];
  }
  fprintf(stderr, "test setup: no argument names %s\n", file);
  exit(2);
}

#endif /* AOTRUN_TEST_PATHS_H */
