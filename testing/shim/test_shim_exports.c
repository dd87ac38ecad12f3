/* libaotrun_shim.so exports every name in the export lists (argv[2..]):
 * dlopen + dlsym each, so a missing symbol fails CI. It exports nothing
 * internal. Usage: test_shim_exports LIB.so LIST.txt [LIST.txt...] */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static int g_argc;
static char **g_argv;
static void *g_lib;

static int setup(void **state) {
  (void)state;
  static char path[4096];
  /* A bare name would make dlopen search the library path. */
  snprintf(path, sizeof path, "%s%s", strchr(g_argv[1], '/') ? "" : "./", g_argv[1]);
  g_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!g_lib) fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
  return g_lib ? 0 : -1;
}

/* No dlclose: unloading libstdc++ (a dependency of cuBLAS) would orphan
 * its emergency exception pool and LeakSanitizer would report it. */
static int teardown(void **state) {
  (void)state;
  return 0;
}

/* Checks every non-empty line of one list; returns how many it checked. */
static int check_list(const char *file) {
  FILE *f = fopen(file, "r");
  if (!f) {
    print_message("cannot open %s\n", file);
    fail();
  }
  char line[256];
  int n = 0, missing = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, " \r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    n++;
    if (!dlsym(g_lib, line)) {
      print_message("%s: %s is not exported\n", file, line);
      missing++;
    }
  }
  fclose(f);
  assert_int_equal(missing, 0);
  return n;
}

static void test_lists_exported(void **state) {
  (void)state;
  for (int i = 2; i < g_argc; i++) {
    int n = check_list(g_argv[i]);
    print_message("%s: %d symbols exported\n", g_argv[i], n);
    assert_true(n > 0);
  }
}

static void test_internals_hidden(void **state) {
  (void)state;
  const char *hidden[] = {"aotrun_storage_new", "aotrun_tensor_new", "aotrun_copy",
                          "aotrun_cuda_strided_copy", "aotrun_dtype_size"};
  for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++) {
    if (dlsym(g_lib, hidden[i])) print_message("%s is exported\n", hidden[i]);
    assert_null(dlsym(g_lib, hidden[i]));
  }
}

static void test_library_works(void **state) {
  (void)state;
  int32_t (*f32)(void) = (int32_t (*)(void))dlsym(g_lib, "aoti_torch_dtype_float32");
  assert_non_null(f32);
  assert_int_equal(f32(), 6);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LIB.so LIST.txt [LIST.txt...]\n", argv[0]);
    return 2;
  }
  g_argc = argc;
  g_argv = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_exported),
      cmocka_unit_test(test_internals_hidden),
      cmocka_unit_test(test_library_works),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
