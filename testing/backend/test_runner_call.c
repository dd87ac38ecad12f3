/*
 * test_runner_call.c: the method runner's execute_ex requests
 * (aotrun_runner_call, aot_loader/method_run.c and method_output_keep.c)
 * on a CPU runner over the fixture model (y = f(x) [N, 3] with N dynamic,
 * calls [1]): a too-small output reports AOTRUN_ERR_OUTPUT_TOO_SMALL and
 * the needed shape (execute's 1.0 status stays INVALID_ARGUMENT without
 * the request); an output with data NULL is kept as the model's own tensor
 * (memory the shim owns) or as a row-major copy of borrowed memory; a
 * failed call keeps nothing.
 *   test_runner_call FIXTURE_MODEL.so
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testing/backend/runner_fixture.h"

static const char *g_model_path;

typedef runner_fixture fixture;
typedef runner_fixture_outs outs;

static fixture g_f;

static int setup(void **state) {
  *state = &g_f;
  return runner_fixture_open(&g_f, g_model_path);
}

static int teardown(void **state) {
  runner_fixture_close(*state);
  return 0;
}

static void outs_init(outs *o, int64_t rows) {
  runner_fixture_outs_init(o, rows);
}

static aotrun_status run(fixture *f, outs *o, aotrun_runner_call *call,
                         aotrun_error *err) {
  aotrun_error_clear(err);
  return aotrun_method_runner_run_checked_call(f->runner, &f->in, 1, o->t, 2,
                                               NULL, call, err);
}

static void test_too_small_reports_needed_shape(void **state) {
  fixture *f = *state;
  outs o;
  outs_init(&o, 2);
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.report_too_small = 1;
  aotrun_error err;
  assert_int_equal(run(f, &o, &call, &err), AOTRUN_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(call.too_small, 0);
  assert_int_equal(call.needed_ndim, 2);
  assert_int_equal(call.needed_shape[0], 5);
  assert_int_equal(call.needed_shape[1], 3);
  assert_non_null(strstr(err.message, "output 0 ("));
  assert_non_null(strstr(err.message, "needs shape [5,3], the caller's "
                                      "tensor has room for [2,3]"));
  /* The shape the report asks for works. */
  outs_init(&o, 5);
  assert_int_equal(run(f, &o, &call, &err), AOTRUN_OK);
  assert_int_equal(call.too_small, -1);
  float want[5][3];
  program_fixture_expected(&f->x[0][0], 5, &want[0][0]);
  assert_memory_equal(o.y, want, sizeof want);
}

/* Without the request (execute 1.0): the old status and message. */
static void test_too_small_without_request_keeps_1_0_status(void **state) {
  fixture *f = *state;
  outs o;
  outs_init(&o, 2);
  aotrun_error err;
  assert_int_equal(run(f, &o, NULL, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "has size 5 in dim 0, the caller's "
                                      "tensor has room for 2"));
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  assert_int_equal(run(f, &o, &call, &err), AOTRUN_ERR_INVALID_ARGUMENT);
}

/* Output 0 with data NULL: the model's own tensor (the shim allocated it)
 * is handed over; output 1 is copied as usual. */
static void test_kept_output_is_the_models_tensor(void **state) {
  fixture *f = *state;
  outs o;
  outs_init(&o, 0);
  o.t[0].data = NULL;
  o.t[0].shape = NULL; /* the caller need not know the shape */
  AtenTensorHandle kept[2] = {NULL, (AtenTensorHandle)0x1};
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.kept = kept;
  call.report_too_small = 1;
  aotrun_error err;
  assert_int_equal(run(f, &o, &call, &err), AOTRUN_OK);
  assert_non_null(kept[0]);
  assert_null(kept[1]);
  assert_true(aotrun_shim_tensor_owns_memory(kept[0]));
  int64_t ndim = 0, *sizes = NULL;
  void *data = NULL;
  assert_int_equal(aoti_torch_get_dim(kept[0], &ndim), 0);
  assert_int_equal(aoti_torch_get_sizes(kept[0], &sizes), 0);
  assert_int_equal(aoti_torch_get_data_ptr(kept[0], &data), 0);
  assert_int_equal(ndim, 2);
  assert_int_equal(sizes[0], 5);
  assert_int_equal(sizes[1], 3);
  float want[5][3];
  program_fixture_expected(&f->x[0][0], 5, &want[0][0]);
  assert_memory_equal(data, want, sizeof want);
  assert_true(o.calls[0] >= 1.0f);
  aotrun_method_runner_delete_handles(kept, 2);
}

/* A failed call keeps nothing: output 1 has the wrong static size. */
static void test_failed_call_keeps_nothing(void **state) {
  fixture *f = *state;
  outs o;
  outs_init(&o, 0);
  o.t[0].data = NULL;
  o.calls_shape[0] = 2;
  AtenTensorHandle kept[2] = {(AtenTensorHandle)0x1, (AtenTensorHandle)0x1};
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.kept = kept;
  aotrun_error err;
  assert_int_equal(run(f, &o, &call, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(kept[0]);
  assert_null(kept[1]);
}

/* copy_outputs_call never hands its sources over (a CUDA graph's pool is
 * reused): a borrowed, transposed source comes back as a row-major copy. */
static void test_copy_outputs_call_copies_borrowed(void **state) {
  fixture *f = *state;
  float src[3][2] = {{1, 2}, {3, 4}, {5, 6}}; /* viewed as [2,3]^T */
  float calls_src[1] = {7};
  const int64_t sizes[2] = {2, 3}, strides[2] = {1, 2};
  const int64_t one = 1;
  AtenTensorHandle sources[2] = {NULL, NULL};
  assert_int_equal(aoti_torch_create_tensor_from_blob(
                       src, 2, sizes, strides, 0, aoti_torch_dtype_float32(),
                       aoti_torch_device_type_cpu(), 0, &sources[0]),
                   0);
  assert_int_equal(aoti_torch_create_tensor_from_blob(
                       calls_src, 1, &one, &one, 0,
                       aoti_torch_dtype_float32(),
                       aoti_torch_device_type_cpu(), 0, &sources[1]),
                   0);
  assert_false(aotrun_shim_tensor_owns_memory(sources[0]));
  outs o;
  outs_init(&o, 0);
  o.t[0].data = NULL;
  AtenTensorHandle kept[2] = {NULL, NULL};
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.kept = kept;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_method_runner_copy_outputs_call(
                       f->runner, sources, o.t, 2, NULL, &call, &err),
                   AOTRUN_OK);
  assert_non_null(kept[0]);
  assert_true(aotrun_shim_tensor_owns_memory(kept[0]));
  int64_t *ks = NULL;
  void *data = NULL;
  assert_int_equal(aoti_torch_get_strides(kept[0], &ks), 0);
  assert_int_equal(ks[0], 3);
  assert_int_equal(ks[1], 1);
  assert_int_equal(aoti_torch_get_data_ptr(kept[0], &data), 0);
  const float want[2][3] = {{1, 3, 5}, {2, 4, 6}};
  assert_memory_equal(data, want, sizeof want);
  assert_true(o.calls[0] == 7.0f);
  aotrun_method_runner_delete_handles(kept, 2);
  aotrun_method_runner_delete_handles(sources, 2);
}

/* A runner whose final synchronisation is counted (and can fail). */
static int g_syncs;
static int g_sync_fails;

static aotrun_status counting_sync(void *ctx, void *stream,
                                   aotrun_error *err) {
  (void)ctx;
  (void)stream;
  g_syncs++;
  if (g_sync_fails)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "index 9 is out of range (injected)");
  return AOTRUN_OK;
}

static aotrun_method_runner *counting_runner(fixture *f) {
  aotrun_runner_device_ops ops = {.synchronize = counting_sync};
  aotrun_method_runner *r = runner_fixture_new_runner(f, &ops);
  assert_non_null(r);
  return r;
}

/* no_sync (async execute_ex) skips the final synchronisation, and a
 * synchronisation that reports a device error keeps nothing. */
static void test_no_sync_and_failed_sync(void **state) {
  fixture *f = *state;
  aotrun_method_runner *r = counting_runner(f);
  outs o;
  outs_init(&o, 5);
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  aotrun_error err;
  aotrun_error_clear(&err);
  g_syncs = g_sync_fails = 0;
  assert_int_equal(aotrun_method_runner_run_checked_call(r, &f->in, 1, o.t, 2,
                                                         NULL, &call, &err),
                   AOTRUN_OK);
  assert_int_equal(g_syncs, 1);
  call.no_sync = 1;
  assert_int_equal(aotrun_method_runner_run_checked_call(r, &f->in, 1, o.t, 2,
                                                         NULL, &call, &err),
                   AOTRUN_OK);
  assert_int_equal(g_syncs, 1);
  /* A kept output, then the synchronisation fails: nothing stays kept. */
  AtenTensorHandle kept[2] = {NULL, NULL};
  call.no_sync = 0;
  call.kept = kept;
  o.t[0].data = NULL;
  g_sync_fails = 1;
  assert_int_equal(aotrun_method_runner_run_checked_call(r, &f->in, 1, o.t, 2,
                                                         NULL, &call, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "index 9 is out of range"));
  assert_null(kept[0]);
  assert_null(kept[1]);
  g_sync_fails = 0;
  aotrun_method_runner_destroy(r);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_runner_call FIXTURE_MODEL.so\n");
    return 2;
  }
  g_model_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_too_small_reports_needed_shape),
      cmocka_unit_test(test_too_small_without_request_keeps_1_0_status),
      cmocka_unit_test(test_kept_output_is_the_models_tensor),
      cmocka_unit_test(test_failed_call_keeps_nothing),
      cmocka_unit_test(test_copy_outputs_call_copies_borrowed),
      cmocka_unit_test(test_no_sync_and_failed_sync),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
