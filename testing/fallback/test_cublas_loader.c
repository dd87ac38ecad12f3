/* test_cublas_loader.c: cuBLAS and cuBLASLt opened with dlopen at the first
 * GEMM (shim_lib/fallback/cublas_api.h), without a GPU: a missing library
 * and a library without cuBLAS's symbols fail with messages that name them
 * (and the environment variable that overrides the name), the next load
 * tries again, and the real libraries (the CUDA toolkit's; the case skips,
 * saying why, where they cannot be opened) resolve every function under
 * its real symbol (cublasCreate is cublasCreate_v2). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/cublas_api.h"
#include "testing/fallback/fake_tensor.h"

static const char OP[] = "aoti_torch_cuda_mm_out";

/* Runs before the real libraries are loaded (main's order): a load that
 * succeeds is kept for the process. */
static void test_missing_library(void **state) {
  (void)state;
  const aotrun_fb_cublas_api *api = NULL;
  setenv("AOTRUN_CUBLASLT_LIBRARY", "libcublasLt_aotrun_absent.so.13", 1);
  expect_fail(aotrun_fb_cublas_load(OP, &api),
              "aoti_torch_cuda_mm_out: cannot load the cuBLAS library "
              "'libcublasLt_aotrun_absent.so.13' (needed for matrix "
              "multiplications)");
  expect_fail(aotrun_fb_cublas_load(OP, &api), "AOTRUN_CUBLASLT_LIBRARY");
  assert_null(aotrun_fb_cublas());
  unsetenv("AOTRUN_CUBLASLT_LIBRARY");
  setenv("AOTRUN_CUBLAS_LIBRARY", "libcublas_aotrun_absent.so.13", 1);
  expect_fail(aotrun_fb_cublas_load(OP, &api),
              "cannot load the cuBLAS library 'libcublas_aotrun_absent.so.13'");
  expect_fail(aotrun_fb_cublas_load(OP, &api), "AOTRUN_CUBLAS_LIBRARY");
  unsetenv("AOTRUN_CUBLAS_LIBRARY");
  assert_null(aotrun_fb_cublas());
}

/* A library without the symbols is named with the first one missing, the
 * macro-renamed ones under their real names. */
static void test_library_without_symbols(void **state) {
  (void)state;
  const aotrun_fb_cublas_api *api = NULL;
  setenv("AOTRUN_CUBLAS_LIBRARY", "libm.so.6", 1);
  expect_fail(aotrun_fb_cublas_load(OP, &api),
              "the cuBLAS library 'libm.so.6' lacks cublasCreate_v2");
  unsetenv("AOTRUN_CUBLAS_LIBRARY");
  setenv("AOTRUN_CUBLASLT_LIBRARY", "libm.so.6", 1);
  AOTITorchError err = aotrun_fb_cublas_load(OP, &api);
  unsetenv("AOTRUN_CUBLASLT_LIBRARY");
  if (err == AOTI_TORCH_SUCCESS) fail_msg("libm.so.6 was taken as cuBLASLt");
  if (strstr(aotrun_shim_last_error(), "cannot load the cuBLAS library "
                                       "'libcublas.so.13'") != NULL) {
    /* libcublas itself cannot be opened here: the real case skips too. */
    print_message("skipped the cuBLASLt half: %s\n", aotrun_shim_last_error());
    return;
  }
  expect_fail(err, "the cuBLAS library 'libm.so.6' lacks cublasLtCreate");
  assert_null(aotrun_fb_cublas());
}

static void test_real_libraries(void **state) {
  (void)state;
  const aotrun_fb_cublas_api *api = NULL;
  if (aotrun_fb_cublas_load(OP, &api) != AOTI_TORCH_SUCCESS) {
    print_message("skipped: %s\n", aotrun_shim_last_error());
    skip();
  }
  assert_ptr_equal(aotrun_fb_cublas(), api);
  /* Every member resolved (the table is all function pointers). */
  const void *const *fn = (const void *const *)api;
  for (size_t i = 0; i < sizeof *api / sizeof(void *); i++)
    if (fn[i] == NULL) fail_msg("member %zu of the cuBLAS table is NULL", i);
  /* A function that needs no GPU answers through the table. */
  const char *ok = api->cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  assert_non_null(ok);
  assert_true(ok[0] != '\0');
  /* Loaded once: the next load returns the same table, whatever the
   * environment now says. */
  setenv("AOTRUN_CUBLAS_LIBRARY", "libcublas_aotrun_absent.so.13", 1);
  const aotrun_fb_cublas_api *again = NULL;
  assert_int_equal(aotrun_fb_cublas_load(OP, &again), AOTI_TORCH_SUCCESS);
  assert_ptr_equal(again, api);
  unsetenv("AOTRUN_CUBLAS_LIBRARY");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library),
      cmocka_unit_test(test_library_without_symbols),
      cmocka_unit_test(test_real_libraries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
