/*
 * test_weight_cache.c: the FQN-keyed weight cache (aot_loader/weight_cache.h)
 * with fake device ops over malloc/memcpy: one upload per FQN, refcounts,
 * separate copies (and the log line) for every kind of mismatch, host memory
 * for cpu constants, failures that leak nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/program.h"
#include "aot_loader/weight_cache.h"

typedef struct fake_device {
  int allocs, frees, uploads;
  int fail_alloc, fail_upload;
  pthread_mutex_t lock;
} fake_device;

static aotrun_status fake_alloc(void *ctx, size_t bytes, void **ptr) {
  fake_device *d = ctx;
  if (d->fail_alloc) return AOTRUN_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&d->lock);
  d->allocs++;
  pthread_mutex_unlock(&d->lock);
  *ptr = malloc(bytes);
  return *ptr ? AOTRUN_OK : AOTRUN_ERR_OUT_OF_MEMORY;
}

static void fake_free(void *ctx, void *ptr) {
  fake_device *d = ctx;
  pthread_mutex_lock(&d->lock);
  d->frees++;
  pthread_mutex_unlock(&d->lock);
  free(ptr);
}

static aotrun_status fake_upload(void *ctx, void *dst, const void *src,
                                 size_t bytes) {
  fake_device *d = ctx;
  if (d->fail_upload) return AOTRUN_ERR_ACCESS_FAILED;
  pthread_mutex_lock(&d->lock);
  d->uploads++;
  pthread_mutex_unlock(&d->lock);
  memcpy(dst, src, bytes);
  return AOTRUN_OK;
}

typedef struct log_capture {
  int count;
  int32_t level;
  char last[1024];
} log_capture;

static void capture_log(void *ctx, int32_t level, const char *message) {
  log_capture *l = ctx;
  l->count++;
  l->level = level;
  snprintf(l->last, sizeof l->last, "%s", message);
}

typedef struct fixture {
  fake_device dev;
  aotrun_device_ops ops;
  log_capture log;
  aotrun_weight_cache *cache;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (f == NULL) return -1;
  pthread_mutex_init(&f->dev.lock, NULL);
  f->ops = (aotrun_device_ops){&f->dev, fake_alloc, fake_free, fake_upload};
  aotrun_error err = {0};
  if (aotrun_weight_cache_create(&f->ops, NULL, capture_log, &f->log,
                                 &f->cache, &err) != AOTRUN_OK)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  aotrun_weight_cache_destroy(f->cache);
  /* Every device allocation was freed. */
  int leaked = f->dev.allocs != f->dev.frees;
  pthread_mutex_destroy(&f->dev.lock);
  free(f);
  return leaked ? -1 : 0;
}

static const float kWeight[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const int64_t kSizes[2] = {3, 4}, kStrides[2] = {4, 1};

static aotrun_weight_request weight_request(void) {
  aotrun_weight_request r = {"lin.weight", AOTRUN_DEVICE_TYPE_CUDA, 6, 2,
                             kSizes, kStrides, 0, sizeof kWeight};
  return r;
}

static void *acquire(fixture *f, const aotrun_weight_request *r,
                     aotrun_weight_ref **ref) {
  void *data = NULL;
  aotrun_error err = {0};
  aotrun_status s = aotrun_weight_cache_acquire(f->cache, r, kWeight, &data,
                                                ref, &err);
  if (s != AOTRUN_OK) print_message("acquire failed: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  assert_non_null(data);
  assert_non_null(*ref);
  return data;
}

static void test_shared_once(void **state) {
  fixture *f = *state;
  aotrun_weight_request r = weight_request();
  aotrun_weight_ref *a = NULL, *b = NULL;
  void *pa = acquire(f, &r, &a);
  void *pb = acquire(f, &r, &b);
  assert_ptr_equal(pa, pb);
  assert_ptr_equal(a, b);
  assert_memory_equal(pa, kWeight, sizeof kWeight);
  assert_int_equal(f->dev.uploads, 1);
  assert_int_equal(f->dev.allocs, 1);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 1);
  assert_int_equal(aotrun_weight_cache_num_uploads(f->cache), 1);
  assert_int_equal(f->log.count, 0);
  aotrun_weight_cache_release(f->cache, a);
  assert_int_equal(f->dev.frees, 0); /* still referenced */
  aotrun_weight_cache_release(f->cache, b);
  assert_int_equal(f->dev.frees, 1);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  aotrun_weight_cache_release(f->cache, NULL); /* accepted */
}

/* A request differing in one field gets its own copy and one log line. */
static void expect_separate(fixture *f, const aotrun_weight_request *other,
                            const char *message) {
  aotrun_weight_request r = weight_request();
  aotrun_weight_ref *a = NULL, *b = NULL;
  int uploads = f->dev.uploads;
  void *pa = acquire(f, &r, &a);
  void *pb = acquire(f, other, &b);
  assert_ptr_not_equal(pa, pb);
  assert_ptr_not_equal(a, b);
  assert_int_equal(f->dev.uploads - uploads,
                   other->device_type == AOTRUN_DEVICE_TYPE_CPU ? 1 : 2);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 2);
  assert_int_equal(f->log.count, 1);
  assert_int_equal(f->log.level, AOTRUN_LOG_WARNING);
  assert_string_equal(f->log.last, message);
  /* A third request equal to the second reuses the second copy. */
  aotrun_weight_ref *c = NULL;
  assert_ptr_equal(acquire(f, other, &c), pb);
  assert_int_equal(f->log.count, 1);
  /* And one equal to the first reuses it silently, although the newer,
   * different copy is found first. */
  aotrun_weight_ref *d = NULL;
  assert_ptr_equal(acquire(f, &r, &d), pa);
  assert_int_equal(f->log.count, 1);
  aotrun_weight_cache_release(f->cache, a);
  aotrun_weight_cache_release(f->cache, b);
  aotrun_weight_cache_release(f->cache, c);
  aotrun_weight_cache_release(f->cache, d);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  f->log.count = 0;
}

static void test_mismatch_dtype(void **state) {
  aotrun_weight_request r = weight_request();
  r.dtype = 3; /* int32, same size */
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with dtype float32, this method asks for int32: "
                  "keeping a separate copy");
}

static void test_mismatch_sizes(void **state) {
  static const int64_t sizes[2] = {4, 3};
  aotrun_weight_request r = weight_request();
  r.sizes = sizes;
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with sizes [3, 4], this method asks for [4, 3]: "
                  "keeping a separate copy");
  static const int64_t flat[1] = {12}, one[1] = {1};
  r = weight_request();
  r.ndim = 1;
  r.sizes = flat;
  r.strides = one;
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with sizes [3, 4], this method asks for [12]: "
                  "keeping a separate copy");
}

static void test_mismatch_strides(void **state) {
  static const int64_t strides[2] = {1, 3};
  aotrun_weight_request r = weight_request();
  r.strides = strides;
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with strides [4, 1], this method asks for [1, 3]: "
                  "keeping a separate copy");
}

static void test_mismatch_offset_and_nbytes(void **state) {
  static const int64_t sizes[2] = {2, 4};
  aotrun_weight_request r = weight_request();
  r.sizes = sizes;
  r.storage_offset = 4;
  /* sizes differ first: the message names the first differing field. */
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with sizes [3, 4], this method asks for [2, 4]: "
                  "keeping a separate copy");
  r = weight_request();
  r.storage_offset = 0;
  r.nbytes = 44;
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with nbytes 48, this method asks for 44: keeping a "
                  "separate copy");
  r = weight_request();
  r.storage_offset = 1;
  expect_separate(*state, &r, "weight cache: FQN 'lin.weight' is already "
                  "loaded with storage_offset 0, this method asks for 1: "
                  "keeping a separate copy");
}

static void test_cpu_constants_use_host_memory(void **state) {
  fixture *f = *state;
  aotrun_weight_request r = weight_request();
  r.device_type = AOTRUN_DEVICE_TYPE_CPU;
  aotrun_weight_ref *ref = NULL;
  void *p = acquire(f, &r, &ref);
  assert_int_equal(f->dev.allocs, 0); /* not the cuda ops */
  assert_int_equal((uintptr_t)p % 64, 0);
  assert_memory_equal(p, kWeight, sizeof kWeight);
  aotrun_weight_cache_release(f->cache, ref);
  /* A cuda and a cpu request of one FQN: separate copies, said so. */
  aotrun_weight_request cpu = weight_request();
  cpu.device_type = AOTRUN_DEVICE_TYPE_CPU;
  expect_separate(f, &cpu, "weight cache: FQN 'lin.weight' is already loaded "
                  "with device cuda, this method asks for cpu: keeping a "
                  "separate copy");
}

/* Host constants are shared like device ones: a second acquire of the
 * same cpu constant (another method or handle) gets the same copy, and
 * nothing more is allocated (issue 15, weights). */
static void test_cpu_constants_are_shared(void **state) {
  fixture *f = *state;
  aotrun_weight_request r = weight_request();
  r.device_type = AOTRUN_DEVICE_TYPE_CPU;
  aotrun_weight_ref *a = NULL, *b = NULL;
  void *pa = acquire(f, &r, &a);
  uint64_t host = aotrun_weight_cache_bytes_allocated(f->cache,
                                                      AOTRUN_DEVICE_TYPE_CPU);
  assert_int_equal(host, sizeof kWeight);
  assert_int_equal(aotrun_weight_cache_has_copy(f->cache, &r), 1);
  void *pb = acquire(f, &r, &b);
  assert_ptr_equal(pa, pb);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 1);
  assert_int_equal(aotrun_weight_cache_bytes_allocated(
                       f->cache, AOTRUN_DEVICE_TYPE_CPU), host);
  assert_int_equal(f->dev.allocs, 0); /* never the cuda ops */
  aotrun_weight_cache_release(f->cache, a);
  assert_memory_equal(pb, kWeight, sizeof kWeight); /* still referenced */
  aotrun_weight_cache_release(f->cache, b);
}

static void test_different_fqns(void **state) {
  fixture *f = *state;
  aotrun_weight_request a = weight_request(), b = weight_request();
  b.fqn = "lin.weight2";
  aotrun_weight_ref *ra = NULL, *rb = NULL;
  assert_ptr_not_equal(acquire(f, &a, &ra), acquire(f, &b, &rb));
  assert_int_equal(f->log.count, 0); /* different FQNs are no mismatch */
  assert_int_equal(f->dev.uploads, 2);
  /* destroy (teardown) frees what is still referenced. */
}

static void test_zero_bytes(void **state) {
  fixture *f = *state;
  static const int64_t sizes[1] = {0}, strides[1] = {1};
  aotrun_weight_request r = {"empty", AOTRUN_DEVICE_TYPE_CUDA, 6, 1, sizes,
                             strides, 0, 0};
  void *data = NULL;
  aotrun_weight_ref *ref = NULL;
  aotrun_error err = {0};
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, NULL, &data,
                                               &ref, &err),
                   AOTRUN_OK);
  assert_non_null(data);
  assert_int_equal(f->dev.uploads, 0);
  aotrun_weight_cache_release(f->cache, ref);
}

static void test_alloc_and_upload_failures(void **state) {
  fixture *f = *state;
  aotrun_weight_request r = weight_request();
  void *data = (void *)0x1;
  aotrun_weight_ref *ref = (aotrun_weight_ref *)0x1;
  aotrun_error err = {0};
  f->dev.fail_alloc = 1;
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, kWeight, &data,
                                               &ref, &err),
                   AOTRUN_ERR_OUT_OF_MEMORY);
  assert_null(data);
  assert_null(ref);
  assert_string_equal(err.message, "weight cache: cannot allocate 48 bytes of "
                      "cuda memory for FQN 'lin.weight' (out of memory)");
  f->dev.fail_alloc = 0;
  f->dev.fail_upload = 1;
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, kWeight, &data,
                                               &ref, &err),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_string_equal(err.message, "weight cache: uploading 48 bytes of FQN "
                      "'lin.weight' to cuda memory failed (access failed)");
  assert_int_equal(f->dev.allocs, f->dev.frees);
  assert_int_equal(aotrun_weight_cache_num_copies(f->cache), 0);
  f->dev.fail_upload = 0;
  /* The failures left nothing behind: the next acquire uploads. */
  aotrun_weight_ref *ok = NULL;
  acquire(f, &r, &ok);
  assert_int_equal(f->dev.uploads, 1);
  aotrun_weight_cache_release(f->cache, ok);
}

static void test_bad_requests(void **state) {
  fixture *f = *state;
  void *data = NULL;
  aotrun_weight_ref *ref = NULL;
  aotrun_error err = {0};
  aotrun_weight_request r = weight_request();
  r.ndim = 17;
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, kWeight, &data,
                                               &ref, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "weight cache: FQN 'lin.weight' has 17 "
                      "dims (at most 16, with sizes and strides)");
  r = weight_request();
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, NULL, &data,
                                               &ref, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "weight cache: FQN 'lin.weight' has no "
                      "host bytes for its 48 bytes");
  r.fqn = NULL;
  assert_int_equal(aotrun_weight_cache_acquire(f->cache, &r, kWeight, &data,
                                               &ref, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "weight cache: request without an FQN");
}

static void test_create_checks_ops(void **state) {
  (void)state;
  aotrun_device_ops bad = {NULL, NULL, fake_free, fake_upload};
  aotrun_weight_cache *c = (aotrun_weight_cache *)0x1;
  aotrun_error err = {0};
  assert_int_equal(aotrun_weight_cache_create(&bad, NULL, NULL, NULL, &c,
                                              &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(c);
  assert_string_equal(err.message, "weight cache: a device-ops table lacks "
                      "alloc, free or upload");
  /* Host ops for both kinds, no log: valid. */
  assert_int_equal(aotrun_weight_cache_create(aotrun_host_device_ops(), NULL,
                                              NULL, NULL, &c, &err),
                   AOTRUN_OK);
  aotrun_weight_cache_destroy(c);
  aotrun_weight_cache_destroy(NULL);
}

typedef struct thread_arg {
  fixture *f;
  void *data;
  aotrun_weight_ref *ref;
} thread_arg;

static void *acquire_thread(void *p) {
  thread_arg *a = p;
  aotrun_weight_request r = weight_request();
  aotrun_error err = {0};
  if (aotrun_weight_cache_acquire(a->f->cache, &r, kWeight, &a->data, &a->ref,
                                  &err) != AOTRUN_OK)
    a->data = NULL;
  return NULL;
}

static void test_concurrent_acquire(void **state) {
  fixture *f = *state;
  pthread_t threads[8];
  thread_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (thread_arg){f, NULL, NULL};
    assert_int_equal(pthread_create(&threads[i], NULL, acquire_thread,
                                    &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < 8; i++) {
    assert_non_null(args[i].data);
    assert_ptr_equal(args[i].data, args[0].data);
  }
  assert_int_equal(f->dev.uploads, 1);
  for (int i = 0; i < 8; i++)
    aotrun_weight_cache_release(f->cache, args[i].ref);
  assert_int_equal(f->dev.frees, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_shared_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mismatch_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mismatch_sizes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mismatch_strides, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mismatch_offset_and_nbytes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cpu_constants_are_shared, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cpu_constants_use_host_memory,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_different_fqns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_zero_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alloc_and_upload_failures, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
      cmocka_unit_test(test_create_checks_ops),
      cmocka_unit_test_setup_teardown(test_concurrent_acquire, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
