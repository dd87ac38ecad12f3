/*
 * test_weight_binding.c: aotrun_method_weights_bind against fake libraries:
 * the user-managed path (views of cache copies, device from the manifest,
 * one upload per FQN across methods, our handles deleted), the binary-blob
 * paths (padded / packed records, size checks), fallbacks and failures that
 * keep nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/method_weights.h"
#include "testing/loader/test_weight_fixture.h"

/* The fixture with every constant on cuda (the user-managed path). */
static weight_fixture *all_cuda_fixture(void) {
  return weight_fixture_new("methods.forward.constants.3.device", "\"cuda\"");
}

static aotrun_method_weights *bind_ok(weight_fixture *f,
                                      const aotrun_program_method *m) {
  aotrun_method_weights *w = NULL;
  aotrun_error err = {0};
  aotrun_status s = aotrun_method_weights_bind(&f->target, m, f->weights,
                                               f->cache, &f->views, 2, &w,
                                               &err);
  if (s != AOTRUN_OK) print_message("bind failed: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  assert_non_null(w);
  return w;
}

static void test_user_managed_views(void **state) {
  (void)state;
  /* Every constant on cuda: views handed over (mixed methods use the blob,
   * see test_mixed_devices_use_blob). */
  weight_fixture *f =
      weight_fixture_new("methods.forward.constants.3.device", "\"cuda\"");
  aotrun_method_weights *w = bind_ok(f, f->forward);
  fake_library *l = &f->lib;
  assert_int_equal(l->set_calls, 1);
  assert_int_equal(l->blob_calls, 0);
  assert_int_equal(l->num_pairs, 4);
  assert_string_equal(l->pair_names[0], "weight");
  assert_string_equal(l->pair_names[1], "bias");
  assert_string_equal(l->pair_names[2], "scale64");
  assert_string_equal(l->pair_names[3], "calls");
  /* Our handles are gone; the library kept its own copies of the views. */
  assert_int_equal(f->views_state.live, 0);

  const fake_tensor *v = &l->pair_views[0];
  assert_int_equal(v->device_type, 1);
  assert_int_equal(v->device_index, 2);
  assert_int_equal(v->dtype, 6);
  assert_int_equal(v->ndim, 2);
  assert_int_equal(v->sizes[0], 3);
  assert_int_equal(v->sizes[1], 4);
  assert_int_equal(v->strides[0], 4);
  assert_int_equal(v->strides[1], 1);
  assert_memory_equal(v->data, weight_fixture_bytes(f, "lin.weight"), 48);
  assert_ptr_not_equal(v->data, weight_fixture_bytes(f, "lin.weight"));
  assert_int_equal(l->pair_views[2].dtype, 7);
  assert_memory_equal(l->pair_views[2].data, weight_fixture_bytes(f, "scale"),
                      8);
  assert_int_equal(l->pair_views[3].device_type, 1);
  assert_int_equal(f->cuda_mem.uploads, 4);
  assert_int_equal(f->host_mem.uploads, 0);

  assert_int_equal(aotrun_method_weights_num_host_constants(w), 0);
  assert_int_equal(aotrun_method_weights_constants_unlisted(w), 0);
  assert_int_equal(aotrun_method_weights_used_blob(w), 0);

  /* Release (after the container is gone) frees the copies. */
  aotrun_method_weights_release(w);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  assert_int_equal(f->cuda_mem.frees, 4);
  weight_fixture_free(f);
}

static void test_all_host_constants_use_views(void **state) {
  (void)state;
  /* A cpu model (the fixture): every constant in host memory, as views. */
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_program_method *m = &f->program->methods[0];
  for (size_t i = 0; i < m->num_constants; i++)
    m->constants[i].device_type = AOTRUN_DEVICE_TYPE_CPU;
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_int_equal(f->lib.set_calls, 1);
  assert_int_equal(f->lib.blob_calls, 0);
  assert_int_equal(f->lib.pair_views[3].device_type, 0);
  assert_int_equal(f->cuda_mem.uploads, 0);
  assert_int_equal(aotrun_method_weights_num_host_constants(w), 4);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void test_mixed_devices_use_blob(void **state) {
  (void)state;
  /* cuda constants plus one cpu constant: torch 2.11's user-managed update
   * refuses mixed devices, so the blob path loads them. */
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_int_equal(f->lib.set_calls, 0);
  assert_int_equal(f->lib.blob_calls, 1);
  assert_int_equal(aotrun_method_weights_used_blob(w), 1);
  assert_int_equal(aotrun_method_weights_constants_unlisted(w), 0);
  assert_int_equal(aotrun_method_weights_num_host_constants(w), 1);
  assert_string_equal(aotrun_method_weights_host_constant(w, 0), "calls");
  assert_memory_equal(f->lib.blob + 192, weight_fixture_bytes(f, "calls"), 4);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void test_methods_share_fqns(void **state) {
  (void)state;
  weight_fixture *f =
      weight_fixture_new("methods.forward.constants.3.device", "\"cuda\"");
  aotrun_method_weights *fw = bind_ok(f, f->forward);
  void *weight = f->lib.pair_views[0].data;
  void *bias = f->lib.pair_views[1].data;
  /* decode: lin.bias with the same layout (shared), lin.weight transposed
   * (a separate copy, logged). */
  const aotrun_program_method *decode = &f->program->methods[1];
  f->lib.num_infos = 0;
  for (size_t i = 0; i < decode->num_constants; i++) {
    const aotrun_program_constant *c = &decode->constants[i];
    f->lib.infos[f->lib.num_infos++] = (aotrun_constant_info){
        c->name, c->fqn, c->dtype, c->type, c->nbytes, 0};
  }
  aotrun_method_weights *dw = bind_ok(f, decode);
  assert_ptr_equal(f->lib.pair_views[1].data, bias);
  assert_ptr_not_equal(f->lib.pair_views[0].data, weight);
  assert_int_equal(f->lib.pair_views[0].strides[0], 1);
  assert_int_equal(f->cuda_mem.uploads, 5); /* 4 + the transposed weight */
  assert_int_equal(f->log_count, 1);
  assert_string_equal(f->last_log, "weight cache: FQN 'lin.weight' is already "
                      "loaded with sizes [3, 4], this method asks for [4, 3]: "
                      "keeping a separate copy");
  assert_int_equal(aotrun_method_weights_num_host_constants(dw), 0);
  aotrun_method_weights_release(fw);
  /* decode still holds lin.bias and its own lin.weight. */
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 2);
  aotrun_method_weights_release(dw);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  weight_fixture_free(f);
}

static void test_blob_without_introspection(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  f->lib.no_introspection = 1;
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_int_equal(f->lib.set_calls, 0);
  assert_int_equal(f->lib.blob_calls, 1);
  assert_int_equal(f->lib.blob_len, 256);
  /* 64-byte records (calls is a cpu constant), zero padding. */
  const uint8_t *b = f->lib.blob;
  assert_memory_equal(b, weight_fixture_bytes(f, "lin.weight"), 48);
  for (int i = 48; i < 64; i++) assert_int_equal(b[i], 0);
  assert_memory_equal(b + 64, weight_fixture_bytes(f, "lin.bias"), 12);
  assert_memory_equal(b + 128, weight_fixture_bytes(f, "scale"), 8);
  assert_memory_equal(b + 192, weight_fixture_bytes(f, "calls"), 4);
  for (int i = 196; i < 256; i++) assert_int_equal(b[i], 0);
  assert_int_equal(aotrun_method_weights_used_blob(w), 1);
  assert_int_equal(aotrun_method_weights_constants_unlisted(w), 1);
  assert_int_equal(aotrun_method_weights_num_host_constants(w), 1);
  assert_string_equal(aotrun_method_weights_host_constant(w, 0), "calls");
  /* The container copied the blob: nothing in the cache. */
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void test_blob_all_cuda_is_packed(void **state) {
  (void)state;
  weight_fixture *f =
      weight_fixture_new("methods.forward.constants.3.device", "\"cuda\"");
  f->lib.no_introspection = 1;
  f->lib.blob_size = 72;
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_int_equal(f->lib.blob_len, 72);
  assert_memory_equal(f->lib.blob + 48, weight_fixture_bytes(f, "lin.bias"),
                      12);
  assert_memory_equal(f->lib.blob + 60, weight_fixture_bytes(f, "scale"), 8);
  assert_memory_equal(f->lib.blob + 68, weight_fixture_bytes(f, "calls"), 4);
  assert_int_equal(aotrun_method_weights_num_host_constants(w), 0);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void test_blob_layout_follows_library_size(void **state) {
  (void)state;
  /* The rule says padded (a cpu constant), the library expects packed. */
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  f->lib.no_introspection = 1;
  f->lib.blob_size = 72;
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_memory_equal(f->lib.blob + 60, weight_fixture_bytes(f, "scale"), 8);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void test_blob_size_mismatch(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  f->lib.no_introspection = 1;
  f->lib.blob_size = 200;
  aotrun_method_weights *w = (aotrun_method_weights *)0x1;
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_bind(&f->target, f->forward,
                                              f->weights, f->cache, &f->views,
                                              0, &w, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(w);
  assert_string_equal(err.message, "malformed FQN weight metadata: the "
                      "manifest's 4 constants make a blob of 72 bytes (256 "
                      "with 64-byte records), the library expects 200 bytes "
                      "(method 'forward')");
  assert_int_equal(f->lib.blob_calls, 0);
  weight_fixture_free(f);
}

static void test_user_managed_unsupported_falls_back(void **state) {
  (void)state;
  weight_fixture *f = all_cuda_fixture();
  f->lib.no_user_managed = 1;
  aotrun_method_weights *w = bind_ok(f, f->forward);
  assert_int_equal(f->lib.set_calls, 1);
  assert_int_equal(f->lib.blob_calls, 1);
  assert_int_equal(aotrun_method_weights_used_blob(w), 1);
  assert_int_equal(aotrun_method_weights_constants_unlisted(w), 0);
  assert_int_equal(f->views_state.live, 0);
  /* The copies made for the views were given back. */
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  aotrun_method_weights_release(w);
  weight_fixture_free(f);
}

static void expect_bind_error(weight_fixture *f, aotrun_status code,
                              const char *message) {
  aotrun_method_weights *w = (aotrun_method_weights *)0x1;
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_bind(&f->target, f->forward,
                                              f->weights, f->cache, &f->views,
                                              0, &w, &err),
                   code);
  assert_null(w);
  assert_string_equal(err.message, message);
  /* Nothing kept: no views, no cache copies. */
  assert_int_equal(f->views_state.live, 0);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  weight_fixture_free(f);
}

static void test_failures_keep_nothing(void **state) {
  (void)state;
  weight_fixture *f = all_cuda_fixture();
  f->lib.fail_user_managed = 1;
  expect_bind_error(f, AOTRUN_ERR_INTERNAL, "fake "
                    "UpdateUserManagedConstantBufferPairs failed");
  f = all_cuda_fixture();
  f->views_state.fail_at = 3;
  expect_bind_error(f, AOTRUN_ERR_INTERNAL, "making a view of constant "
                    "'scale64' (fqn 'scale'): fake view failed");
  f = all_cuda_fixture();
  weight_fixture_lib_constant(f, "bias")->data_size = 16;
  expect_bind_error(f, AOTRUN_ERR_INVALID_ARGUMENT, "malformed FQN weight "
                    "metadata: constant 'bias' (fqn 'lin.bias'): nbytes 12 in "
                    "the manifest, 16 in the library (method 'forward')");
  f = weight_fixture_new("methods.forward.constants.2.fqn", "\"scale2\"");
  expect_bind_error(f, AOTRUN_ERR_INVALID_ARGUMENT, "malformed FQN weight "
                    "metadata: constant 'scale64' (fqn 'scale2'): no entry "
                    "'scale2' in 'weights.safetensors' (method 'forward')");
}

static void test_bind_arguments(void **state) {
  (void)state;
  weight_fixture *f = weight_fixture_new(NULL, NULL);
  aotrun_method_weights *w = (aotrun_method_weights *)0x1;
  aotrun_error err = {0};
  assert_int_equal(aotrun_method_weights_bind(&f->target, f->forward,
                                              f->weights, NULL, &f->views, 0,
                                              &w, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(w);
  assert_string_equal(err.message, "method weights: target, method, cache and "
                      "views are required");
  aotrun_method_weights_release(NULL);
  weight_fixture_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_user_managed_views),
      cmocka_unit_test(test_all_host_constants_use_views),
      cmocka_unit_test(test_mixed_devices_use_blob),
      cmocka_unit_test(test_methods_share_fqns),
      cmocka_unit_test(test_blob_without_introspection),
      cmocka_unit_test(test_blob_all_cuda_is_packed),
      cmocka_unit_test(test_blob_layout_follows_library_size),
      cmocka_unit_test(test_blob_size_mismatch),
      cmocka_unit_test(test_user_managed_unsupported_falls_back),
      cmocka_unit_test(test_failures_keep_nothing),
      cmocka_unit_test(test_bind_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
