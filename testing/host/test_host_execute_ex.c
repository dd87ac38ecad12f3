/* test_host_execute_ex.c: aotrun_host_method_execute_ex / _synchronize on
 * plugins without execute_ex (the minimal 1.1 plugin and the genuine 1.0
 * plugin): the fallback to execute where it is equivalent, the refusals
 * where it is not, and the checks made before any plugin call; on the
 * faulty_ex plugin, the checks of what a plugin hands back. */
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

typedef struct fixture {
  aotrun_registry *registry;
  aotrun_host_method *method;
  float in[3], out[3];
  int64_t in_shape[1], out_shape[1];
  DLTensor x, y;
  DLManagedTensor *managed[1];
  aotrun_execute_args args;
} fixture;

/* Opens "forward" with factor 2 on the plugin file `lib` (backend `name`)
 * and prepares x = [1, 2, 3] and a 3-element y. */
static fixture *open_fixture(const char *lib, const char *name) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  assert_int_equal(aotrun_registry_create(&f->registry), AOTRUN_OK);
  if (aotrun_registry_load(f->registry, test_path(lib), NULL) != AOTRUN_OK)
    fail_msg("load %s: %s", lib, aotrun_host_last_error());
  aotrun_key_value spec = {"method", "forward"};
  if (aotrun_host_method_open(f->registry, name, &g_host, "2", 1, &spec, 1,
                              &f->method) != AOTRUN_OK)
    fail_msg("open: %s", aotrun_host_last_error());
  for (int i = 0; i < 3; i++) f->in[i] = (float)(i + 1);
  f->in_shape[0] = f->out_shape[0] = 3;
  f->x = (DLTensor){.data = f->in, .device = {kDLCPU, 0}, .ndim = 1,
                    .dtype = {kDLFloat, 32, 1}, .shape = f->in_shape};
  f->y = f->x;
  f->y.data = f->out;
  f->y.shape = f->out_shape;
  f->args = (aotrun_execute_args){.struct_size = sizeof f->args,
                                  .inputs = &f->x,
                                  .num_inputs = 1,
                                  .outputs = &f->y,
                                  .num_outputs = 1,
                                  .too_small_output = 42};
  return f;
}

static void close_fixture(fixture *f) {
  aotrun_host_method_close(f->method);
  aotrun_registry_destroy(f->registry);
  free(f);
}

/* Equivalent requests run through execute: plain, ASYNC, and a
 * managed_outputs array with no output to allocate. */
static void check_fallback_runs(const char *lib, const char *name) {
  fixture *f = open_fixture(lib, name);
  assert_int_equal(aotrun_host_method_execute_ex(f->method, &f->args),
                   AOTRUN_OK);
  assert_float_equal(f->out[2], 6.0f, 0);
  assert_int_equal(f->args.too_small_output, -1);
  f->in[2] = 5;
  f->args.flags = AOTRUN_EXECUTE_ASYNC;
  f->managed[0] = (DLManagedTensor *)f; /* must come back NULL */
  f->args.managed_outputs = f->managed;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, &f->args),
                   AOTRUN_OK);
  assert_null(f->managed[0]);
  assert_float_equal(f->out[2], 10.0f, 0);
  /* Nothing can be pending after a synchronous call. */
  assert_int_equal(aotrun_host_method_synchronize(f->method), AOTRUN_OK);
  close_fixture(f);
}

static void test_fallback_1_1_plugin_without_execute_ex(void **state) {
  (void)state;
  check_fallback_runs("libminimal_plugin.so", "minimal");
}

static void test_fallback_1_0_plugin(void **state) {
  (void)state;
  check_fallback_runs("libminimal_plugin_abi_1_0.so", "minimal_1_0");
}

/* What a 1.0 execute cannot do is refused, naming backend and reason. */
static void test_fallback_refusals(void **state) {
  (void)state;
  fixture *f = open_fixture("libminimal_plugin_abi_1_0.so", "minimal_1_0");
  int stream;
  f->args.stream = &stream;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, &f->args),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal_1_0' (ABI 1.0) has no execute_ex: it "
                      "cannot take a caller stream");
  f->args.stream = NULL;
  f->y.data = NULL;
  f->args.managed_outputs = f->managed;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, &f->args),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal_1_0' (ABI 1.0) has no execute_ex: it "
                      "cannot take backend-allocated outputs (output 0 (y) "
                      "has no data)");
  assert_null(f->managed[0]);
  close_fixture(f);
}

/* The checks made before any plugin call. */
static void test_argument_checks(void **state) {
  (void)state;
  fixture *f = open_fixture("libminimal_plugin.so", "minimal");
  aotrun_execute_args *a = &f->args;
  assert_int_equal(aotrun_host_method_execute_ex(NULL, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(aotrun_host_method_execute_ex(f->method, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "NULL method or args");
  a->struct_size = 8;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "args struct_size 8 is outside");
  a->struct_size = 0xFFFFFFF0u;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  /* A caller that knows only up to num_outputs: the rest reads as zero. */
  a->struct_size =
      (uint32_t)AOTRUN_MEMBER_END(aotrun_execute_args, num_outputs);
  a->too_small_output = 7;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a), AOTRUN_OK);
  assert_int_equal(a->too_small_output, 7); /* not covered: not written */
  a->struct_size = sizeof *a;
  a->flags = 0x6;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "flags 0x6 hold bits unknown");
  a->flags = 0;
  /* Counts against io_info before any tensor is read: 5 outputs from a
   * one-element array would read past it. */
  a->num_outputs = 5;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': execute got 5 outputs, the method "
                      "takes 1");
  a->num_outputs = 1;
  a->inputs = NULL;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  a->inputs = &f->x;
  f->x.ndim = 17;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "input 0 (x) has rank 17");
  f->x.ndim = 1;
  int64_t strides[1] = {2};
  f->y.strides = strides;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "output 0 (y) is not contiguous");
  f->y.strides = NULL;
  /* No data and no managed_outputs: the caller forgot one of them. */
  f->y.data = NULL;
  assert_int_equal(aotrun_host_method_execute_ex(f->method, a),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': output 0 (y) has no data and "
                      "args->managed_outputs is NULL (pass an array to have "
                      "the backend allocate it)");
  assert_int_equal(aotrun_host_method_synchronize(NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  close_fixture(f);
}

/* faulty_ex breaks the contract as x[0] says (faulty_ex_plugin.c). */
static aotrun_status run_faulty(fixture *f, float mode, int managed) {
  f->in[0] = mode;
  f->y.data = managed ? NULL : f->out;
  f->args.managed_outputs = managed ? f->managed : NULL;
  f->managed[0] = NULL;
  return aotrun_host_method_execute_ex(f->method, &f->args);
}

static void test_plugin_results_checked(void **state) {
  (void)state;
  fixture *f = open_fixture("libfaulty_ex_plugin.so", "faulty_ex");
  const aotrun_backend *b = aotrun_host_method_backend(f->method);
  const int *deleted = aotrun_backend_get_extension(b, "faulty_ex.deleted.v1");
  assert_non_null(deleted);
  int before = *deleted;
  /* A correct call: the managed copy of x, freed by its deleter. */
  assert_int_equal(run_faulty(f, 7, 1), AOTRUN_OK);
  assert_non_null(f->managed[0]);
  assert_float_equal(((float *)f->managed[0]->dl_tensor.data)[2], 3.0f, 0);
  f->managed[0]->deleter(f->managed[0]);
  assert_int_equal(*deleted, before + 1);
  /* OK without the tensor asked for, or without a deleter: INTERNAL. */
  assert_int_equal(run_faulty(f, 1, 1), AOTRUN_ERR_INTERNAL);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'faulty_ex': execute_ex returned no tensor in "
                      "managed_outputs[0] (output y)");
  assert_int_equal(run_faulty(f, 2, 1), AOTRUN_ERR_INTERNAL);
  assert_contains(aotrun_host_last_error(), "a tensor without a deleter");
  assert_null(f->managed[0]);
  /* A too-small report out of range: INTERNAL, too_small_output -1. */
  assert_int_equal(run_faulty(f, 3, 0), AOTRUN_ERR_INTERNAL);
  assert_int_equal(f->args.too_small_output, -1);
  assert_contains(aotrun_host_last_error(),
                  "reported output 5 with rank 1 as too small: out of range "
                  "for 1 outputs");
  /* An unknown status: INTERNAL, the message prints its number. */
  assert_int_equal(run_faulty(f, 4, 0), AOTRUN_ERR_INTERNAL);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'faulty_ex': execute_ex failed (unknown "
                      "status 42): faulty on purpose");
  /* A failure that leaves a tensor behind: the host deletes it. */
  before = *deleted;
  assert_int_equal(run_faulty(f, 5, 1), AOTRUN_ERR_INTERNAL);
  assert_null(f->managed[0]);
  assert_int_equal(*deleted, before + 1);
  close_fixture(f);
}

/* An ASYNC call on a plugin without synchronize: synchronize cannot wait
 * for it and says so; without ASYNC nothing is pending. */
static void test_synchronize_without_member(void **state) {
  (void)state;
  fixture *f = open_fixture("libfaulty_ex_plugin.so", "faulty_ex");
  assert_int_equal(run_faulty(f, 7, 0), AOTRUN_OK);
  assert_int_equal(aotrun_host_method_synchronize(f->method), AOTRUN_OK);
  f->args.flags = AOTRUN_EXECUTE_ASYNC;
  assert_int_equal(run_faulty(f, 7, 0), AOTRUN_OK);
  assert_int_equal(aotrun_host_method_synchronize(f->method),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'faulty_ex' ran an AOTRUN_EXECUTE_ASYNC call "
                      "but has no synchronize: wait on the stream passed to "
                      "execute_ex instead");
  close_fixture(f);
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fallback_1_1_plugin_without_execute_ex),
      cmocka_unit_test(test_fallback_1_0_plugin),
      cmocka_unit_test(test_fallback_refusals),
      cmocka_unit_test(test_argument_checks),
      cmocka_unit_test(test_plugin_results_checked),
      cmocka_unit_test(test_synchronize_without_member),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
