/*
 * test_abi_1_0_host.c: a host built against the frozen ABI 1.0 header
 * (testing/plugins/abi_1_0/) loads plugins built with the 1.1 header and
 * uses them exactly as a 1.0 host does: major check, struct_size at least
 * the 1.0 table, every call of 1.0, a 1.0-sized io_info (and a smaller
 * one) that the plugin must not write past.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>

#include "testing/host/test_paths.h"
#include "testing/plugins/abi_1_0/aotrun_plugin_1_0.h"

_Static_assert(AOTRUN_ABI_VERSION_MINOR == 0, "built with the 1.0 header");

#define V1_0_SIZE (offsetof(aotrun_backend_api, last_error) + sizeof(void *))

typedef struct loaded {
  void *lib;
  const aotrun_backend_api *t;
} loaded;

/* What a 1.0 host's loader does. */
static loaded load_as_1_0(const char *file) {
  loaded l = {dlopen(test_path(file), RTLD_NOW | RTLD_LOCAL), NULL};
  if (l.lib == NULL) fail_msg("dlopen %s: %s", file, dlerror());
  void *sym = dlsym(l.lib, AOTRUN_PLUGIN_ENTRY_SYMBOL);
  assert_non_null(sym);
  aotrun_plugin_get_api_fn entry;
  memcpy(&entry, &sym, sizeof entry);
  assert_int_equal(entry(AOTRUN_ABI_VERSION, &l.t), AOTRUN_OK);
  assert_non_null(l.t);
  assert_int_equal(AOTRUN_VERSION_MAJOR(l.t->abi_version), 1);
  assert_true(AOTRUN_VERSION_MINOR(l.t->abi_version) >= 1); /* newer */
  assert_true(l.t->struct_size >= V1_0_SIZE);
  assert_true(AOTRUN_TABLE_HAS(l.t, aotrun_backend_api, last_error));
  return l;
}

static void run_1_0_calls(const char *file, const char *name) {
  loaded l = load_as_1_0(file);
  const aotrun_backend_api *t = l.t;
  assert_string_equal(t->get_name(), name);
  char reason[32];
  assert_int_equal(t->is_available(reason, sizeof reason), 1);
  aotrun_host_api host = {.abi_version = AOTRUN_ABI_VERSION,
                          .struct_size = sizeof host};
  aotrun_method *m = NULL;
  assert_int_equal(t->init(&host, "2", 1, NULL, 0, &m), AOTRUN_OK);
  size_t n = 0;
  assert_int_equal(t->get_num_io(m, AOTRUN_IO_INPUT, &n), AOTRUN_OK);
  assert_int_equal(n, 1);
  /* A 1.0 io_info with a guard after it: the plugin writes at most our
   * size and reports min(ours, its own) = ours. */
  struct {
    aotrun_io_info info;
    unsigned char guard[32];
  } box;
  memset(&box, 0xCD, sizeof box);
  box.info.struct_size = sizeof box.info;
  assert_int_equal(t->get_io_info(m, AOTRUN_IO_INPUT, 0, &box.info),
                   AOTRUN_OK);
  assert_int_equal(box.info.struct_size, sizeof box.info);
  assert_string_equal(box.info.name, "x");
  assert_int_equal(box.info.shape[0], AOTRUN_DYNAMIC_DIM);
  for (size_t i = 0; i < sizeof box.guard; i++)
    assert_int_equal(box.guard[i], 0xCD);
  /* Options: aotrun_option is the same size in both builds. */
  aotrun_option off = {.key = "offset", .type = AOTRUN_OPTION_INT,
                       .int_value = 10};
  assert_int_equal(t->set_option(m, &off), AOTRUN_OK);
  aotrun_option got;
  assert_int_equal(t->get_option(m, "offset", &got), AOTRUN_OK);
  assert_int_equal(got.int_value, 10);
  float x[3] = {1, 2, 3}, y[3] = {0};
  int64_t xs[1] = {3}, ys[1] = {3};
  DLTensor in = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, xs, NULL, 0};
  DLTensor out = {y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, ys, NULL, 0};
  assert_int_equal(t->execute(m, &in, 1, &out, 1), AOTRUN_OK);
  assert_float_equal(y[2], 16.0f, 0);
  assert_string_equal(t->last_error(m), "");
  t->destroy(m);
  dlclose(l.lib);
}

static void test_1_1_plugin_in_1_0_host(void **state) {
  (void)state;
  run_1_0_calls("libminimal_plugin.so", "minimal");
}

static void test_1_2_plugin_in_1_0_host(void **state) {
  (void)state;
  run_1_0_calls("libminimal_plugin_newer_minor.so", "minimal_newer");
}

/* A 1.1 library of two backends (the list symbol, which a 1.0 host does
 * not know): through the entry symbol it is its first backend, whose 1.0
 * members work without `self`. */
static void test_list_plugin_in_1_0_host(void **state) {
  (void)state;
  loaded l = load_as_1_0("libpair_plugin.so");
  const aotrun_backend_api *t = l.t;
  assert_string_equal(t->get_name(), "pair_a");
  char reason[32];
  assert_int_equal(t->is_available(reason, sizeof reason), 1);
  aotrun_host_api host = {.abi_version = AOTRUN_ABI_VERSION,
                          .struct_size = sizeof host};
  aotrun_method *m = NULL;
  assert_int_equal(t->init(&host, "pair", 4, NULL, 0, &m), AOTRUN_OK);
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  int64_t xs[1] = {4}, ys[1] = {4};
  DLTensor in = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, xs, NULL, 0};
  DLTensor out = {y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, ys, NULL, 0};
  assert_int_equal(t->execute(m, &in, 1, &out, 1), AOTRUN_OK);
  assert_float_equal(y[3], 8.0f, 0); /* pair_a: 2x */
  t->destroy(m);
  /* Its backend-wide 1.0 option calls point it to the 1.1 ones. */
  aotrun_option off = {.key = "offset", .type = AOTRUN_OPTION_INT,
                       .int_value = 1};
  assert_int_equal(t->set_option(NULL, &off), AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(t->last_error(NULL),
                      "use set_backend_option for backend-wide options");
  dlclose(l.lib);
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_1_1_plugin_in_1_0_host),
      cmocka_unit_test(test_1_2_plugin_in_1_0_host),
      cmocka_unit_test(test_list_plugin_in_1_0_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
