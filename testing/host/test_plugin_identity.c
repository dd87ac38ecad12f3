/*
 * test_plugin_identity.c: ABI 1.1's context, identity, devices, can_run and
 * list symbol through the host library: the two-backend pair plugin (each
 * backend found by name and run, each with its own backend options), its
 * broken variants, and what a plugin without the members gives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "plugin_api/aotrun_host.h"
#include "testing/host/test_paths.h"

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static aotrun_host_api g_host = {.abi_version = AOTRUN_ABI_VERSION,
                                 .struct_size = sizeof(aotrun_host_api)};

static aotrun_registry *load_pair(void) {
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  const aotrun_backend *first = NULL;
  aotrun_status s =
      aotrun_registry_load(r, test_path("libpair_plugin.so"), &first);
  if (s != AOTRUN_OK) fail_msg("load: %s", aotrun_host_last_error());
  assert_string_equal(aotrun_backend_name(first), "pair_a");
  return r;
}

/* Runs program `prog` on `backend` with x = {1,2,3,4}; returns y[1]. */
static float run_on(aotrun_registry *r, const char *backend,
                    const char *prog) {
  aotrun_host_method *m = NULL;
  aotrun_status s = aotrun_host_method_open(r, backend, &g_host, prog,
                                            strlen(prog), NULL, 0, &m);
  if (s != AOTRUN_OK) fail_msg("open: %s", aotrun_host_last_error());
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  int64_t shape[1] = {4}, yshape[1] = {4};
  DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 1,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor out = in;
  out.data = y;
  out.shape = yshape;
  s = aotrun_host_method_execute(m, &in, 1, &out, 1);
  if (s != AOTRUN_OK) fail_msg("execute: %s", aotrun_host_last_error());
  aotrun_host_method_close(m);
  return y[1];
}

static void test_list_registers_both_and_runs_each(void **state) {
  (void)state;
  aotrun_registry *r = load_pair();
  assert_int_equal(aotrun_registry_count(r), 2);
  const aotrun_backend *a = NULL, *b = NULL;
  assert_int_equal(aotrun_registry_find(r, "pair_a", &a), AOTRUN_OK);
  assert_int_equal(aotrun_registry_find(r, "pair_b", &b), AOTRUN_OK);
  assert_ptr_equal(aotrun_registry_at(r, 1), b);
  assert_string_equal(aotrun_backend_path(a), aotrun_backend_path(b));
  /* init_ex gets each table: 2x and 3x. */
  assert_float_equal(run_on(r, "pair_a", "pair"), 4.0f, 0);
  assert_float_equal(run_on(r, "pair_b", "pair"), 6.0f, 0);
  /* Each backend's options are its own (backend_data, not globals). */
  aotrun_option o = {.key = "offset", .type = AOTRUN_OPTION_INT,
                     .int_value = 10};
  assert_int_equal(aotrun_backend_set_option(a, &o), AOTRUN_OK);
  assert_float_equal(run_on(r, "pair_a", "pair"), 14.0f, 0);
  assert_float_equal(run_on(r, "pair_b", "pair"), 6.0f, 0);
  aotrun_option got;
  char buf[64];
  assert_int_equal(aotrun_backend_get_option_buf(b, "offset", &got, buf,
                                                 sizeof buf),
                   AOTRUN_OK);
  assert_int_equal(got.int_value, 0);
  /* Loading the library again: its names are taken, nothing added. */
  assert_int_equal(aotrun_registry_load(r, test_path("libpair_plugin.so"),
                                        NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "backend 'pair_a'");
  assert_int_equal(aotrun_registry_count(r), 2);
  aotrun_registry_destroy(r);
}

static void test_backend_option_buffer(void **state) {
  (void)state;
  aotrun_registry *r = load_pair();
  const aotrun_backend *b = aotrun_registry_at(r, 1);
  aotrun_option o = {.key = "label", .type = AOTRUN_OPTION_STRING,
                     .string_value = "seven chars"};
  assert_int_equal(aotrun_backend_set_option(b, &o), AOTRUN_OK);
  aotrun_option got;
  char buf[32];
  assert_int_equal(
      aotrun_backend_get_option_buf(b, "label", &got, buf, sizeof buf),
      AOTRUN_OK);
  assert_ptr_equal(got.string_value, buf);
  assert_string_equal(buf, "seven chars");
  assert_string_equal(got.key, "label");
  /* Too small: the plugin's status and both sizes. */
  char small[4];
  assert_int_equal(
      aotrun_backend_get_option_buf(b, "label", &got, small, sizeof small),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "backend 'pair_b': get_option 'label' failed: backend "
                  "pair_b: label needs 12 bytes, the buffer has 4");
  assert_int_equal(aotrun_backend_get_option_buf(b, "nope", &got, buf,
                                                 sizeof buf),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "pair_b has no option 'nope'");
  assert_int_equal(aotrun_backend_get_option_buf(b, "label", &got, NULL, 8),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_registry_destroy(r);
}

/* A 1.0-style plugin (no get_backend_option): its string is copied. */
static void test_option_buffer_on_1_0_plugin(void **state) {
  (void)state;
  aotrun_backend *b = NULL;
  assert_int_equal(aotrun_backend_open(test_path("libminimal_plugin_abi_1_0.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_OK);
  aotrun_option o = {.key = "label", .type = AOTRUN_OPTION_STRING,
                     .string_value = "hello"};
  assert_int_equal(aotrun_backend_set_option(b, &o), AOTRUN_OK);
  aotrun_option got;
  char buf[16];
  assert_int_equal(
      aotrun_backend_get_option_buf(b, "label", &got, buf, sizeof buf),
      AOTRUN_OK);
  assert_ptr_equal(got.string_value, buf);
  assert_string_equal(buf, "hello");
  char small[3];
  assert_int_equal(
      aotrun_backend_get_option_buf(b, "label", &got, small, sizeof small),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "option 'label' is 6 bytes with its terminator, the "
                  "buffer 3");
  /* The old form still works. */
  assert_int_equal(aotrun_backend_get_option(b, "label", &got), AOTRUN_OK);
  assert_string_equal(got.string_value, "hello");
  aotrun_backend_close(b);
}

static void test_info_and_devices(void **state) {
  (void)state;
  aotrun_registry *r = load_pair();
  const aotrun_backend *a = aotrun_registry_at(r, 0);
  aotrun_backend_info info;
  assert_int_equal(aotrun_backend_get_info(a, &info), AOTRUN_OK);
  assert_int_equal(info.struct_size, sizeof info);
  assert_string_equal(info.version, "1.1.0");
  assert_string_equal(info.vendor, "aotrun tests");
  assert_string_equal(info.build, "pair plugin, y = 2x + offset");
  int32_t n = -1;
  assert_int_equal(aotrun_backend_device_count(a, &n), AOTRUN_OK);
  assert_int_equal(n, 1);
  aotrun_device_info d;
  assert_int_equal(aotrun_backend_device_info(a, 0, &d), AOTRUN_OK);
  assert_int_equal(d.device_type, kDLCPU);
  assert_string_equal(d.name, "pair_a device");
  assert_int_equal(d.total_memory, 1u << 20);
  assert_int_equal(aotrun_backend_device_info(a, 3, &d),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'pair_a': get_device_info failed (invalid "
                      "argument): backend pair_a: device 3 does not exist (1 "
                      "device)");
  aotrun_registry_destroy(r);
}

static void test_can_run(void **state) {
  (void)state;
  aotrun_registry *r = load_pair();
  const aotrun_backend *a = aotrun_registry_at(r, 0);
  char reason[128];
  assert_int_equal(aotrun_backend_can_run(a, &g_host, "pair", 4, NULL, 0,
                                          reason, sizeof reason),
                   AOTRUN_OK);
  assert_int_equal(aotrun_backend_can_run(a, &g_host, "pair:pair_b", 11, NULL,
                                          0, reason, sizeof reason),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(reason,
                      "backend pair_a: the program is for backend pair_b");
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'pair_a' cannot run the program (not "
                      "supported): backend pair_a: the program is for "
                      "backend pair_b");
  /* The specs reach can_run. */
  aotrun_key_value dev = {"device", "2"};
  assert_int_equal(aotrun_backend_can_run(a, &g_host, "pair", 4, &dev, 1,
                                          reason, sizeof reason),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(reason, "backend pair_a has only device 0 (compile "
                              "spec device \"2\")");
  /* A short reason buffer is truncated and terminated. */
  char tiny[8];
  assert_int_equal(aotrun_backend_can_run(a, NULL, "x", 1, NULL, 0, tiny,
                                          sizeof tiny),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(tiny, "backend");
  assert_int_equal(aotrun_backend_can_run(a, NULL, NULL, 3, NULL, 0, NULL, 0),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_registry_destroy(r);
}

/* A plugin without the 1.1 members: NOT_SUPPORTED naming both. */
static void test_members_missing(void **state) {
  (void)state;
  aotrun_backend *b = NULL;
  assert_int_equal(aotrun_backend_open(test_path("libminimal_plugin_abi_1_0.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_OK);
  aotrun_backend_info info;
  assert_int_equal(aotrun_backend_get_info(b, &info),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal_1_0' has no get_info (its table is "
                      "ABI 1.0)");
  int32_t n = 7;
  assert_int_equal(aotrun_backend_device_count(b, &n),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(n, 0);
  assert_contains(aotrun_host_last_error(), "has no get_device_count");
  aotrun_device_info d;
  assert_int_equal(aotrun_backend_device_info(b, 0, &d),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "has no get_device_info");
  char reason[64];
  assert_int_equal(aotrun_backend_can_run(b, NULL, "2", 1, NULL, 0, reason,
                                          sizeof reason),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(),
                  "backend 'minimal_1_0' has no can_run");
  aotrun_backend_close(b);
  /* A 1.1 table that leaves the members NULL. */
  assert_int_equal(aotrun_backend_open(test_path("libminimal_plugin.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_OK);
  assert_int_equal(aotrun_backend_get_info(b, &info),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal' has no get_info (its table is ABI "
                      "1.1, the member is NULL)");
  aotrun_backend_close(b);
}

static void test_open_with_list_symbol(void **state) {
  (void)state;
  /* Entry symbol present: backend_open gives its (first) backend. */
  aotrun_backend *b = NULL;
  assert_int_equal(aotrun_backend_open(test_path("libpair_plugin.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_OK);
  assert_string_equal(aotrun_backend_name(b), "pair_a");
  aotrun_backend_close(b);
  /* Only the list symbol, two backends: refused, naming them. */
  assert_int_equal(aotrun_backend_open(test_path("libpair_plugin_list_only.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(b);
  assert_contains(aotrun_host_last_error(),
                  "offers 2 backends (pair_a, pair_b) through "
                  "aotrun_plugin_get_backends and has no "
                  "aotrun_plugin_get_api: open it with "
                  "aotrun_backend_open_all or aotrun_registry_load");
  /* open_all: both; they share the library, closed one at a time. */
  aotrun_backend **all = NULL;
  size_t n = 0;
  assert_int_equal(
      aotrun_backend_open_all(test_path("libpair_plugin_list_only.so"),
                              AOTRUN_ABI_VERSION, &all, &n),
      AOTRUN_OK);
  assert_int_equal(n, 2);
  assert_string_equal(aotrun_backend_name(all[1]), "pair_b");
  aotrun_backend_close(all[0]);
  all[0] = NULL;
  aotrun_backend_info info;
  assert_int_equal(aotrun_backend_get_info(all[1], &info), AOTRUN_OK);
  assert_string_equal(info.build, "pair plugin, y = 3x + offset");
  aotrun_backend_close_all(all, n); /* accepts the NULL entry */
  /* open_all on a one-backend plugin: that one. */
  assert_int_equal(aotrun_backend_open_all(test_path("libminimal_plugin.so"),
                                           AOTRUN_ABI_VERSION, &all, &n),
                   AOTRUN_OK);
  assert_int_equal(n, 1);
  assert_string_equal(aotrun_backend_name(all[0]), "minimal");
  aotrun_backend_close_all(all, n);
  aotrun_backend_close_all(NULL, 3);
}

static void test_bad_list_tables(void **state) {
  (void)state;
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  const char *bad = test_path("libpair_plugin_bad_second.so");
  assert_int_equal(aotrun_registry_load(r, bad, NULL),
                   AOTRUN_ERR_VERSION_MISMATCH);
  assert_contains(aotrun_host_last_error(), "libpair_plugin_bad_second.so, "
                                            "backend 2 of 2 (ABI 1.1): "
                                            "backend table is 16 bytes");
  assert_int_equal(aotrun_registry_count(r), 0); /* all or nothing */
  assert_int_equal(
      aotrun_registry_load(r, test_path("libpair_plugin_dup_name.so"), NULL),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "backends 1 and 2 are both named 'pair_a'");
  assert_int_equal(aotrun_registry_count(r), 0);
  /* The list-only library registers both. */
  assert_int_equal(aotrun_registry_load(
                       r, test_path("libpair_plugin_list_only.so"), NULL),
                   AOTRUN_OK);
  assert_int_equal(aotrun_registry_count(r), 2);
  /* A second library with a name already taken: none of it is added. */
  assert_int_equal(aotrun_registry_load(r, test_path("libpair_plugin.so"),
                                        NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(aotrun_registry_count(r), 2);
  aotrun_registry_destroy(r);
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_registers_both_and_runs_each),
      cmocka_unit_test(test_backend_option_buffer),
      cmocka_unit_test(test_option_buffer_on_1_0_plugin),
      cmocka_unit_test(test_info_and_devices),
      cmocka_unit_test(test_can_run),
      cmocka_unit_test(test_members_missing),
      cmocka_unit_test(test_open_with_list_symbol),
      cmocka_unit_test(test_bad_list_tables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
