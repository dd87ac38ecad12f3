/*
 * test_cpu_ref_identity.c: the cpu_ref plugin's ABI 1.1 members through the
 * host library: get_info, its one device (kDLCPU, memory from sysconf),
 * backend options through set/get_backend_option, and can_run on the
 * fixture program (yes) and on programs it cannot load (no method, a
 * library that is not one, an import the shim lacks).
 *
 * Arguments: libaotrun_cpu_ref.so, fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

static const char *g_plugin_path;
static const char *g_model_path;

typedef struct ctx {
  program_fixture program;
  aotrun_backend *backend;
  aotrun_program_dir *dir;
} ctx;

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static int setup(void **state) {
  ctx *c = calloc(1, sizeof *c);
  if (c == NULL || program_fixture_create(&c->program, g_model_path, "cpu"))
    return -1;
  if (aotrun_backend_open(g_plugin_path, AOTRUN_ABI_VERSION, &c->backend) !=
          AOTRUN_OK ||
      aotrun_program_dir_open(c->program.dir, &c->dir) != AOTRUN_OK) {
    fprintf(stderr, "setup: %s\n", aotrun_host_last_error());
    return -1;
  }
  *state = c;
  return 0;
}

static int teardown(void **state) {
  ctx *c = *state;
  aotrun_program_dir_close(c->dir);
  aotrun_backend_close(c->backend);
  program_fixture_remove(&c->program);
  free(c);
  return 0;
}

static void test_info_and_device(void **state) {
  ctx *c = *state;
  aotrun_backend_info info;
  assert_int_equal(aotrun_backend_get_info(c->backend, &info), AOTRUN_OK);
  assert_int_equal(info.struct_size, sizeof info);
  assert_string_equal(info.vendor, "aotrun");
  assert_true(strlen(info.version) > 0);
  assert_contains(info.build, "CPU");
  int32_t n = 0;
  assert_int_equal(aotrun_backend_device_count(c->backend, &n), AOTRUN_OK);
  assert_int_equal(n, 1);
  aotrun_device_info d;
  assert_int_equal(aotrun_backend_device_info(c->backend, 0, &d), AOTRUN_OK);
  assert_int_equal(d.device_type, kDLCPU);
  assert_int_equal(d.device_id, 0);
  assert_int_equal(d.compute_major, 0);
  uint64_t total = (uint64_t)sysconf(_SC_PHYS_PAGES) *
                   (uint64_t)sysconf(_SC_PAGESIZE);
  assert_int_equal(d.total_memory, total);
  assert_true(d.free_memory > 0 && d.free_memory <= d.total_memory);
  assert_contains(d.name, "host CPU");
  assert_int_equal(aotrun_backend_device_info(c->backend, 1, &d),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "cpu_ref: device 1 does not exist (1 device");
  assert_int_equal(aotrun_backend_device_info(c->backend, -1, &d),
                   AOTRUN_ERR_INVALID_ARGUMENT);
}

static void test_backend_options(void **state) {
  ctx *c = *state;
  aotrun_option o;
  char buf[64];
  assert_int_equal(
      aotrun_backend_get_option_buf(c->backend, "nope", &o, buf, sizeof buf),
      AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "backend cpu_ref has no option "
                                            "'nope'");
  assert_int_equal(aotrun_backend_get_option_buf(c->backend, "load_report",
                                                 &o, buf, sizeof buf),
                   AOTRUN_ERR_NOT_SUPPORTED);
  aotrun_option set = {.key = "load_report", .type = AOTRUN_OPTION_STRING,
                       .string_value = "x"};
  assert_int_equal(aotrun_backend_set_option(c->backend, &set),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "read-only");
}

static aotrun_status can_run(ctx *c, const char *manifest,
                             const char *method, char *reason, size_t size) {
  aotrun_key_value spec = {"method", method};
  return aotrun_backend_can_run(c->backend, aotrun_program_dir_host_api(c->dir),
                                manifest, strlen(manifest), &spec, 1, reason,
                                size);
}

/* The fixture manifest with `from` replaced by `to` (caller frees). */
static char *edited(const ctx *c, const char *from, const char *to) {
  const char *at = strstr(c->program.manifest, from);
  assert_non_null(at);
  size_t head = (size_t)(at - c->program.manifest);
  size_t n = strlen(c->program.manifest) - strlen(from) + strlen(to);
  char *s = malloc(n + 1);
  assert_non_null(s);
  memcpy(s, c->program.manifest, head);
  strcpy(s + head, to);
  strcat(s, at + strlen(from));
  return s;
}

static void test_can_run(void **state) {
  ctx *c = *state;
  char reason[512] = "x";
  assert_int_equal(can_run(c, c->program.manifest, "forward", reason,
                           sizeof reason),
                   AOTRUN_OK);
  assert_string_equal(reason, "");
  assert_int_equal(aotrun_program_dir_num_mapped(c->dir), 0); /* released */
  /* Without host services only the manifest is checked. */
  aotrun_key_value spec = {"method", "forward"};
  assert_int_equal(aotrun_backend_can_run(c->backend, NULL,
                                          c->program.manifest,
                                          c->program.manifest_size, &spec, 1,
                                          reason, sizeof reason),
                   AOTRUN_OK);
  assert_int_equal(can_run(c, c->program.manifest, "decode", reason,
                           sizeof reason),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(reason, "decode");
  assert_contains(aotrun_host_last_error(),
                  "backend 'cpu_ref' cannot run the program (not found)");
  assert_int_equal(can_run(c, "{not json", "forward", reason, sizeof reason),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(reason, "malformed manifest");
}

static void test_can_run_library_and_imports(void **state) {
  ctx *c = *state;
  char reason[512];
  /* The weights file as the library: not a shared library. */
  char *m = edited(c, "\"library\": \"forward.so\"",
                   "\"library\": \"weights.safetensors\"");
  assert_int_equal(can_run(c, m, "forward", reason, sizeof reason),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(reason, "weights.safetensors");
  free(m);
  m = edited(c, "\"library\": \"forward.so\"", "\"library\": \"gone.so\"");
  assert_int_equal(can_run(c, m, "forward", reason, sizeof reason),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(reason, "model library gone.so of method forward");
  free(m);
  /* Imports the shim has pass; one it lacks is named. */
  m = edited(c, "\"library\": \"forward.so\"",
             "\"library\": \"forward.so\", \"aoti_torch_imports\": "
             "[\"aoti_torch_empty_strided\", \"aoti_torch_no_such_op\"]");
  assert_int_equal(can_run(c, m, "forward", reason, sizeof reason),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(reason,
                      "method forward imports 1 aoti_torch_* function(s) the "
                      "shim library does not export (first: "
                      "aoti_torch_no_such_op)");
  free(m);
  /* Checked against aotrun's shim, never a libtorch that comes first in the
   * global scope (the --torch-first run): the shim has index_Tensor and
   * (fake) libtorch lacks it; only (fake) libtorch has fixture_no_such_op. */
  m = edited(c, "\"library\": \"forward.so\"",
             "\"library\": \"forward.so\", \"aoti_torch_imports\": "
             "[\"aoti_torch_empty_strided\", \"aoti_torch_cuda_index_Tensor\"]");
  assert_int_equal(can_run(c, m, "forward", reason, sizeof reason),
                   AOTRUN_OK);
  free(m);
  m = edited(c, "\"library\": \"forward.so\"",
             "\"library\": \"forward.so\", \"aoti_torch_imports\": "
             "[\"aoti_torch_fixture_no_such_op\"]");
  assert_int_equal(can_run(c, m, "forward", reason, sizeof reason),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(reason, "(first: aoti_torch_fixture_no_such_op)");
  free(m);
  assert_int_equal(aotrun_program_dir_num_mapped(c->dir), 0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s libaotrun_cpu_ref.so fixture_model.so\n",
            argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  g_model_path = argv[2];
  /* --torch-first FAKE_LIBTORCH: "libtorch" global before the plugin and
   * its shim are loaded, as when Python imported torch first. */
  if (argc >= 5 && strcmp(argv[3], "--torch-first") == 0 &&
      dlopen(argv[4], RTLD_NOW | RTLD_GLOBAL) == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", argv[4], dlerror());
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_info_and_device, setup, teardown),
      cmocka_unit_test_setup_teardown(test_backend_options, setup, teardown),
      cmocka_unit_test_setup_teardown(test_can_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_can_run_library_and_imports, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
