/*
 * test_cuda_backend_options.c: the CUDA backend's backend-wide options
 * (backend_cuda/cuda_backend.h) under concurrent use: threads set and read
 * them at once, through the 1.0 get_option(NULL, ...) form (a string into
 * the calling thread's copy) and the 1.1 get_backend_option form (into the
 * caller's buffer). Every string a thread was given must stay what it was
 * while other threads keep reading and writing: with one shared read
 * buffer (the old get_option) it changes under the reader, and TSan (this
 * test is tagged "concurrency": run under --config=tsan) reports the race.
 * CUDA-free, so it runs in CI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "backend_cuda/cuda_backend.h"

#define THREADS 4
#define ROUNDS 400

static aotrun_cuda_backend g_b = AOTRUN_CUDA_BACKEND_INIT("cuda");
static atomic_int g_failures;
static char g_first[256];
static pthread_mutex_t g_first_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const kLevels[] = {"debug", "info", "warning", "error"};
static const char *const kLists[] = {"forward", "decode", "forward,decode",
                                     "prefill"};

static void report(const char *what, const char *got) {
  if (atomic_fetch_add(&g_failures, 1) != 0) return;
  pthread_mutex_lock(&g_first_mu);
  /* The first failure only, cut to the buffer (the return value is read
   * so that -O2's -Wformat-truncation knows the cut is meant). */
  if (snprintf(g_first, sizeof g_first, "%s: \"%s\"", what, got) < 0)
    g_first[0] = '\0';
  pthread_mutex_unlock(&g_first_mu);
}

static int one_of(const char *s, const char *const *list, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, list[i]) == 0) return 1;
  return 0;
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  aotrun_error err;
  for (int r = 0; r < ROUNDS; r++) {
    aotrun_option set = {.key = "log_level", .type = AOTRUN_OPTION_STRING,
                         .string_value = kLevels[(id + r) % 4]};
    if (aotrun_cuda_backend_set_option(&g_b, &set, &err) != AOTRUN_OK)
      report("set log_level", err.message);
    set.key = "enable_cuda_graph_for_method";
    set.string_value = kLists[(id * 3 + r) % 4];
    if (aotrun_cuda_backend_set_option(&g_b, &set, &err) != AOTRUN_OK)
      report("set graph methods", err.message);
    /* 1.0 form: this thread's copy. */
    aotrun_option got;
    if (aotrun_cuda_backend_get_option_1_0(
            &g_b, "enable_cuda_graph_for_method", &got, &err) != AOTRUN_OK) {
      report("get 1.0", err.message);
      continue;
    }
    char before[64];
    snprintf(before, sizeof before, "%s", got.string_value);
    if (!one_of(before, kLists, 4)) report("1.0 value", before);
    /* Other work of this thread that must not touch that copy. */
    aotrun_option other;
    char buf[64];
    if (aotrun_cuda_backend_get_option(&g_b, "log_level", &other, buf,
                                       sizeof buf, &err) != AOTRUN_OK ||
        other.string_value != buf || !one_of(buf, kLevels, 4))
      report("get 1.1 log_level", buf);
    if (aotrun_cuda_backend_get_option(&g_b, "enable_cuda_graph_for_method",
                                       &other, buf, sizeof buf,
                                       &err) != AOTRUN_OK ||
        !one_of(buf, kLists, 4))
      report("get 1.1 graph methods", buf);
    if (strcmp(before, got.string_value) != 0)
      report("1.0 value changed under its reader", got.string_value);
  }
  return NULL;
}

static void test_concurrent_reads_and_writes(void **state) {
  (void)state;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i),
                     0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  if (atomic_load(&g_failures) != 0)
    fail_msg("%d failures, first: %s", atomic_load(&g_failures), g_first);
}

static void test_buffer_rules(void **state) {
  (void)state;
  aotrun_error err;
  aotrun_option set = {.key = "enable_cuda_graph_for_method",
                       .type = AOTRUN_OPTION_STRING,
                       .string_value = "forward, decode"};
  assert_int_equal(aotrun_cuda_backend_set_option(&g_b, &set, &err),
                   AOTRUN_OK);
  aotrun_option got;
  char small[8];
  assert_int_equal(aotrun_cuda_backend_get_option(
                       &g_b, "enable_cuda_graph_for_method", &got, small,
                       sizeof small, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(got.string_value);
  assert_string_equal(err.message,
                      "get_option 'enable_cuda_graph_for_method': the value "
                      "is 15 bytes with its terminator, the buffer 8");
  assert_int_equal(aotrun_cuda_backend_get_option(
                       &g_b, "enable_cuda_graph_for_method", &got, NULL, 64,
                       &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  char buf[16];
  assert_int_equal(aotrun_cuda_backend_get_option(
                       &g_b, "enable_cuda_graph_for_method", &got, buf,
                       sizeof buf, &err),
                   AOTRUN_OK);
  assert_string_equal(buf, "forward,decode");
  /* Non-string values need no buffer. */
  assert_int_equal(aotrun_cuda_backend_get_option(&g_b, "share_weights", &got,
                                                  NULL, 0, &err),
                   AOTRUN_OK);
  assert_int_equal(got.bool_value, 1);
  assert_int_equal(aotrun_cuda_backend_get_option(&g_b, "turbo", &got, buf,
                                                  sizeof buf, &err),
                   AOTRUN_ERR_NOT_FOUND);
  assert_non_null(strstr(err.message, "backend cuda has no option 'turbo'"));
  assert_int_equal(aotrun_cuda_backend_get_option(&g_b, "recapture", &got,
                                                  buf, sizeof buf, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(aotrun_cuda_backend_set_option(&g_b, NULL, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
}

/* Two backend objects share nothing. */
static void test_objects_are_separate(void **state) {
  (void)state;
  aotrun_cuda_backend other = AOTRUN_CUDA_BACKEND_INIT("cuda_b");
  aotrun_error err;
  aotrun_option set = {.key = "shared_stream", .type = AOTRUN_OPTION_BOOL,
                       .bool_value = 1};
  assert_int_equal(aotrun_cuda_backend_set_option(&other, &set, &err),
                   AOTRUN_OK);
  aotrun_cuda_options a, b;
  aotrun_cuda_backend_defaults(&g_b, &a);
  aotrun_cuda_backend_defaults(&other, &b);
  assert_int_equal(a.shared_stream, 0);
  assert_int_equal(b.shared_stream, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_reads_and_writes),
      cmocka_unit_test(test_buffer_rules),
      cmocka_unit_test(test_objects_are_separate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
