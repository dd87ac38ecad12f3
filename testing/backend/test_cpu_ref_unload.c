/*
 * test_cpu_ref_unload.c: the real cpu_ref plugin loaded, used (the fixture
 * program, outputs checked) and unloaded 100 times in one process through
 * the host library. After each round the plugin is no longer mapped, no
 * named data is mapped and no temp model file is left; under
 * --config=asan LeakSanitizer checks at exit that the rounds leaked
 * nothing (this test loads no cudart, so leak checking stays on).
 *
 * Arguments: the plugin (libaotrun_cpu_ref.so) and fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

#define ROUNDS 100

static const char *g_plugin_path;
static const char *g_model_path;

static int count_temp_models(void) {
  const char *tmp = getenv("TMPDIR");
  DIR *d = opendir(tmp ? tmp : "/tmp");
  if (d == NULL) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += strncmp(e->d_name, "aotrun-model-", 13) == 0;
  closedir(d);
  return n;
}

static int plugin_is_loaded(void) {
  void *h = dlopen(g_plugin_path, RTLD_NOW | RTLD_NOLOAD);
  if (h != NULL) dlclose(h);
  return h != NULL;
}

/* One forward call: 2 rows in, checked against the fixture's maths. */
static void run_forward(aotrun_host_method *m) {
  float x[2 * 4], y[2 * 3], calls = 0, want[2 * 3];
  for (int i = 0; i < 8; i++) x[i] = 0.5f * (float)i - 1.0f;
  int64_t x_shape[2] = {2, 4}, y_shape[2] = {2, 3}, c_shape[1] = {1};
  const DLDataType f32 = {kDLFloat, 32, 1};
  DLTensor in = {x, {kDLCPU, 0}, 2, f32, x_shape, NULL, 0};
  DLTensor out[2] = {{y, {kDLCPU, 0}, 2, f32, y_shape, NULL, 0},
                     {&calls, {kDLCPU, 0}, 1, f32, c_shape, NULL, 0}};
  if (aotrun_host_method_execute(m, &in, 1, out, 2) != AOTRUN_OK)
    fail_msg("execute: %s", aotrun_host_last_error());
  program_fixture_expected(x, 2, want);
  for (int i = 0; i < 6; i++) assert_float_equal(y[i], want[i], 0);
  assert_float_equal(calls, 1.0f, 0); /* a fresh model every round */
}

static void one_round(const program_fixture *p) {
  aotrun_registry *r = NULL;
  aotrun_program_dir *dir = NULL;
  aotrun_host_method *m = NULL;
  aotrun_key_value spec = {"method", "forward"};
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  if (aotrun_registry_load(r, g_plugin_path, NULL) != AOTRUN_OK)
    fail_msg("load: %s", aotrun_host_last_error());
  assert_int_equal(aotrun_program_dir_open(p->dir, &dir), AOTRUN_OK);
  aotrun_program_dir_set_log_level(dir, AOTRUN_LOG_ERROR + 1);
  if (aotrun_host_method_open(r, "cpu_ref", aotrun_program_dir_host_api(dir),
                              p->manifest, p->manifest_size, &spec, 1,
                              &m) != AOTRUN_OK)
    fail_msg("open: %s", aotrun_host_last_error());
  run_forward(m);
  /* Unloading under an open method is refused and changes nothing. */
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_host_method_close(m);
  assert_int_equal(aotrun_program_dir_num_mapped(dir), 0);
  aotrun_program_dir_close(dir);
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_OK);
}

static void test_load_use_unload_100_times(void **state) {
  (void)state;
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_path, "cpu"), 0);
  int temps = count_temp_models();
  for (int round = 0; round < ROUNDS; round++) {
    one_round(&p);
    if (plugin_is_loaded())
      fail_msg("round %d: %s is still mapped after registry_destroy", round,
               g_plugin_path);
    assert_int_equal(count_temp_models(), temps);
  }
  program_fixture_remove(&p);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s libaotrun_cpu_ref.so fixture_model.so\n",
            argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  g_model_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_use_unload_100_times),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
