/*
 * test_model_library_no_shim.c: a process without the shim library (not
 * linked, not next to this binary, not on the search path): loading a model
 * must fail with a message naming libaotrun_shim.so and every place tried,
 * before the model is written to disk or opened.
 *
 * argv: fixture_model.so
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/model_library.h"
#include "testing/loader/loader_test_util.h"

static test_bytes g_model;

static void test_load_without_shim_fails_cleanly(void **state) {
  (void)state;
  test_tmpdir_begin();
  void *present = dlopen("libaotrun_shim.so", RTLD_NOW | RTLD_NOLOAD);
  if (present != NULL) {
    dlclose(present);
    test_tmpdir_end();
    print_message("skipped: a libaotrun_shim.so is already loaded\n");
    skip();
  }
  for (int attempt = 0; attempt < 2; attempt++) { /* failure is not cached */
    aotrun_error err;
    aotrun_model_library *lib = NULL;
    aotrun_status st = aotrun_model_library_load(g_model.data, g_model.size,
                                                 "cpu", &lib, &err);
    assert_int_equal(st, AOTRUN_ERR_ACCESS_FAILED);
    assert_null(lib);
    assert_non_null(strstr(err.message,
                           "loading model: cannot load libaotrun_shim.so "
                           "into the global symbol scope"));
    /* The default search path was tried, with dlerror's reason. */
    assert_non_null(strstr(err.message, "libaotrun_shim.so: cannot open "
                                        "shared object file"));
    assert_int_equal(test_tmpdir_count(), 0);
  }
  test_tmpdir_end();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s fixture_model.so\n", argv[0]);
    return 2;
  }
  g_model = test_read_file(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_without_shim_fails_cleanly),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(g_model.data);
  return rc;
}
