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
#include <pthread.h>
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

/* 1.1: execute_ex and synchronize are in the table and refuse a NULL
 * method without touching a device. */
static void test_execute_ex_in_table(void **state) {
  (void)state;
  assert_true(AOTRUN_TABLE_CAN(g_api, execute_ex));
  assert_true(AOTRUN_TABLE_CAN(g_api, synchronize));
  aotrun_execute_args args;
  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  assert_int_equal(g_api->execute_ex(NULL, &args),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(g_api->execute_ex(NULL, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(g_api->synchronize(NULL), AOTRUN_ERR_INVALID_ARGUMENT);
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
                      "init of method forward: compile spec device "
                      "\"gpu0\" is not N, \"cuda\" or \"cuda:N\"");
  /* "N" is a device: here CUDA itself is missing. */
  specs[1].value = "1";
  assert_int_equal(g_api->init_ex(g_api, aotrun_program_dir_host_api(dir),
                                  p.manifest, p.manifest_size, specs, 2, &m),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(g_api->last_error(NULL), "CUDA is not available"));
  specs[1].value = "-1";
  assert_int_equal(g_api->init(aotrun_program_dir_host_api(dir), p.manifest,
                               p.manifest_size, specs, 2, &m),
                   AOTRUN_ERR_INVALID_ARGUMENT);
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

/* ABI 1.1 identity and devices without a GPU: clear errors, no abort. */
static void test_identity_without_gpu(void **state) {
  (void)state;
  require_no_gpu();
  aotrun_backend_info info;
  assert_int_equal(aotrun_backend_get_info(g_backend, &info), AOTRUN_OK);
  print_message("build: %s\n", info.build);
  assert_string_equal(info.vendor, "aotrun");
  assert_string_equal(info.version, "0.1");
  assert_non_null(strstr(info.build, "CUDA runtime "));
  assert_non_null(strstr(info.build, ", driver "));
  int32_t n = -1;
  aotrun_status s = aotrun_backend_device_count(g_backend, &n);
  print_message("device_count: %d %s\n", (int)s, aotrun_host_last_error());
  assert_int_equal(n, 0);
  if (s != AOTRUN_OK) {
    assert_int_equal(s, AOTRUN_ERR_ACCESS_FAILED);
    assert_non_null(strstr(aotrun_host_last_error(),
                           "backend 'cuda': get_device_count failed (access "
                           "failed): cudaGetDeviceCount failed: "));
  }
  aotrun_device_info d;
  assert_int_not_equal(aotrun_backend_device_info(g_backend, 0, &d),
                       AOTRUN_OK);
  assert_non_null(strstr(aotrun_host_last_error(), "get_device_info"));
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_path, "cuda"), 0);
  aotrun_program_dir *dir = NULL;
  assert_int_equal(aotrun_program_dir_open(p.dir, &dir), AOTRUN_OK);
  char reason[256];
  aotrun_key_value spec = {"method", "forward"};
  assert_int_equal(aotrun_backend_can_run(g_backend,
                                          aotrun_program_dir_host_api(dir),
                                          p.manifest, p.manifest_size, &spec,
                                          1, reason, sizeof reason),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_non_null(strstr(reason, "CUDA is not available: "));
  aotrun_key_value bad[2] = {{"method", "forward"}, {"device", "cuda:x"}};
  assert_int_equal(aotrun_backend_can_run(g_backend, NULL, p.manifest,
                                          p.manifest_size, bad, 2, reason,
                                          sizeof reason),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(reason, "compile spec device \"cuda:x\" is not N, "
                              "\"cuda\" or \"cuda:N\"");
  assert_int_equal(aotrun_program_dir_num_mapped(dir), 0);
  aotrun_program_dir_close(dir);
  program_fixture_remove(&p);
}

/* The 1.0 backend-wide get_option: what one thread was given is not
 * overwritten by another thread's call (issue 17). */
static void *read_error_level(void *arg) {
  aotrun_option *out = arg;
  aotrun_option set = {"log_level", AOTRUN_OPTION_STRING, 0, 0, "error"};
  if (g_api->set_option(NULL, &set) == AOTRUN_OK)
    (void)g_api->get_option(NULL, "log_level", out);
  return NULL;
}

static void test_backend_get_option_per_thread(void **state) {
  (void)state;
  aotrun_option set = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, "decode"};
  assert_int_equal(g_api->set_option(NULL, &set), AOTRUN_OK);
  aotrun_option mine;
  assert_int_equal(g_api->get_option(NULL, "enable_cuda_graph_for_method",
                                     &mine),
                   AOTRUN_OK);
  aotrun_option theirs;
  memset(&theirs, 0, sizeof theirs);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, read_error_level, &theirs), 0);
  pthread_join(t, NULL);
  assert_string_equal(theirs.string_value, "error");
  set.string_value = "prefill";
  assert_int_equal(g_api->set_option(NULL, &set), AOTRUN_OK);
  assert_string_equal(mine.string_value, "decode"); /* still ours */
  /* The 1.1 form: the caller's buffer. */
  char buf[32];
  assert_int_equal(g_api->get_backend_option(
                       g_api, "enable_cuda_graph_for_method", &mine, buf,
                       sizeof buf),
                   AOTRUN_OK);
  assert_ptr_equal(mine.string_value, buf);
  assert_string_equal(buf, "prefill");
  set.string_value = "";
  assert_int_equal(g_api->set_backend_option(g_api, &set), AOTRUN_OK);
  set.key = "log_level";
  set.string_value = "info";
  assert_int_equal(g_api->set_option(NULL, &set), AOTRUN_OK);
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
      cmocka_unit_test(test_execute_ex_in_table),
      cmocka_unit_test(test_unavailable_with_reason),
      cmocka_unit_test(test_init_fails_cleanly),
      cmocka_unit_test(test_backend_wide_options),
      cmocka_unit_test(test_identity_without_gpu),
      cmocka_unit_test(test_backend_get_option_per_thread),
      cmocka_unit_test(test_host_constant_policy_names_constant),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
