/*
 * test_model_library_parts.c: the model loader's pieces on their own: the
 * private temp file, the ELF pre-check and entry-point resolution.
 *
 * argv: fixture_model.so fixture_no_run.so
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "aot_loader/container_api.h"
#include "aot_loader/elf_check.h"
#include "aot_loader/temp_file.h"
#include "testing/loader/loader_test_util.h"

static const char *g_model_path, *g_no_run_path;

static int setup(void **state) {
  (void)state;
  test_tmpdir_begin();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_tmpdir_end();
  return 0;
}

static void test_temp_file_round_trip(void **state) {
  (void)state;
  /* Bigger than a pipe buffer and not a multiple of a page. */
  size_t n = 3 * 65536 + 17;
  unsigned char *bytes = malloc(n);
  assert_non_null(bytes);
  for (size_t i = 0; i < n; i++) bytes[i] = (unsigned char)(i * 31 + 7);
  char *path = NULL, *path2 = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_temp_file_create(bytes, n, "stem-", ".bin", &path,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_temp_file_create(bytes, n, "stem-", ".bin", &path2,
                                           &err),
                   AOTRUN_OK);
  assert_string_not_equal(path, path2);
  assert_string_equal(path + strlen(path) - 4, ".bin");
  assert_non_null(strstr(path, "/stem-"));
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0600);
  assert_int_equal((size_t)sb.st_size, n);
  test_bytes back = test_read_file(path);
  assert_int_equal(back.size, n);
  assert_memory_equal(back.data, bytes, n);
  free(back.data);
  assert_int_equal(test_tmpdir_count(), 2);
  aotrun_temp_file_remove(path);
  aotrun_temp_file_remove(path2);
  aotrun_temp_file_remove(NULL);
  free(bytes);
}

static void test_temp_file_empty_and_trailing_slash(void **state) {
  (void)state;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s//", getenv("TMPDIR"));
  setenv("TMPDIR", dir, 1);
  char *path = NULL;
  aotrun_error err;
  assert_int_equal(aotrun_temp_file_create("", 0, "e-", ".so", &path, &err),
                   AOTRUN_OK);
  assert_null(strstr(path, "//")); /* "dir//" -> "dir/" */
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 0);
  aotrun_temp_file_remove(path);
  dir[strlen(dir) - 2] = '\0';
  setenv("TMPDIR", dir, 1);
}

static void test_temp_file_failures(void **state) {
  (void)state;
  char *path = (char *)"sentinel";
  aotrun_error err;
  assert_int_equal(aotrun_temp_file_create(NULL, 5, "s", ".so", &path, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  char dir[4200];
  snprintf(dir, sizeof dir, "%s", getenv("TMPDIR"));
  char missing[4300];
  snprintf(missing, sizeof missing, "%s/nope", dir);
  setenv("TMPDIR", missing, 1);
  assert_int_equal(aotrun_temp_file_create("abc", 3, "s", ".so", &path, &err),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_null(path);
  assert_non_null(strstr(err.message, "cannot create a temp file in "));
  assert_non_null(strstr(err.message, strerror(ENOENT)));
  setenv("TMPDIR", "", 1); /* empty: /tmp */
  assert_int_equal(aotrun_temp_file_create("abc", 3, "s", ".so", &path, &err),
                   AOTRUN_OK);
  assert_int_equal(strncmp(path, "/tmp/s", 6), 0);
  aotrun_temp_file_remove(path);
  setenv("TMPDIR", dir, 1);
}

static void test_elf_check(void **state) {
  (void)state;
  test_bytes so = test_read_file(g_model_path);
  aotrun_error err;
  assert_int_equal(
      aotrun_elf_check_shared_library(so.data, so.size, "lib.so", &err),
      AOTRUN_OK);
  assert_int_equal(aotrun_elf_check_shared_library(so.data, 3, "x", &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "x is not an ELF shared library (3 bytes, no ELF "
                      "magic)");
  /* A program header table pointing past the end. */
  unsigned char *c = malloc(so.size);
  assert_non_null(c);
  memcpy(c, so.data, so.size);
  uint64_t far = (uint64_t)so.size;
  memcpy(c + 32, &far, sizeof far); /* e_phoff */
  assert_int_equal(aotrun_elf_check_shared_library(c, so.size, "x", &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "its program headers end at byte"));
  uint64_t huge = UINT64_MAX - 8; /* overflow must not wrap */
  memcpy(c + 32, &huge, sizeof huge);
  assert_int_equal(aotrun_elf_check_shared_library(c, so.size, "x", &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  memcpy(c, so.data, so.size);
  c[18] = 0x28; /* e_machine = ARM */
  c[19] = 0;
  assert_int_equal(aotrun_elf_check_shared_library(c, so.size, "x", &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "built for ELF machine 40"));
  memcpy(c, so.data, so.size);
  c[5] = 2; /* big-endian */
  assert_int_equal(aotrun_elf_check_shared_library(c, so.size, "x", &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "not little-endian"));
  free(c);
  free(so.data);
}

static void test_resolve_names_every_missing_entry_point(void **state) {
  (void)state;
  /* The fixtures' aoti_torch_* imports come from the shim this test links
   * (global scope). */
  void *full = dlopen(g_model_path, RTLD_NOW | RTLD_LOCAL);
  void *no_run = dlopen(g_no_run_path, RTLD_NOW | RTLD_LOCAL);
  if (full == NULL || no_run == NULL) fail_msg("dlopen: %s", dlerror());
  aotrun_container_api api;
  aotrun_error err;
  assert_int_equal(aotrun_container_api_resolve(full, "m", &api, &err),
                   AOTRUN_OK);
  assert_non_null(api.run);
  assert_non_null(api.run_single_threaded);
  assert_non_null(api.update_user_managed_constant_buffer_pairs);
  assert_non_null(api.update_constants_from_blob);
  const char *missing = "x";
  assert_true(aotrun_container_api_has_constant_info(&api, &missing));
  assert_null(missing);
  api.get_constant_dtype = NULL;
  assert_false(aotrun_container_api_has_constant_info(&api, &missing));
  assert_string_equal(missing, "AOTInductorModelContainerGetConstantDtype");
  assert_int_equal(aotrun_container_api_resolve(no_run, "m.so", &api, &err),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(err.message,
                      "m.so is not an AOTInductor model library: missing "
                      "required entry points AOTInductorModelContainerDelete, "
                      "AOTInductorModelContainerRun");
  assert_null(api.create_with_device); /* zeroed on failure */
  void *self = dlopen(NULL, RTLD_NOW);
  assert_int_equal(aotrun_container_api_resolve(self, "exe", &api, &err),
                   AOTRUN_ERR_NOT_FOUND);
  assert_non_null(strstr(err.message,
                         "AOTInductorModelContainerCreateWithDevice, "
                         "AOTInductorModelContainerDelete, "
                         "AOTInductorModelContainerGetNumInputs, "
                         "AOTInductorModelContainerGetNumOutputs, "
                         "AOTInductorModelContainerRun"));
  dlclose(self);
  dlclose(full);
  dlclose(no_run);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s fixture_model.so fixture_no_run.so\n",
            argv[0]);
    return 2;
  }
  g_model_path = argv[1];
  g_no_run_path = argv[2];
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(test_temp_file_round_trip),
      T(test_temp_file_empty_and_trailing_slash),
      T(test_temp_file_failures),
      T(test_elf_check),
      T(test_resolve_names_every_missing_entry_point),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
