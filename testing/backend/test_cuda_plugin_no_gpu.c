/*
 * test_cuda_plugin_no_gpu.c: the real CUDA plugin (libaotrun_cuda.so) on a
 * machine without a usable GPU: it loads, says it is unavailable with the
 * CUDA runtime's reason, fails init cleanly (a message, nothing left
 * mapped, no temp file, no leak), and its options work backend-wide. Also
 * the graph policy of a loaded method (host constants), via the method
 * runner on the cpu. With a GPU present the no-GPU tests skip.
 *
 * Arguments: libaotrun_cuda.so and fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner.h"
#include "backend_cuda/cuda_graph_policy.h"
#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

static const char *g_plugin_path;
static const char *g_model_path;
static aotrun_backend *g_backend;
static const aotrun_backend_api *g_api;

static int group_setup(void **state) {
  (void)state;
  if (aotrun_backend_open(g_plugin_path, AOTRUN_ABI_VERSION, &g_backend) !=
      AOTRUN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", g_plugin_path,
            aotrun_host_last_error());
    return -1;
  }
  g_api = aotrun_backend_table(g_backend);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  aotrun_backend_close(g_backend);
  return 0;
}

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

/* Skips (with the reason) when a GPU is usable here. */
static void require_no_gpu(void) {
  char reason[256];
  if (g_api->is_available(reason, sizeof reason)) {
    print_message("a CUDA device is available: the no-GPU test is skipped\n");
    skip();
  }
}

static void test_name_and_exports(void **state) {
  (void)state;
  assert_string_equal(g_api->get_name(), "cuda");
  assert_int_equal(g_api->abi_version, AOTRUN_ABI_VERSION);
}

static void test_unavailable_with_reason(void **state) {
  (void)state;
  require_no_gpu();
  char reason[256];
  memset(reason, 'x', sizeof reason);
  assert_int_equal(g_api->is_available(reason, sizeof reason), 0);
  print_message("is_available: %s\n", reason);
  assert_true(strstr(reason, "cudaGetDeviceCount failed: ") == reason ||
              strcmp(reason, "no CUDA device") == 0);
  /* Truncated, still terminated; a second call says the same. */
  char small[8];
  assert_int_equal(g_api->is_available(small, sizeof small), 0);
  assert_int_equal(strlen(small), 7);
  assert_int_equal(g_api->is_available(NULL, 0), 0);
}

static void test_init_fails_cleanly(void **state) {
  (void)state;
  require_no_gpu();
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_path, "cuda"), 0);
  aotrun_program_dir *dir = NULL;
  assert_int_equal(aotrun_program_dir_open(p.dir, &dir), AOTRUN_OK);
  int temps = count_temp_models();
  aotrun_key_value spec = {"method", "forward"};
  aotrun_method *m = (aotrun_method *)&spec;
  assert_int_equal(g_api->init(aotrun_program_dir_host_api(dir), p.manifest,
                               p.manifest_size, &spec, 1, &m),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_null(m);
  const char *msg = g_api->last_error(NULL);
  print_message("init: %s\n", msg);
  assert_non_null(strstr(msg, "init of method forward: CUDA is not "
                              "available: "));
  assert_int_equal(aotrun_program_dir_num_mapped(dir), 0);
  assert_int_equal(count_temp_models(), temps);
  /* A bad device spec is refused before CUDA is touched. */
  aotrun_key_value specs[2] = {{"method", "forward"}, {"device", "gpu0"}};
  assert_int_equal(g_api->init(aotrun_program_dir_host_api(dir), p.manifest,
                               p.manifest_size, specs, 2, &m),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(g_api->last_error(NULL),
                      "init of method forward: init: compile spec device "
                      "\"gpu0\" is not \"cuda\" or \"cuda:N\"");
  aotrun_program_dir_close(dir);
  program_fixture_remove(&p);
}

static void test_backend_wide_options(void **state) {
  (void)state;
  aotrun_option opt = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, " forward, ,decode "};
  assert_int_equal(g_api->set_option(NULL, &opt), AOTRUN_OK);
  aotrun_option out;
  assert_int_equal(g_api->get_option(NULL, "enable_cuda_graph_for_method",
                                     &out),
                   AOTRUN_OK);
  assert_int_equal(out.type, AOTRUN_OPTION_STRING);
  assert_string_equal(out.string_value, "forward,decode");
  aotrun_option b = {"share_weights", AOTRUN_OPTION_BOOL, 0, 0, NULL};
  assert_int_equal(g_api->set_option(NULL, &b), AOTRUN_OK);
  assert_int_equal(g_api->get_option(NULL, "share_weights", &out), AOTRUN_OK);
  assert_int_equal(out.bool_value, 0);
  b.bool_value = 1;
  assert_int_equal(g_api->set_option(NULL, &b), AOTRUN_OK);
  b.key = "shared_stream";
  b.type = AOTRUN_OPTION_INT;
  assert_int_equal(g_api->set_option(NULL, &b), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(g_api->last_error(NULL),
                      "option 'shared_stream' takes a BOOL, got a INT");
  b.key = "turbo";
  assert_int_equal(g_api->set_option(NULL, &b), AOTRUN_ERR_NOT_FOUND);
  assert_non_null(strstr(g_api->last_error(NULL),
                         "backend cuda has no option 'turbo'"));
  b.key = "recapture";
  b.type = AOTRUN_OPTION_BOOL;
  assert_int_equal(g_api->set_option(NULL, &b), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(g_api->last_error(NULL),
                      "option 'recapture' can only be set on a method handle");
  assert_int_equal(g_api->get_option(NULL, "cuda_graph_phase", &out),
                   AOTRUN_ERR_NOT_SUPPORTED);
  opt.string_value = "";
  assert_int_equal(g_api->set_option(NULL, &opt), AOTRUN_OK);
}

/* The policy that turns graphs off from the start: the fixture's
 * constants are all on the cpu. */
static void test_host_constant_policy_names_constant(void **state) {
  (void)state;
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_path, "cpu"), 0);
  aotrun_program_dir *dir = NULL;
  assert_int_equal(aotrun_program_dir_open(p.dir, &dir), AOTRUN_OK);
  aotrun_method_runner_config config = {
      .host = aotrun_program_dir_host_api(dir),
      .manifest = p.manifest,
      .manifest_size = p.manifest_size,
      .method = "forward",
      .device = "cpu",
  };
  aotrun_method_runner *r = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_method_runner_create(&config, &r, &err), AOTRUN_OK);
  assert_int_equal(aotrun_method_runner_num_host_constants(r), 4);
  assert_string_equal(aotrun_method_runner_host_constant(r, 0), "weight");
  char reason[256];
  assert_int_equal(aotrun_cuda_graph_forbid_reason(r, reason, sizeof reason),
                   1);
  assert_string_equal(reason,
                      "it keeps constant 'weight' (and 3 more) in host "
                      "memory");
  aotrun_method_runner_destroy(r);
  aotrun_program_dir_close(dir);
  program_fixture_remove(&p);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strstr(argv[i], "libaotrun_cuda")) g_plugin_path = argv[i];
    if (strstr(argv[i], "fixture_model")) g_model_path = argv[i];
  }
  if (g_plugin_path == NULL || g_model_path == NULL) {
    fprintf(stderr, "usage: %s libaotrun_cuda.so fixture_model.so\n", argv[0]);
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_and_exports),
      cmocka_unit_test(test_unavailable_with_reason),
      cmocka_unit_test(test_init_fails_cleanly),
      cmocka_unit_test(test_backend_wide_options),
      cmocka_unit_test(test_host_constant_policy_names_constant),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
