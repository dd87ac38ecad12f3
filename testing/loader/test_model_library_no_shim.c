/*
 * test_model_library_no_shim.c: a process without the shim library (not
 * linked, not next to this binary, not on the search path): loading a model
 * must fail with a message naming libaotrun_shim.so and every place tried,
 * before the model is written to disk or opened.
 *
 * Then with a fake libtorch in the global scope (the same aoti_torch_*
 * names, not aotrun_shim_last_error): it must not be taken for the shim.
 *
 * argv: fixture_model.so fake_libtorch.so
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
static const char *g_fake_torch;

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

/* libtorch exports aoti_torch_empty_strided, the marker the shim search
 * follows (global_symbols.h step 2): it is passed over, and the load
 * fails as without it. */
static void test_libtorch_is_not_taken_for_the_shim(void **state) {
  void *torch = dlopen(g_fake_torch, RTLD_NOW | RTLD_GLOBAL);
  assert_non_null(torch);
  test_load_without_shim_fails_cleanly(state);
  dlclose(torch);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s fixture_model.so fake_libtorch.so\n",
            argv[0]);
    return 2;
  }
  g_model = test_read_file(argv[1]);
  g_fake_torch = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_without_shim_fails_cleanly),
      cmocka_unit_test(test_libtorch_is_not_taken_for_the_shim),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(g_model.data);
  return rc;
}
