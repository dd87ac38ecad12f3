/*
 * test_concurrency.c: the host library and the cpu_ref plugin under
 * concurrent use, as docs/plugin-abi.md ("Threading") allows it:
 *   - THREADS worker threads, each with its own host methods over several
 *     programs (program directories) and several methods per program
 *     (manifests with METHODS methods over the fixture model), all on one
 *     shared registry and the programs' shared named-data services;
 *   - a churn thread that creates whole programs (files, program dir,
 *     methods), runs them and destroys them while the workers execute;
 *   - a thread that moves its own host method between two backends
 *     (swap_backend) while the others run.
 * Every call's outputs are checked: y exactly as the fixture computes it
 * and the per-handle call counter equal to the number of calls made on that
 * handle (handles share nothing). Runs under --config=tsan in CI.
 *
 * Worker threads never call CMocka (its asserts longjmp): they count
 * failures and keep the first message; the main thread asserts.
 *
 * Arguments: libaotrun_cpu_ref.so, fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

#define PROGRAMS 3
#define METHODS 3
#define THREADS 4
#define ROUNDS 6         /* handles opened and closed per worker */
#define CALLS 8          /* calls per handle */
#define CHURN_ROUNDS 4   /* programs created and destroyed by the churn */

static const char *g_plugin_path;
static const char *g_model_path;

/* ---- failures reported from threads ------------------------------------- */

static atomic_int g_failures;
static atomic_long g_calls_checked;
static pthread_mutex_t g_msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_first_failure[1024];

static void report(const char *fmt, ...) {
  if (atomic_fetch_add(&g_failures, 1) != 0) return;
  pthread_mutex_lock(&g_msg_lock);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_first_failure, sizeof g_first_failure, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&g_msg_lock);
}

/* ---- programs with several methods -------------------------------------- */

typedef struct program {
  program_fixture files;
  aotrun_program_dir *dir;
  char *manifest; /* METHODS methods, all over forward.so */
  size_t manifest_size;
} program;

static const char *method_name(int m) {
  static const char *const kNames[METHODS] = {"forward", "forward_b",
                                              "forward_c"};
  return kNames[m];
}

/* The fixture's manifest has one method, "forward": repeat its body under
 * METHODS names. Every method loads its own copy of forward.so and has its
 * own constants (its own call counter). */
static char *multi_method_manifest(const char *one, size_t *size) {
  const char *key = "\"forward\": ";
  const char *start = strstr(one, key);
  size_t len = strlen(one);
  while (len > 0 && (one[len - 1] == '\n' || one[len - 1] == ' ')) len--;
  if (start == NULL || len < 2) return NULL;
  const char *body = start + strlen(key);
  size_t body_len = (size_t)((one + len - 2) - body); /* drop "}}" */
  size_t cap = (size_t)(start - one) + METHODS * (body_len + 32) + 8;
  char *out = malloc(cap);
  if (out == NULL) return NULL;
  size_t n = (size_t)(start - one);
  memcpy(out, one, n);
  for (int m = 0; m < METHODS; m++)
    n += (size_t)snprintf(out + n, cap - n, "%s\"%s\": %.*s",
                          m ? ", " : "", method_name(m), (int)body_len, body);
  n += (size_t)snprintf(out + n, cap - n, "}}\n");
  *size = n;
  return out;
}

static int program_create(program *p) {
  memset(p, 0, sizeof *p);
  if (program_fixture_create(&p->files, g_model_path, "cpu") != 0) return -1;
  p->manifest = multi_method_manifest(p->files.manifest, &p->manifest_size);
  if (p->manifest == NULL) return -1;
  if (aotrun_program_dir_open(p->files.dir, &p->dir) != AOTRUN_OK) return -1;
  aotrun_program_dir_set_log_level(p->dir, AOTRUN_LOG_ERROR + 1);
  return 0;
}

static void program_destroy(program *p) {
  aotrun_program_dir_close(p->dir);
  free(p->manifest);
  program_fixture_remove(&p->files);
  memset(p, 0, sizeof *p);
}

/* ---- one checked call ---------------------------------------------------- */

static const DLDataType kF32 = {kDLFloat, 32, 1};

/* Runs m once with `rows` rows derived from seed; expects the handle's
 * call counter to read `call` afterwards. Returns 0 when all checks hold. */
static int checked_call(aotrun_host_method *m, int64_t rows, unsigned seed,
                        int call, const char *who) {
  float x[5 * 4], y[5 * 3], want[5 * 3], calls = -1.0f;
  int64_t xs[2] = {rows, 4}, ys[2] = {5, 3}, cs[1] = {1};
  for (int i = 0; i < rows * 4; i++)
    x[i] = (float)((int)((seed * 2654435761u + (unsigned)i * 40503u) >> 20) %
                   97 - 48) / 16.0f;
  memset(y, 0xff, sizeof y);
  DLTensor in = {x, {kDLCPU, 0}, 2, kF32, xs, NULL, 0};
  DLTensor out[2] = {{y, {kDLCPU, 0}, 2, kF32, ys, NULL, 0},
                     {&calls, {kDLCPU, 0}, 1, kF32, cs, NULL, 0}};
  aotrun_status st = aotrun_host_method_execute(m, &in, 1, out, 2);
  if (st != AOTRUN_OK) {
    report("%s: execute failed (%d): %s", who, (int)st,
         aotrun_host_last_error());
    return -1;
  }
  if (ys[0] != rows) {
    report("%s: %lld rows returned, %lld expected", who, (long long)ys[0],
         (long long)rows);
    return -1;
  }
  program_fixture_expected(x, rows, want);
  if (memcmp(y, want, (size_t)rows * 3 * sizeof(float)) != 0) {
    report("%s: wrong y (first %g, expected %g)", who, (double)y[0],
         (double)want[0]);
    return -1;
  }
  if (calls != (float)call) {
    report("%s: call counter %g, expected %d (handles share state?)", who,
         (double)calls, call);
    return -1;
  }
  atomic_fetch_add(&g_calls_checked, 1);
  return 0;
}

/* ---- shared state --------------------------------------------------------- */

static aotrun_registry *g_reg;
static program g_programs[PROGRAMS];
static atomic_int g_workers_done;

static aotrun_host_method *open_method(const program *p, int m,
                                       const char *backend, const char *who) {
  aotrun_key_value spec = {"method", method_name(m)};
  aotrun_host_method *hm = NULL;
  aotrun_status st = aotrun_host_method_open(
      g_reg, backend, aotrun_program_dir_host_api(p->dir), p->manifest,
      p->manifest_size, &spec, 1, &hm);
  if (st != AOTRUN_OK) {
    report("%s: opening %s failed (%d): %s", who, method_name(m), (int)st,
         aotrun_host_last_error());
    return NULL;
  }
  return hm;
}

/* A worker: keeps one long-lived handle across its rounds and opens, runs
 * and closes a fresh one (another program and method) every round. */
static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  char who[64];
  snprintf(who, sizeof who, "worker %d long-lived", t);
  aotrun_host_method *keep =
      open_method(&g_programs[t % PROGRAMS], t % METHODS, "cpu_ref", who);
  int keep_calls = 0;
  for (int r = 0; r < ROUNDS && keep != NULL; r++) {
    int p = (t + r) % PROGRAMS, m = (t * 7 + r) % METHODS;
    char w[96];
    snprintf(w, sizeof w, "worker %d round %d (program %d, %s)", t, r, p,
             method_name(m));
    aotrun_host_method *hm = open_method(&g_programs[p], m, "cpu_ref", w);
    for (int c = 1; hm != NULL && c <= CALLS; c++) {
      if (checked_call(hm, 1 + (t + c) % 5, (unsigned)(t * 1000 + r * 10 + c),
                       c, w) != 0)
        break;
      if (checked_call(keep, 1 + c % 5, (unsigned)(t + c), ++keep_calls,
                       who) != 0)
        break;
    }
    aotrun_host_method_close(hm);
  }
  aotrun_host_method_close(keep);
  atomic_fetch_add(&g_workers_done, 1);
  return NULL;
}

/* Creates, runs and destroys whole programs while the workers run. */
static void *churn(void *arg) {
  (void)arg;
  for (int r = 0; r < CHURN_ROUNDS; r++) {
    program p;
    if (program_create(&p) != 0) {
      report("churn: cannot create program %d", r);
      program_destroy(&p);
      return NULL;
    }
    aotrun_host_method *hm[METHODS] = {NULL};
    for (int m = 0; m < METHODS; m++) {
      char w[64];
      snprintf(w, sizeof w, "churn program %d %s", r, method_name(m));
      hm[m] = open_method(&p, m, "cpu_ref", w);
      for (int c = 1; hm[m] != NULL && c <= 2; c++)
        checked_call(hm[m], 1 + (r + m + c) % 5, (unsigned)(r * 31 + c), c,
                     w);
    }
    for (int m = 0; m < METHODS; m++) aotrun_host_method_close(hm[m]);
    if (aotrun_program_dir_num_mapped(p.dir) != 0)
      report("churn: program %d still has named data mapped", r);
    program_destroy(&p);
  }
  return NULL;
}

/* Swaps its own method while the others run. The registry refuses a second
 * backend of the same name, so the swap target is cpu_ref itself: every
 * swap makes a fresh handle (the call counter starts again at 1). */
static void *swapper(void *arg) {
  (void)arg;
  aotrun_host_method *hm = open_method(&g_programs[0], 1, "cpu_ref", "swap");
  for (int r = 0; hm != NULL && r < ROUNDS; r++) {
    for (int c = 1; c <= 3; c++)
      if (checked_call(hm, 1 + c, (unsigned)(r * 5 + c), c, "swap") != 0)
        break;
    if (aotrun_host_method_swap_backend(hm, "cpu_ref") != AOTRUN_OK) {
      report("swap: swap_backend failed: %s", aotrun_host_last_error());
      break;
    }
  }
  aotrun_host_method_close(hm);
  return NULL;
}

/* ---- tests ---------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  if (aotrun_registry_create(&g_reg) != AOTRUN_OK ||
      aotrun_registry_load(g_reg, g_plugin_path, NULL) != AOTRUN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", g_plugin_path,
            aotrun_host_last_error());
    return -1;
  }
  for (int p = 0; p < PROGRAMS; p++)
    if (program_create(&g_programs[p]) != 0) {
      fprintf(stderr, "cannot create program %d\n", p);
      return -1;
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int p = 0; p < PROGRAMS; p++) program_destroy(&g_programs[p]);
  aotrun_registry_destroy(g_reg);
  g_reg = NULL;
  return 0;
}

static void reset_failures(void) {
  atomic_store(&g_failures, 0);
  atomic_store(&g_calls_checked, 0);
  g_first_failure[0] = '\0';
}

static void assert_no_failures(void) {
  if (atomic_load(&g_failures) != 0)
    fail_msg("%d failure(s), the first: %s", atomic_load(&g_failures),
             g_first_failure);
}

/* The multi-method manifest parses and every method runs (single thread). */
static void test_methods_of_one_program(void **state) {
  (void)state;
  reset_failures();
  for (int m = 0; m < METHODS; m++) {
    aotrun_host_method *hm = open_method(&g_programs[0], m, "cpu_ref", "one");
    assert_non_null(hm);
    for (int c = 1; c <= 3; c++)
      assert_int_equal(checked_call(hm, c, (unsigned)c, c, "one"), 0);
    aotrun_host_method_close(hm);
  }
  assert_no_failures();
}

/* Workers, churn and swapper at once. */
static void test_threads_methods_programs(void **state) {
  (void)state;
  reset_failures();
  atomic_store(&g_workers_done, 0);
  pthread_t w[THREADS], ch, sw;
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(
        pthread_create(&w[t], NULL, worker, (void *)(intptr_t)t), 0);
  assert_int_equal(pthread_create(&ch, NULL, churn, NULL), 0);
  assert_int_equal(pthread_create(&sw, NULL, swapper, NULL), 0);
  for (int t = 0; t < THREADS; t++) pthread_join(w[t], NULL);
  pthread_join(ch, NULL);
  pthread_join(sw, NULL);
  assert_no_failures();
  long want = (long)THREADS * ROUNDS * CALLS * 2 +
              (long)CHURN_ROUNDS * METHODS * 2 + (long)ROUNDS * 3;
  assert_int_equal(atomic_load(&g_calls_checked), want);
  for (int p = 0; p < PROGRAMS; p++)
    assert_int_equal(aotrun_program_dir_num_mapped(g_programs[p].dir), 0);
}

/* Many threads on one program's named-data service, and its log level
 * changed while they load (set_log_level is atomic). */
static void *loader(void *arg) {
  program *p = arg;
  for (int r = 0; r < 3; r++) {
    aotrun_host_method *hm = open_method(p, r % METHODS, "cpu_ref", "loader");
    if (hm != NULL) checked_call(hm, 2, (unsigned)r, 1, "loader");
    aotrun_host_method_close(hm);
  }
  return NULL;
}

static void test_one_program_many_threads(void **state) {
  (void)state;
  reset_failures();
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_create(&th[t], NULL, loader, &g_programs[1]), 0);
  for (int i = 0; i < 50; i++)
    aotrun_program_dir_set_log_level(g_programs[1].dir,
                                     AOTRUN_LOG_ERROR + 1 + i % 2);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  assert_no_failures();
  assert_int_equal(atomic_load(&g_calls_checked), THREADS * 3);
  assert_int_equal(aotrun_program_dir_num_mapped(g_programs[1].dir), 0);
}

/* Read by ThreadSanitizer at start-up (its documented hook; unused in other
 * builds). A model library's constructors, run by ld.so inside dlopen
 * (call_init), write memory ld.so has just mapped where another thread's
 * mmap had been (a weights file, since unmapped): TSan does not see ld.so's
 * own mappings and reports its stale shadow as a race with that mmap. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) { return "race:call_init\n"; }

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strstr(argv[i], "cpu_ref")) g_plugin_path = argv[i];
    if (strstr(argv[i], "fixture_model")) g_model_path = argv[i];
  }
  if (g_plugin_path == NULL || g_model_path == NULL) {
    fprintf(stderr, "usage: %s libaotrun_cpu_ref.so fixture_model.so\n",
            argv[0]);
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_methods_of_one_program),
      cmocka_unit_test(test_threads_methods_programs),
      cmocka_unit_test(test_one_program_many_threads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
