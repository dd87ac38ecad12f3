/*
 * test_execute_allocations.c: the steady-state execute path allocates only
 * the tensor objects the model itself asks for (issue 12: "no per-call
 * heap allocation on the execute path"). The fixture program through the
 * real cpu_ref plugin, opened as a host method by the host library
 * (registry, host checks, plugin, method runner, model library, shim):
 * after two warm-up calls, 100 calls through execute and 100 through
 * execute_ex (caller-capacity outputs) are counted (malloc, calloc,
 * realloc, memalign, aligned_alloc, posix_memalign) and every output must
 * still be right.
 *
 * What a call may allocate, exactly: the shim's objects for each tensor
 * handle the model owns during the call — the input handle the runner
 * wraps over the caller's data (storage, impl, handle: 3) and each tensor
 * the model creates with empty_strided (the same 3 plus its host data: 4;
 * on the GPU the data comes from the device pool instead). The fixture has
 * 1 input and creates 2 tensors: 3 + 2 * 4 = 11 per call. The host library,
 * the plugin and the runner add none (their per-call arrays are on the
 * stack); a new per-call allocation anywhere on the path fails this test.
 * With outputs written in place (the default; AOTRUN_OUTPUT_PLACEMENT=0
 * turns it off, as the first test does) the two output
 * tensors' data allocations go too: 3 + 2 * 3 = 9 on execute.
 *
 * The allocator is interposed by this executable (glibc's __libc_*
 * underneath); under a sanitizer (which owns malloc) the test skips with
 * the reason.
 *
 * Arguments: the plugin (libaotrun_cpu_ref.so) and fixture_model.so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OWN_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define OWN_MALLOC 0
#endif
#endif
#ifndef OWN_MALLOC
#define OWN_MALLOC 1
#endif

static _Atomic int g_counting;
static _Atomic long g_allocations;

#if OWN_MALLOC
/* glibc's allocator under its internal names: every object of the process
 * (plugin, shim, model) binds malloc to the definitions below. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* With AOTRUN_TEST_ALLOC_TRACE set, the stack of each counted allocation
 * goes to stderr (to find the caller when the test fails). */
static int g_trace;

static void note(void) {
  if (!atomic_load(&g_counting)) return;
  atomic_fetch_add(&g_allocations, 1);
  if (g_trace) {
    atomic_store(&g_counting, 0); /* backtrace may allocate */
    void *frames[12];
    int n = backtrace(frames, 12);
    fprintf(stderr, "-- allocation\n");
    backtrace_symbols_fd(frames, n, 2);
    atomic_store(&g_counting, 1);
  }
}
void *malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  note();
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void *memalign(size_t a, size_t n) {
  note();
  return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n) {
  note();
  return __libc_memalign(a, n);
}
int posix_memalign(void **out, size_t a, size_t n) {
  note();
  void *p = __libc_memalign(a, n);
  if (p == NULL) return 12; /* ENOMEM */
  *out = p;
  return 0;
}
void free(void *p) { __libc_free(p); }
#endif

static const char *g_plugin_path;
static const char *g_model_path;

typedef struct ctx {
  program_fixture program;
  aotrun_registry *registry;
  aotrun_program_dir *dir;
  aotrun_host_method *method;
} ctx;

static const DLDataType kF32 = {kDLFloat, 32, 1};

/* The shim's objects per tensor (see the top of the file). */
enum { kShimObjectsPerInput = 3, kShimObjectsPerTensor = 4 };

/* Outputs 64-byte aligned, as device allocations are: output placement
 * lends only such buffers. */
typedef struct call_io {
  float x[2 * 4];
  _Alignas(64) float y[2 * 3];
  _Alignas(64) float calls;
  int64_t x_shape[2];
  int64_t y_shape[2];
  int64_t calls_shape[1];
  DLTensor in[1];
  DLTensor out[2];
} call_io;

static void make_call(call_io *t, int call) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < 8; i++) t->x[i] = 0.25f * (float)(i + call) - 1.0f;
  t->x_shape[0] = 2;
  t->x_shape[1] = 4;
  t->y_shape[0] = 2;
  t->y_shape[1] = 3;
  t->calls_shape[0] = 1;
  t->in[0] = (DLTensor){t->x, {kDLCPU, 0}, 2, kF32, t->x_shape, NULL, 0};
  t->out[0] = (DLTensor){t->y, {kDLCPU, 0}, 2, kF32, t->y_shape, NULL, 0};
  t->out[1] = (DLTensor){&t->calls, {kDLCPU, 0}, 1, kF32, t->calls_shape,
                         NULL, 0};
}

/* Outputs of call number `n` (1-based) are the fixture's. */
static int outputs_right(const call_io *t, int n) {
  float want[6];
  program_fixture_expected(t->x, 2, want);
  for (int i = 0; i < 6; i++)
    if (t->y[i] != want[i]) return 0;
  return t->calls == (float)n;
}

static int setup(void **state) {
  ctx *c = calloc(1, sizeof *c);
  if (c == NULL) return -1;
  if (program_fixture_create(&c->program, g_model_path, "cpu") != 0) return -1;
  const aotrun_backend *b = NULL;
  if (aotrun_registry_create(&c->registry) != AOTRUN_OK ||
      aotrun_registry_load(c->registry, g_plugin_path, &b) != AOTRUN_OK ||
      aotrun_program_dir_open(c->program.dir, &c->dir) != AOTRUN_OK) {
    fprintf(stderr, "setup: %s\n", aotrun_host_last_error());
    return -1;
  }
  aotrun_key_value spec = {"method", "forward"};
  if (aotrun_host_method_open(c->registry, "cpu_ref",
                              aotrun_program_dir_host_api(c->dir),
                              c->program.manifest, c->program.manifest_size,
                              &spec, 1, &c->method) != AOTRUN_OK) {
    fprintf(stderr, "open: %s\n", aotrun_host_last_error());
    return -1;
  }
  *state = c;
  return 0;
}

/* The method made with outputs written in place on (1, the default) or
 * off (0: every output copied; aot_loader/output_placement.h). */
static int setup_placement(void **state, const char *on) {
  setenv("AOTRUN_OUTPUT_PLACEMENT", on, 1);
  int rc = setup(state);
  unsetenv("AOTRUN_OUTPUT_PLACEMENT");
  return rc;
}

static int setup_in_place(void **state) { return setup_placement(state, "1"); }

static int setup_copies(void **state) { return setup_placement(state, "0"); }

static int teardown(void **state) {
  ctx *c = *state;
  aotrun_host_method_close(c->method);
  aotrun_program_dir_close(c->dir);
  aotrun_registry_destroy(c->registry);
  program_fixture_remove(&c->program);
  free(c);
  return 0;
}

static aotrun_status run_plain(aotrun_host_method *m, call_io *t) {
  return aotrun_host_method_execute(m, t->in, 1, t->out, 2);
}

static aotrun_status run_ex(aotrun_host_method *m, call_io *t) {
  aotrun_execute_args args = {.struct_size = sizeof args,
                              .inputs = t->in,
                              .num_inputs = 1,
                              .outputs = t->out,
                              .num_outputs = 2};
  return aotrun_host_method_execute_ex(m, &args);
}

/* Runs `calls` counted calls after the warm-up; returns the allocations. */
static long counted_calls(ctx *c, aotrun_status (*run)(aotrun_host_method *,
                                                       call_io *),
                          int *calls_done, int calls) {
  call_io t;
  for (int i = 0; i < 2; i++) { /* warm-up: first-call work is allowed */
    make_call(&t, *calls_done);
    assert_int_equal(run(c->method, &t), AOTRUN_OK);
    assert_true(outputs_right(&t, ++*calls_done));
  }
  int wrong = 0;
  atomic_store(&g_allocations, 0);
  atomic_store(&g_counting, 1);
  for (int i = 0; i < calls; i++) {
    make_call(&t, *calls_done);
    aotrun_status s = run(c->method, &t);
    wrong += s != AOTRUN_OK || !outputs_right(&t, ++*calls_done);
  }
  atomic_store(&g_counting, 0);
  assert_int_equal(wrong, 0);
  return atomic_load(&g_allocations);
}

static void test_steady_calls_allocate_only_model_tensors(void **state) {
  if (!OWN_MALLOC) skip(); /* the sanitizer owns malloc: nothing to count */
  ctx *c = *state;
  int done = 0;
  long plain = counted_calls(c, run_plain, &done, 100);
  long ex = counted_calls(c, run_ex, &done, 100);
  const long per_call = kShimObjectsPerInput * 1 + kShimObjectsPerTensor * 2;
  if (plain != 100 * per_call || ex != 100 * per_call)
    fail_msg("heap allocations in 100 steady calls: execute %ld, "
             "execute_ex %ld (want %ld each: the model's tensor objects "
             "only; AOTRUN_TEST_ALLOC_TRACE=1 prints each one's stack)",
             plain, ex, 100 * per_call);
}

/* With outputs written in place, the model's two output tensors borrow
 * the caller's buffers on execute: their objects remain, their data
 * allocations go (from the third call: the plan is learnt over two), and
 * placement itself allocates nothing per call. cpu_ref's execute_ex runs
 * the model on handles and copies (cpu_ref_execute_ex.c): unchanged. */
static void test_outputs_in_place_allocate_no_data(void **state) {
  if (!OWN_MALLOC) skip();
  ctx *c = *state;
  int done = 0;
  long plain = counted_calls(c, run_plain, &done, 100);
  long ex = counted_calls(c, run_ex, &done, 100);
  const long in_place =
      kShimObjectsPerInput * 1 + (kShimObjectsPerTensor - 1) * 2;
  const long copied = kShimObjectsPerInput * 1 + kShimObjectsPerTensor * 2;
  if (plain != 100 * in_place || ex != 100 * copied)
    fail_msg("heap allocations in 100 steady calls with outputs in place: "
             "execute %ld (want %ld: the tensor objects, no output data), "
             "execute_ex %ld (want %ld)",
             plain, 100 * in_place, ex, 100 * copied);
}

/* The counter itself counts (so a zero above means something). */
static void test_counter_counts(void **state) {
  (void)state;
  if (!OWN_MALLOC) skip();
  atomic_store(&g_allocations, 0);
  atomic_store(&g_counting, 1);
  void *volatile p = malloc(24);
  void *volatile q = calloc(2, 8);
  atomic_store(&g_counting, 0);
  free(p);
  free(q);
  assert_int_equal(atomic_load(&g_allocations), 2);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s libaotrun_cpu_ref.so fixture_model.so\n",
            argv[0]);
    return 2;
  }
  g_plugin_path = argv[1];
  g_model_path = argv[2];
#if OWN_MALLOC
  g_trace = getenv("AOTRUN_TEST_ALLOC_TRACE") != NULL;
  void *warm[1];
  backtrace(warm, 1); /* loads libgcc now, not while counting */
#endif
  if (!OWN_MALLOC)
    fprintf(stderr, "SKIP: built with a sanitizer, which owns malloc; the "
                    "allocation count runs in the plain build\n");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counter_counts),
      cmocka_unit_test_setup_teardown(
          test_steady_calls_allocate_only_model_tensors,
                                      setup_copies, teardown),
      cmocka_unit_test_setup_teardown(test_outputs_in_place_allocate_no_data,
                                      setup_in_place, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
