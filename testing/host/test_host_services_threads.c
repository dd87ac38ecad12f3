/*
 * test_host_services_threads.c: the host services a program directory
 * gives plugins (aotrun_host_api: log, get_named_data, release_named_data)
 * called from many threads at once, as plugin-owned threads may, while the
 * host changes the log threshold (docs/plugin-abi.md, "Threading"). Run
 * under ThreadSanitizer by testing/run_tests.sh (tag "concurrency").
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"

#define THREADS 8
#define ROUNDS 200

static const char kBytes[] = "named data read by every thread";

typedef struct shared {
  const aotrun_host_api *host;
  int failures; /* written by one thread each, read after join */
} shared;

typedef struct worker {
  shared *s;
  int index, failures;
} worker;

static void *work(void *p) {
  worker *w = p;
  const aotrun_host_api *h = w->s->host;
  char msg[64];
  for (int i = 0; i < ROUNDS; i++) {
    /* Mostly below the threshold; ERROR lines print when it allows. */
    snprintf(msg, sizeof msg, "thread %d round %d", w->index, i);
    h->log(h->ctx, i % 50 == 0 ? AOTRUN_LOG_ERROR : AOTRUN_LOG_DEBUG, msg);
    const void *data = NULL;
    size_t size = 0;
    void *token = NULL;
    if (h->get_named_data(h->ctx, "data.bin", &data, &size, &token) !=
            AOTRUN_OK ||
        size != sizeof kBytes - 1 || memcmp(data, kBytes, size) != 0) {
      w->failures++;
      continue;
    }
    h->release_named_data(h->ctx, token);
  }
  return NULL;
}

static void test_services_from_many_threads(void **state) {
  (void)state;
  char dir[256];
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(dir, sizeof dir, "%s/svcXXXXXX", tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/data.bin", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(kBytes, f);
  fclose(f);
  aotrun_program_dir *d = NULL;
  assert_int_equal(aotrun_program_dir_open(dir, &d), AOTRUN_OK);
  shared s = {aotrun_program_dir_host_api(d), 0};
  worker w[THREADS];
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){&s, i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  /* The host changes the threshold while plugins log. */
  for (int i = 0; i < 100; i++)
    aotrun_program_dir_set_log_level(
        d, i % 2 ? AOTRUN_LOG_ERROR : AOTRUN_LOG_ERROR + 1);
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    s.failures += w[i].failures;
  }
  assert_int_equal(s.failures, 0);
  assert_int_equal(aotrun_program_dir_num_mapped(d), 0);
  aotrun_program_dir_close(d);
  remove(path);
  remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_services_from_many_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
