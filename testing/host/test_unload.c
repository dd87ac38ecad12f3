/*
 * test_unload.c: unloading plugins through the host library (ABI 1.1
 * deinit): close and registry_destroy refuse while host methods are open
 * and leave everything working; deinit runs once per open, before dlclose,
 * never for a table whose struct_size lacks it; a failed init's handle is
 * never destroyed and its unknown status keeps its number; 100 load / run /
 * unload rounds in one process (LeakSanitizer checks them under asan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>

#include "plugin_api/aotrun_host.h"
#include "testing/host/test_paths.h"
#include "testing/plugins/minimal_ext.h"

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static aotrun_host_api g_host = {.abi_version = AOTRUN_ABI_VERSION,
                                 .struct_size = sizeof(aotrun_host_api)};

/* What the plugins' unload hook saw. */
typedef struct events {
  int deinits;
  int bogus_destroys;
} events;

static void on_event(void *ctx, int event) {
  events *e = ctx;
  if (event == MINIMAL_EVENT_DEINIT) e->deinits++;
  if (event == MINIMAL_EVENT_BOGUS_DESTROY) e->bogus_destroys++;
}

/* Hooks a loaded minimal backend. Reads get_extension straight from the
 * table on purpose: the 1.0-sized variants keep it outside struct_size. */
static void hook(const aotrun_backend *b, events *e) {
  const aotrun_backend_api *t = aotrun_backend_table(b);
  const minimal_unload_v1 *u = t->get_extension(MINIMAL_EXT_UNLOAD_V1);
  assert_non_null(u);
  u->set_hook(on_event, e);
}

static aotrun_registry *load(const char *file, events *e) {
  aotrun_registry *r = NULL;
  const aotrun_backend *b = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  if (aotrun_registry_load(r, test_path(file), &b) != AOTRUN_OK)
    fail_msg("load %s: %s", file, aotrun_host_last_error());
  hook(b, e);
  return r;
}

static aotrun_host_method *open_on(aotrun_registry *r, const char *backend) {
  aotrun_host_method *m = NULL;
  if (aotrun_host_method_open(r, backend, &g_host, "2", 1, NULL, 0, &m) !=
      AOTRUN_OK)
    fail_msg("open: %s", aotrun_host_last_error());
  return m;
}

static void run_once(aotrun_host_method *m) {
  float in[2] = {1, -3}, out[2] = {0, 0};
  int64_t shape[1] = {2}, out_shape[1] = {2};
  DLTensor x = {in, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor y = {out, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, out_shape, NULL, 0};
  if (aotrun_host_method_execute(m, &x, 1, &y, 1) != AOTRUN_OK)
    fail_msg("execute: %s", aotrun_host_last_error());
  assert_float_equal(out[0], 2.0f, 0);
  assert_float_equal(out[1], -6.0f, 0);
}

static int is_loaded(const char *file) {
  void *h = dlopen(test_path(file), RTLD_NOW | RTLD_NOLOAD);
  if (h != NULL) dlclose(h);
  return h != NULL;
}

static void test_destroy_with_open_method_fails_cleanly(void **state) {
  (void)state;
  events e = {0, 0};
  aotrun_registry *r = load("libminimal_plugin.so", &e);
  aotrun_host_method *m = open_on(r, "minimal");
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "backend 'minimal'");
  assert_contains(aotrun_host_last_error(), "still has 1 open host method");
  assert_contains(aotrun_host_last_error(), "nothing was unloaded");
  assert_int_equal(e.deinits, 0);
  /* Nothing changed: the method runs, the registry still finds it. */
  run_once(m);
  assert_int_equal(aotrun_registry_count(r), 1);
  aotrun_host_method *m2 = open_on(r, "minimal");
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "still has 2 open host methods");
  aotrun_host_method_close(m);
  aotrun_host_method_close(m2);
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_OK);
  assert_int_equal(e.deinits, 1);
  assert_int_equal(aotrun_registry_destroy(NULL), AOTRUN_OK);
}

/* All or nothing: the idle backend loaded first stays loaded too. */
static void test_destroy_is_all_or_nothing(void **state) {
  (void)state;
  events ea = {0, 0}, eb = {0, 0};
  aotrun_registry *r = load("libminimal_plugin.so", &ea);
  const aotrun_backend *b = NULL;
  assert_int_equal(
      aotrun_registry_load(r, test_path("libminimal_plugin_b.so"), &b),
      AOTRUN_OK);
  hook(b, &eb);
  aotrun_host_method *m = open_on(r, "minimal_b");
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "backend 'minimal_b'");
  assert_int_equal(ea.deinits + eb.deinits, 0);
  assert_true(is_loaded("libminimal_plugin.so"));
  /* A swap moves the count to the new backend. */
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal"), AOTRUN_OK);
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "backend 'minimal'");
  aotrun_host_method_close(m);
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_OK);
  assert_int_equal(ea.deinits, 1);
  assert_int_equal(eb.deinits, 1);
  assert_false(is_loaded("libminimal_plugin.so"));
  assert_false(is_loaded("libminimal_plugin_b.so"));
}

/* backend_close calls deinit once per open, even when two backends share
 * one library (the plugin pairs deinit with its entry-symbol calls). */
static void test_close_calls_deinit_per_open(void **state) {
  (void)state;
  events e = {0, 0};
  aotrun_backend *a = NULL, *b = NULL;
  const char *path = test_path("libminimal_plugin.so");
  assert_int_equal(aotrun_backend_open(path, AOTRUN_ABI_VERSION, &a),
                   AOTRUN_OK);
  assert_int_equal(aotrun_backend_open(path, AOTRUN_ABI_VERSION, &b),
                   AOTRUN_OK);
  hook(a, &e); /* one library: one hook for both */
  assert_int_equal(aotrun_backend_close(a), AOTRUN_OK);
  assert_int_equal(e.deinits, 1);
  assert_true(is_loaded("libminimal_plugin.so"));
  assert_int_equal(aotrun_backend_close(b), AOTRUN_OK);
  assert_int_equal(e.deinits, 2);
  assert_false(is_loaded("libminimal_plugin.so"));
  assert_int_equal(aotrun_backend_close(NULL), AOTRUN_OK);
}

/* A deinit pointer outside the table's struct_size is never called. */
static void test_deinit_outside_struct_size_not_called(void **state) {
  (void)state;
  events e = {0, 0};
  aotrun_backend *b = NULL;
  assert_int_equal(
      aotrun_backend_open(test_path("libminimal_plugin_older_minor.so"),
                          AOTRUN_ABI_VERSION, &b),
      AOTRUN_OK);
  assert_non_null(aotrun_backend_table(b)->deinit); /* set, but not covered */
  hook(b, &e);
  assert_int_equal(aotrun_backend_close(b), AOTRUN_OK);
  assert_int_equal(e.deinits, 0);
}

/* A refused table is not called again: no deinit either. */
static void test_refused_table_gets_no_deinit(void **state) {
  (void)state;
  aotrun_backend *b = NULL;
  assert_int_equal(aotrun_backend_open(test_path("libminimal_plugin_major2.so"),
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_ERR_VERSION_MISMATCH);
  assert_null(b);
  assert_false(is_loaded("libminimal_plugin_major2.so"));
}

/* init sets *out and fails with 42: the host reports INTERNAL with the
 * number, leaves *out NULL, never destroys the handle, counts nothing. */
static void test_failed_init_handle_is_not_destroyed(void **state) {
  (void)state;
  events e = {0, 0};
  aotrun_registry *r = load("libminimal_plugin_bad_init.so", &e);
  aotrun_host_method *m = (aotrun_host_method *)&e;
  assert_int_equal(aotrun_host_method_open(r, "minimal_bad_init", &g_host, "2",
                                           1, NULL, 0, &m),
                   AOTRUN_ERR_INTERNAL);
  assert_null(m);
  assert_contains(aotrun_host_last_error(), "unknown status 42");
  assert_contains(aotrun_host_last_error(), "init fails on purpose");
  assert_int_equal(e.bogus_destroys, 0);
  assert_int_equal(aotrun_registry_destroy(r), AOTRUN_OK); /* nothing open */
  assert_int_equal(e.bogus_destroys, 0);
}

/* Load, use and unload 100 times in one process; under --config=asan
 * LeakSanitizer checks that nothing of the rounds is left. */
static void test_load_use_unload_100_times(void **state) {
  (void)state;
  for (int round = 0; round < 100; round++) {
    events e = {0, 0};
    aotrun_registry *r = load("libminimal_plugin.so", &e);
    aotrun_host_method *m = open_on(r, "minimal");
    run_once(m);
    aotrun_host_method_close(m);
    assert_int_equal(aotrun_registry_destroy(r), AOTRUN_OK);
    assert_int_equal(e.deinits, 1);
    assert_false(is_loaded("libminimal_plugin.so"));
  }
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_destroy_with_open_method_fails_cleanly),
      cmocka_unit_test(test_destroy_is_all_or_nothing),
      cmocka_unit_test(test_close_calls_deinit_per_open),
      cmocka_unit_test(test_deinit_outside_struct_size_not_called),
      cmocka_unit_test(test_refused_table_gets_no_deinit),
      cmocka_unit_test(test_failed_init_handle_is_not_destroyed),
      cmocka_unit_test(test_load_use_unload_100_times),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
