/*
 * test_torch_isolation.c: a model library loaded in a process where
 * "libtorch" (fake_libtorch.so: the same aoti_torch_* names, every tensor
 * call fails and is counted) was loaded RTLD_GLOBAL before the shim, so it
 * comes first in the global scope. The model must call aotrun's shim only
 * (docs/loading.md, "Isolation from libtorch"); an import only libtorch
 * has is refused before dlopen, all such names at once.
 *
 * This binary links neither the shim nor libtorch: main() opens them in
 * that order, as Python does when torch is imported before aotrun.
 *
 * argv: fake_libtorch.so libaotrun_shim.so fixture_model.so
 *       fixture_model_now.so fixture_unknown_import.so fake_plugin.so
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/load_report.h"
#include "aot_loader/model_library.h"
#include "testing/loader/loader_test_util.h"

enum { LAZY, NOW, UNKNOWN_IMPORT, NUM_MODELS };
static const char *g_probe_path;
static test_bytes g_models[NUM_MODELS];
static void *g_torch, *g_shim;

typedef int (*count_fn)(void);
typedef int32_t (*empty_fn)(int64_t, const int64_t *, const int64_t *,
                            int32_t, int32_t, int32_t, AtenTensorHandle *);
typedef int32_t (*data_fn)(AtenTensorHandle, void **);
typedef int32_t (*code_fn)(void);
typedef int32_t (*dim_fn)(AtenTensorHandle, int64_t *);

/* A function of the shim (never through the global scope, where the fake
 * libtorch comes first). */
static void *shim(const char *name) {
  void *p = dlsym(g_shim, name);
  if (p == NULL) fail_msg("the shim has no %s", name);
  return p;
}

static int torch_tensor_calls(void) {
  count_fn f;
  void *p = dlsym(g_torch, "fake_libtorch_tensor_calls");
  memcpy(&f, &p, sizeof f);
  return f();
}

/* x [2, 4] float32 on the CPU, made by the shim. */
static AtenTensorHandle shim_input(void) {
  empty_fn empty;
  data_fn data;
  code_fn f32, cpu;
  void *p = shim("aoti_torch_empty_strided");
  memcpy(&empty, &p, sizeof p);
  p = shim("aoti_torch_get_data_ptr");
  memcpy(&data, &p, sizeof p);
  p = shim("aoti_torch_dtype_float32");
  memcpy(&f32, &p, sizeof p);
  p = shim("aoti_torch_device_type_cpu");
  memcpy(&cpu, &p, sizeof p);
  int64_t sizes[2] = {2, 4}, strides[2] = {4, 1};
  AtenTensorHandle t = NULL;
  assert_int_equal(empty(2, sizes, strides, f32(), cpu(), 0, &t), 0);
  float *x = NULL;
  assert_int_equal(data(t, (void **)&x), 0);
  for (int i = 0; i < 8; i++) x[i] = (float)i;
  return t;
}

/* Loads, fills the constants from a zero blob (the model allocates them
 * through aoti_torch_empty_strided), runs twice; all through the shim. */
static void load_and_run(int which) {
  test_tmpdir_begin();
  int torch_before = torch_tensor_calls();
  aotrun_load_report report;
  aotrun_load_report_init(&report);
  aotrun_model_library_config c = {.device = "cpu", .name = "forward.so",
                                   .report = &report};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_model_library_load_with(
      g_models[which].data, g_models[which].size, &c, &lib, &err);
  if (st != AOTRUN_OK) fail_msg("load failed (%d): %s", st, err.message);
  assert_int_equal(report.shim_imports, 16);
  /* The dynamic loader bound them to "libtorch": re-pointed. */
  assert_true(report.shim_rebound > 0);
  uint64_t size = 0;
  assert_int_equal(aotrun_model_library_blob_size(lib, &size, &err), AOTRUN_OK);
  unsigned char *blob = calloc(1, size);
  assert_non_null(blob);
  st = aotrun_model_library_load_constants_blob_sized(lib, blob, size, &err);
  free(blob);
  if (st != AOTRUN_OK) fail_msg("constants failed (%d): %s", st, err.message);
  for (int run = 0; run < 2; run++) {
    AtenTensorHandle in[1] = {shim_input()};
    AtenTensorHandle out[2] = {NULL, NULL};
    st = aotrun_model_library_run(lib, in, 1, out, 2, NULL, &err);
    if (st != AOTRUN_OK) fail_msg("run failed (%d): %s", st, err.message);
    dim_fn dim;
    void *p = shim("aoti_torch_get_dim");
    memcpy(&dim, &p, sizeof p);
    int64_t d = 0;
    assert_int_equal(dim(out[0], &d), 0);
    assert_int_equal(d, 2);
    /* The run took the input handle over (AOTInductor steals inputs). */
    aotrun_model_library_delete_outputs(out, 2);
  }
  aotrun_model_library_destroy(lib);
  assert_int_equal(torch_tensor_calls(), torch_before); /* never called */
  assert_int_equal(test_tmpdir_count(), 0);
  test_tmpdir_end();
}

static void test_lazy_binding_library_calls_the_shim(void **state) {
  (void)state;
  load_and_run(LAZY);
}

/* -z now: the GOT is in RELRO pages, read-only by the time dlopen returns. */
static void test_relro_library_calls_the_shim(void **state) {
  (void)state;
  load_and_run(NOW);
}

/* A plugin-like library (fake_plugin.so: aotrun's loader linked in, one
 * aoti_torch_* import of its own) opened RTLD_LOCAL after "libtorch" was
 * made global: the dynamic loader binds its import to libtorch; its first
 * model load must point it at the shim (self_binding.c), as the CUDA
 * plugin's own tensor calls must reach the shim. */
typedef void *(*addr_fn)(void);
typedef int (*probe_load_fn)(const void *, size_t);

static void test_plugin_imports_bound_to_the_shim(void **state) {
  (void)state;
  test_tmpdir_begin();
  void *plugin = dlopen(g_probe_path, RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) fail_msg("cannot open %s: %s", g_probe_path, dlerror());
  addr_fn get_dim_addr;
  probe_load_fn load;
  void *p = dlsym(plugin, "fake_plugin_get_dim_address");
  memcpy(&get_dim_addr, &p, sizeof p);
  p = dlsym(plugin, "fake_plugin_load");
  memcpy(&load, &p, sizeof p);
  assert_non_null(get_dim_addr);
  assert_non_null(load);
  void *torch_fn = dlsym(g_torch, "aoti_torch_get_dim");
  void *shim_fn = dlsym(g_shim, "aoti_torch_get_dim");
  assert_ptr_equal(get_dim_addr(), torch_fn); /* what ld.so did */
  assert_int_equal(load(g_models[NOW].data, g_models[NOW].size), 0);
  assert_ptr_equal(get_dim_addr(), shim_fn);  /* what aotrun did */
  test_tmpdir_end();
}

/* Reloaded: the binding is per load, not a one-off. */
static void test_second_load_calls_the_shim(void **state) {
  (void)state;
  load_and_run(NOW);
  load_and_run(LAZY);
}

/* dlopen alone would succeed (libtorch exports the name); the loader
 * refuses before anything is mapped and names the import. */
static void test_import_only_torch_has_is_refused(void **state) {
  (void)state;
  test_tmpdir_begin();
  aotrun_model_library_config c = {.device = "cpu", .name = "forward.so"};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_model_library_load_with(
      g_models[UNKNOWN_IMPORT].data, g_models[UNKNOWN_IMPORT].size, &c, &lib,
      &err);
  assert_int_equal(st, AOTRUN_ERR_NOT_SUPPORTED);
  assert_null(lib);
  if (strstr(err.message, "forward.so imports 1 aoti_torch_* function that "
                          "the shim library") == NULL ||
      strstr(err.message, "does not export: aoti_torch_fixture_no_such_op") ==
          NULL)
    fail_msg("unexpected message: %s", err.message);
  assert_int_equal(test_tmpdir_count(), 0);
  test_tmpdir_end();
}

/* "libtorch" itself still works for its own callers. */
static void test_torch_keeps_working(void **state) {
  (void)state;
  code_fn f32;
  void *p = dlsym(g_torch, "aoti_torch_dtype_float32");
  assert_non_null(p);
  memcpy(&f32, &p, sizeof p);
  assert_int_equal(f32(), 6);
  /* And the global scope still gives libtorch's, not the shim's. */
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "aoti_torch_empty_strided"),
                   dlsym(g_torch, "aoti_torch_empty_strided"));
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s fake_libtorch.so libaotrun_shim.so "
            "fixture_model.so fixture_model_now.so "
            "fixture_unknown_import.so fake_plugin.so\n", argv[0]);
    return 2;
  }
  g_probe_path = argv[6];
  /* Torch first, then the shim: the shim comes after it in the global
   * scope (as when Python imported torch before aotrun). */
  g_torch = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  g_shim = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
  if (g_torch == NULL || g_shim == NULL) {
    fprintf(stderr, "cannot open %s or %s: %s\n", argv[1], argv[2], dlerror());
    return 2;
  }
  for (int i = 0; i < NUM_MODELS; i++) g_models[i] = test_read_file(argv[3 + i]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lazy_binding_library_calls_the_shim),
      cmocka_unit_test(test_relro_library_calls_the_shim),
      cmocka_unit_test(test_plugin_imports_bound_to_the_shim),
      cmocka_unit_test(test_second_load_calls_the_shim),
      cmocka_unit_test(test_import_only_torch_has_is_refused),
      cmocka_unit_test(test_torch_keeps_working),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  for (int i = 0; i < NUM_MODELS; i++) free(g_models[i].data);
  return failed;
}
