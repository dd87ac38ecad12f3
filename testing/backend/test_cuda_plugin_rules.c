/*
 * test_cuda_plugin_rules.c: ABI rules of the real CUDA plugin that need no
 * GPU: every call given a NULL method handle fails with
 * AOTRUN_ERR_INVALID_ARGUMENT and a message (last_error(NULL) on the
 * calling thread) that names the call; destroy(NULL) is a no-op; the
 * plugin unloads (deinit, then dlclose: nothing keeps it mapped) and loads
 * and works again, several times in one process.
 *
 * Arguments: libaotrun_cuda.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"

static const char *g_plugin_path;

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static aotrun_backend *open_plugin(void) {
  aotrun_backend *b = NULL;
  if (aotrun_backend_open(g_plugin_path, AOTRUN_ABI_VERSION, &b) != AOTRUN_OK)
    fail_msg("cannot load %s: %s", g_plugin_path, aotrun_host_last_error());
  return b;
}

/* The call failed with INVALID_ARGUMENT and said so, naming `call`. */
static void expect_null_handle(const aotrun_backend_api *api, aotrun_status s,
                               const char *call) {
  assert_int_equal(s, AOTRUN_ERR_INVALID_ARGUMENT);
  const char *msg = api->last_error(NULL);
  assert_non_null(msg);
  assert_contains(msg, call);
  assert_contains(msg, "the method handle is NULL");
}

static void test_null_handle_calls_set_a_message(void **state) {
  (void)state;
  aotrun_backend *b = open_plugin();
  const aotrun_backend_api *api = aotrun_backend_table(b);
  float x = 1;
  int64_t shape[1] = {1};
  DLTensor t = {&x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  expect_null_handle(api, api->execute(NULL, &t, 1, &t, 1), "execute");
  size_t n = 7;
  expect_null_handle(api, api->get_num_io(NULL, AOTRUN_IO_INPUT, &n),
                     "get_num_io");
  aotrun_io_info info = {.struct_size = sizeof info};
  expect_null_handle(api, api->get_io_info(NULL, AOTRUN_IO_INPUT, 0, &info),
                     "get_io_info");
  api->destroy(NULL); /* accepted */
  /* set_option/get_option with NULL are backend-wide: their own errors. */
  assert_int_equal(api->set_option(NULL, NULL), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(api->last_error(NULL), "option is NULL");
  assert_int_equal(api->get_option(NULL, "graph_shapes", NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(api->last_error(NULL), "out is NULL");
  assert_int_equal(aotrun_backend_close(b), AOTRUN_OK);
}

static int plugin_is_loaded(void) {
  void *h = dlopen(g_plugin_path, RTLD_NOW | RTLD_NOLOAD);
  if (h != NULL) dlclose(h);
  return h != NULL;
}

/* deinit runs on every close (without a GPU it has little to free) and
 * the library really goes: a new load calls the entry symbol afresh. */
static void test_unload_and_load_again(void **state) {
  (void)state;
  for (int round = 0; round < 5; round++) {
    aotrun_backend *b = open_plugin();
    aotrun_backend *again = open_plugin(); /* the same library twice */
    const aotrun_backend_api *api = aotrun_backend_table(b);
    assert_non_null(api->deinit);
    assert_true(AOTRUN_TABLE_CAN(api, deinit));
    assert_string_equal(api->get_name(), "cuda");
    char reason[256];
    (void)api->is_available(reason, sizeof reason);
    assert_int_equal(aotrun_backend_close(again), AOTRUN_OK);
    assert_true(plugin_is_loaded()); /* b still holds it */
    assert_string_equal(api->get_name(), "cuda");
    assert_int_equal(aotrun_backend_close(b), AOTRUN_OK);
    if (plugin_is_loaded())
      fail_msg("round %d: %s is still mapped after its last close", round,
               g_plugin_path);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s libaotrun_cuda.so\n", argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_handle_calls_set_a_message),
      cmocka_unit_test(test_unload_and_load_again),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
