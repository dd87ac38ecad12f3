/*
 * test_query_error.c: a const query's failure is kept per thread with the
 * serial of its handle (aot_loader/query_error.h): another handle's serial
 * or another thread sees none, forget drops only its own, a later failure
 * replaces an earlier one, and serials are unique across threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/query_error.h"

static aotrun_error make_error(const char *text) {
  aotrun_error e;
  aotrun_error_set(&e, AOTRUN_ERR_INVALID_ARGUMENT, "%s", text);
  return e;
}

static void test_kept_for_its_serial_only(void **state) {
  (void)state;
  uint64_t a = aotrun_query_serial_next(), b = aotrun_query_serial_next();
  assert_true(a != 0 && b != 0 && a != b);
  assert_null(aotrun_query_error_message(a));
  aotrun_error e = make_error("index 9 is out of range");
  assert_int_equal(aotrun_query_error_keep(a, AOTRUN_ERR_INVALID_ARGUMENT, &e),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_query_error_message(a), "index 9 is out of range");
  assert_null(aotrun_query_error_message(b));
  aotrun_query_error_forget(b); /* not b's: a's stays */
  assert_non_null(aotrun_query_error_message(a));
  aotrun_query_error_forget(a);
  assert_null(aotrun_query_error_message(a));
}

static void test_ok_keeps_nothing_and_later_replaces(void **state) {
  (void)state;
  uint64_t a = aotrun_query_serial_next(), b = aotrun_query_serial_next();
  aotrun_error e = make_error("first");
  assert_int_equal(aotrun_query_error_keep(a, AOTRUN_OK, &e), AOTRUN_OK);
  assert_null(aotrun_query_error_message(a));
  aotrun_query_error_keep(a, AOTRUN_ERR_NOT_FOUND, &e);
  aotrun_error e2 = make_error("second");
  aotrun_query_error_keep(b, AOTRUN_ERR_NOT_FOUND, &e2);
  /* One kept failure per thread: b's replaced a's. */
  assert_null(aotrun_query_error_message(a));
  assert_string_equal(aotrun_query_error_message(b), "second");
  /* Serial 0 (no handle) never matches or keeps. */
  assert_null(aotrun_query_error_message(0));
  aotrun_query_error_keep(0, AOTRUN_ERR_NOT_FOUND, &e);
  assert_string_equal(aotrun_query_error_message(b), "second");
  aotrun_query_error_forget(b);
}

typedef struct peer {
  uint64_t serial;
  const char *seen; /* what the peer thread saw for serial */
  uint64_t serials[1000];
} peer;

static void *peer_thread(void *p) {
  peer *q = p;
  q->seen = aotrun_query_error_message(q->serial);
  aotrun_error e = make_error("peer's own");
  aotrun_query_error_keep(q->serial, AOTRUN_ERR_INVALID_ARGUMENT, &e);
  for (int i = 0; i < 1000; i++) q->serials[i] = aotrun_query_serial_next();
  return NULL;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

static void test_per_thread_and_unique_serials(void **state) {
  (void)state;
  peer p[4];
  memset(p, 0, sizeof p);
  uint64_t s = aotrun_query_serial_next();
  aotrun_error e = make_error("main's");
  aotrun_query_error_keep(s, AOTRUN_ERR_INVALID_ARGUMENT, &e);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    p[i].serial = s;
    assert_int_equal(pthread_create(&th[i], NULL, peer_thread, &p[i]), 0);
  }
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < 4; i++) assert_null(p[i].seen);
  /* The peers' failures on the same serial stayed theirs. */
  assert_string_equal(aotrun_query_error_message(s), "main's");
  static uint64_t all[4000];
  for (int i = 0; i < 4; i++) memcpy(&all[i * 1000], p[i].serials, 8000);
  qsort(all, 4000, sizeof all[0], cmp_u64);
  for (int i = 1; i < 4000; i++) assert_true(all[i] != all[i - 1]);
  aotrun_query_error_forget(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kept_for_its_serial_only),
      cmocka_unit_test(test_ok_keeps_nothing_and_later_replaces),
      cmocka_unit_test(test_per_thread_and_unique_serials),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
