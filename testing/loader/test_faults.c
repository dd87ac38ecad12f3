/*
 * test_faults.c: every fault point (aot_loader/fault_point.h) on the path
 * of a method's init, execute and destroy, failed one at a time.
 *
 * A method of the C fixture program (testing/backend/program_fixture.h) is
 * created, run three times and destroyed through the method runner, the
 * core of both backends, with a host that reads the program's files. A
 * first pass records every fault point reached, in order; then for each
 * reached point the whole sequence runs again with that one hit failed.
 * Each time:
 *   - the failing step returns an error whose message names the cause (the
 *     point's fragment: the errno text, the entry point, "forward.so"), or,
 *     for a point with a fallback (memfd -> unnamed file -> temp file), the
 *     load succeeds anyway;
 *   - a run after a failed run succeeds with exact outputs (a fault leaves
 *     the method usable);
 *   - no file is left in the private $TMPDIR, while loaded or after;
 *   - nothing leaks (the test runs under --config=asan with LeakSanitizer,
 *     and under valgrind in CI's valgrind step).
 * Three configurations: memfd (the default), a named temp file (memfd and
 * O_TMPFILE refused, library_temp_file=1), and the blob weights path.
 *
 * argv: fixture_model.so fixture_no_constants_api.so
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/fault_point.h"
#include "aot_loader/library_image.h"
#include "aot_loader/method_runner.h"
#include "testing/backend/program_fixture.h"
#include "testing/loader/loader_test_util.h"

static const char *g_model_so;
static const char *g_blob_so;

/* ---- the fault hook: record, or fail the N-th hit ----------------------- */

#define MAX_HITS 256
#define POINT_MAX 48

typedef struct sweep {
  int record;
  size_t hits;
  size_t fail_at; /* 1-based hit to fail; 0: none */
  char failed[POINT_MAX];
  char names[MAX_HITS][POINT_MAX];
  size_t num_names;
} sweep;

static sweep g_sweep;

/* The errno each point fails with: what the real call reports there. */
static int errno_for(const char *point) {
  static const struct {
    const char *point;
    int e;
  } kErrno[] = {
      {"temp_file.create", EACCES},      {"temp_file.write", ENOSPC},
      {"temp_file.close", EDQUOT},       {"library_image.memfd", EMFILE},
      {"library_image.tmpfile", EOPNOTSUPP},
      {"library_image.write", ENOSPC},   {"model_library.dlopen", ELIBBAD},
  };
  for (size_t i = 0; i < sizeof kErrno / sizeof kErrno[0]; i++)
    if (strcmp(point, kErrno[i].point) == 0) return kErrno[i].e;
  return EIO;
}

static int hook(void *ctx, const char *point) {
  sweep *s = ctx;
  s->hits++;
  if (s->record && s->num_names < MAX_HITS)
    snprintf(s->names[s->num_names++], POINT_MAX, "%s", point);
  if (s->hits != s->fail_at) return 0;
  snprintf(s->failed, sizeof s->failed, "%s", point);
  return errno_for(point);
}

/* What the user sees when `point` fails; NULL: the step falls back and
 * succeeds. */
static const char *expected_fragment(const char *point) {
  static const struct {
    const char *point, *fragment;
  } kWhat[] = {
      {"library_image.memfd", NULL},
      {"library_image.tmpfile", NULL},
      {"library_image.write", NULL},
      {"temp_file.create", "cannot create a temp file in"},
      {"temp_file.write", "No space left on device"},
      {"temp_file.close", "Disk quota exceeded"},
      {"model_library.dlopen",
       "cannot dlopen model library forward.so"},
      {"container_api.symbol",
       "forward.so is not an AOTInductor model library: missing required "
       "entry point"},
      {"model_library.create",
       "AOTInductorModelContainerCreateWithDevice returned 1 for forward.so"},
      {"model_library.constants",
       "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs "
       "returned 1 for forward.so"},
      {"model_library.blob",
       "AOTInductorModelUpdateConstantsFromBlob returned 1 for forward.so"},
      {"weight_cache.alloc", "cannot allocate"},
      {"weight_cache.upload", "uploading"},
      {"host.get_named_data", "the host has no named data"},
      {"model_library.run", "returned 1 for forward.so"},
      {"method_run.copy", "copying"},
      {"method_run.synchronize", "waiting for the stream failed"},
  };
  for (size_t i = 0; i < sizeof kWhat / sizeof kWhat[0]; i++)
    if (strcmp(point, kWhat[i].point) == 0) return kWhat[i].fragment;
  fail_msg("fault point %s has no expected message in this test", point);
  return NULL;
}

/* ---- a host that reads the program directory ---------------------------- */

typedef struct file_host {
  const char *dir;
} file_host;

static aotrun_status get_named_data(void *ctx, const char *key,
                                    const void **data, size_t *size,
                                    void **token) {
  const file_host *h = ctx;
  /* The host's own failure (a file gone, a read error) is a fault point of
   * this test, not of aotrun. */
  if (aotrun_fault_point("host.get_named_data")) return AOTRUN_ERR_NOT_FOUND;
  char path[700];
  snprintf(path, sizeof path, "%s/%s", h->dir, key);
  test_bytes b = test_read_file(path);
  *data = b.data;
  *size = b.size;
  *token = b.data;
  return AOTRUN_OK;
}

static void release_named_data(void *ctx, void *token) {
  (void)ctx;
  free(token);
}

/* ---- one init, three runs, destroy -------------------------------------- */

typedef struct mode {
  const char *name;
  int temp_file; /* named temp file: memfd and O_TMPFILE refused */
  int blob;      /* the blob weights path (fixture_no_constants_api) */
} mode;

typedef struct outcome {
  int init_failed;
  int runs_failed;
  char message[AOTRUN_ERROR_MESSAGE_SIZE];
} outcome;

static void note_failure(outcome *o, const aotrun_error *err) {
  if (o->message[0] == '\0')
    snprintf(o->message, sizeof o->message, "%s", err->message);
}

/* Runs x [2, 4] through the method; 0 when it failed (message kept). */
static int run_once(aotrun_method_runner *r, outcome *o) {
  float x[8] = {1, 2, 3, 4, -1, 0.5f, 0, 2};
  int64_t xs[2] = {2, 4}, ys[2] = {2, 3}, cs[1] = {1};
  float y[6] = {0}, calls[1] = {0};
  DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = xs};
  DLTensor out[2] = {
      {.data = y, .device = {kDLCPU, 0}, .ndim = 2,
       .dtype = {kDLFloat, 32, 1}, .shape = ys},
      {.data = calls, .device = {kDLCPU, 0}, .ndim = 1,
       .dtype = {kDLFloat, 32, 1}, .shape = cs}};
  aotrun_error err = {0};
  if (aotrun_method_runner_run(r, &in, 1, out, 2, NULL, &err) != AOTRUN_OK) {
    assert_true(err.message[0] != '\0');
    note_failure(o, &err);
    return 0;
  }
  float want[6];
  program_fixture_expected(x, 2, want);
  for (int i = 0; i < 6; i++) assert_float_equal(y[i], want[i], 1e-5);
  return 1;
}

static outcome init_run_destroy(const program_fixture *p, const mode *m) {
  outcome o = {0};
  file_host fh = {p->dir};
  aotrun_host_api host = {
      .abi_version = AOTRUN_ABI_VERSION,
      .struct_size = sizeof host,
      .ctx = &fh,
      .get_named_data = get_named_data,
      .release_named_data = release_named_data,
  };
  aotrun_method_runner_config c = {
      .host = &host,
      .manifest = p->manifest,
      .manifest_size = p->manifest_size,
      .method = "forward",
      .device = "cpu",
      .library_temp_file = m->temp_file,
  };
  aotrun_library_image_test_refuse(
      m->temp_file ? 1u << AOTRUN_IMAGE_UNNAMED_FILE : 0);
  aotrun_method_runner *r = NULL;
  aotrun_error err = {0};
  if (aotrun_method_runner_create(&c, &r, &err) != AOTRUN_OK) {
    assert_null(r);
    o.init_failed = 1;
    note_failure(&o, &err);
  } else {
    /* Loaded: the image is a memfd, or a temp file already unlinked. */
    assert_int_equal(test_tmpdir_count(), 0);
    int ok = 0;
    for (int i = 0; i < 3; i++) ok += run_once(r, &o);
    o.runs_failed = 3 - ok;
    aotrun_method_runner_destroy(r);
  }
  aotrun_library_image_test_refuse(0);
  assert_int_equal(test_tmpdir_count(), 0);
  return o;
}

/* ---- the sweep ---------------------------------------------------------- */

static const char *const kInitPoints[] = {
    "host.get_named_data", "container_api.symbol", "model_library.dlopen",
    "model_library.create"};
static const char *const kRunPoints[] = {
    "model_library.run", "method_run.copy", "method_run.synchronize"};

static int recorded(const char *point) {
  for (size_t i = 0; i < g_sweep.num_names; i++)
    if (strcmp(g_sweep.names[i], point) == 0) return 1;
  return 0;
}

static void expect_reached(const char *const *points, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!recorded(points[i])) fail_msg("fault point %s not reached", points[i]);
}

static void check_one(const program_fixture *p, const mode *m, size_t k) {
  memset(&g_sweep, 0, sizeof g_sweep);
  g_sweep.fail_at = k;
  aotrun_fault_set_hook(hook, &g_sweep);
  outcome o = init_run_destroy(p, m);
  aotrun_fault_set_hook(NULL, NULL);
  const char *point = g_sweep.failed;
  assert_true(point[0] != '\0');
  const char *frag = expected_fragment(point);
  if (frag == NULL) { /* a fallback: everything works */
    if (o.init_failed || o.runs_failed)
      fail_msg("%s (%s): failing %s should fall back, got: %s", m->name,
               point, point, o.message);
    return;
  }
  /* Exactly one step failed, and the others worked. */
  if (o.init_failed + o.runs_failed != 1 || strstr(o.message, frag) == NULL)
    fail_msg("%s: failing %s (hit %zu): %d init / %d run failures, "
             "message \"%s\", expected \"%s\"",
             m->name, point, k, o.init_failed, o.runs_failed, o.message,
             frag);
  /* The library is named as the user knows it, never by its copy
   * (a temp file that failed to be written is named: it is the cause). */
  if (strncmp(point, "temp_file.", 10) != 0 &&
      (strstr(o.message, "/proc/self/fd") != NULL ||
       strstr(o.message, "aotrun-model-") != NULL))
    fail_msg("%s: failing %s names the library's copy: %s", m->name, point,
             o.message);
  print_message("%-8s %-24s -> %s\n", m->name, point, o.message);
}

static void sweep_mode(const mode *m) {
  program_fixture p;
  assert_int_equal(
      program_fixture_create(&p, m->blob ? g_blob_so : g_model_so, "cpu"), 0);
  test_tmpdir_begin();
  memset(&g_sweep, 0, sizeof g_sweep);
  g_sweep.record = 1;
  aotrun_fault_set_hook(hook, &g_sweep);
  outcome o = init_run_destroy(&p, m);
  aotrun_fault_set_hook(NULL, NULL);
  if (o.init_failed || o.runs_failed) fail_msg("%s: %s", m->name, o.message);
  expect_reached(kInitPoints, sizeof kInitPoints / sizeof kInitPoints[0]);
  expect_reached(kRunPoints, sizeof kRunPoints / sizeof kRunPoints[0]);
  if (m->blob) {
    static const char *const kBlob[] = {"model_library.blob"};
    expect_reached(kBlob, 1);
  } else {
    static const char *const kViews[] = {
        "model_library.constants", "weight_cache.alloc", "weight_cache.upload"};
    expect_reached(kViews, 3);
  }
  if (m->temp_file) {
    static const char *const kTemp[] = {"temp_file.create", "temp_file.write",
                                        "temp_file.close"};
    expect_reached(kTemp, 3);
  } else {
    static const char *const kImage[] = {"library_image.memfd",
                                         "library_image.write"};
    expect_reached(kImage, 2);
  }
  size_t total = g_sweep.hits;
  print_message("%s: %zu fault point hits\n", m->name, total);
  for (size_t k = 1; k <= total; k++) check_one(&p, m, k);
  test_tmpdir_end();
  program_fixture_remove(&p);
}

static void test_faults_memfd(void **state) {
  (void)state;
  mode m = {"memfd", 0, 0};
  sweep_mode(&m);
}

static void test_faults_temp_file(void **state) {
  (void)state;
  mode m = {"tempfile", 1, 0};
  sweep_mode(&m);
}

static void test_faults_blob(void **state) {
  (void)state;
  mode m = {"blob", 0, 1};
  sweep_mode(&m);
}

/* ---- several points at once: every image kind refused ------------------ */

/* Fails every hit of the points named in ctx (a NULL-terminated list). */
static int fail_named(void *ctx, const char *point) {
  for (const char *const *p = ctx; *p != NULL; p++)
    if (strcmp(*p, point) == 0) return errno_for(point);
  return 0;
}

static void test_image_fallbacks_exhausted(void **state) {
  (void)state;
  program_fixture p;
  assert_int_equal(program_fixture_create(&p, g_model_so, "cpu"), 0);
  test_tmpdir_begin();
  mode m = {"fallbacks", 0, 0};
  /* memfd and O_TMPFILE refused: the named temp file works. */
  static const char *const kTwo[] = {"library_image.memfd",
                                     "library_image.tmpfile", NULL};
  aotrun_fault_set_hook(fail_named, (void *)kTwo);
  outcome o = init_run_destroy(&p, &m);
  if (o.init_failed || o.runs_failed) fail_msg("%s", o.message);
  /* ... and when that one finds the disk full too, every reason is told. */
  static const char *const kAll[] = {"library_image.memfd",
                                     "library_image.tmpfile",
                                     "temp_file.write", NULL};
  aotrun_fault_set_hook(fail_named, (void *)kAll);
  o = init_run_destroy(&p, &m);
  aotrun_fault_set_hook(NULL, NULL);
  assert_true(o.init_failed);
  static const char *const kParts[] = {
      "memfd: Too many open files", "unnamed temp file: O_TMPFILE in ",
      "Operation not supported", "No space left on device"};
  for (size_t i = 0; i < 4; i++)
    if (strstr(o.message, kParts[i]) == NULL)
      fail_msg("\"%s\" lacks \"%s\"", o.message, kParts[i]);
  test_tmpdir_end();
  program_fixture_remove(&p);
}

/* Without a hook no point fails (production). */
static void test_no_hook_never_fails(void **state) {
  (void)state;
  aotrun_fault_set_hook(NULL, NULL);
  assert_int_equal(aotrun_fault_point("temp_file.write"), 0);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s fixture_model.so fixture_no_constants_api.so\n",
            argv[0]);
    return 2;
  }
  g_model_so = argv[1];
  g_blob_so = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_hook_never_fails),
      cmocka_unit_test(test_faults_memfd),
      cmocka_unit_test(test_faults_temp_file),
      cmocka_unit_test(test_faults_blob),
      cmocka_unit_test(test_image_fallbacks_exhausted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
