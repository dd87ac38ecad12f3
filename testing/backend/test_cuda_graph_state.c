/*
 * test_cuda_graph_state.c: every phase and edge of the CUDA graph state
 * machine (backend_cuda/cuda_graph_state.h), driven deterministically on
 * the CPU through the aotrun_graph_ops seam with counting fakes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda/cuda_graph_state.h"

/* ---- the fake CUDA ---- */

enum fail_point {
  FAIL_NONE,
  FAIL_STATIC_ALLOC,
  FAIL_COPY_INPUTS,
  FAIL_POOL_CREATE,
  FAIL_BEGIN,
  FAIL_RUN_CAPTURE, /* a shim refuses inside the capture */
  FAIL_END,
  FAIL_INSTANTIATE,
  FAIL_LAUNCH,
  FAIL_SYNC, /* after the first launch started */
};

#define MAX_LOGS 32

typedef struct fake {
  enum fail_point fail;
  int capturing;
  void *installed_pool;
  int pool_installed_in_capture; /* run_capture saw the pool installed */
  /* call counts */
  int run_direct, run_capture, begin, end, instantiate, launch, sync;
  int graphs_made, graphs_destroyed, execs_made, execs_destroyed;
  int clear_error, static_allocs, static_frees, copy_inputs, copy_outputs;
  int outputs_made, outputs_deleted, pools_made, pools_destroyed;
  size_t capture_need; /* device bytes the model takes from the pool */
  size_t need_step;    /* added to capture_need by each recording */
  size_t last_reserve; /* pool_create's reserve argument, last call */
  int pool_create_calls, fail_pool_create_at; /* 0: never */
  aotrun_status run_direct_status; /* what a direct run returns */
  aotrun_status direct_after_failure; /* for the retry (call >= 4) */
  int fail_direct_from_call;          /* 0: never */
  float last_output;                  /* value written by the last call */
  int nlogs;
  int log_level[MAX_LOGS];
  char log_text[MAX_LOGS][512];
} fake;

static fake F;

/* calloc, wrapped at link time (BUILD: -Wl,--wrap=calloc, static link, so
 * the graph state's own callocs come here): with calloc_countdown = n > 0
 * the n-th calloc from then on returns NULL, as on an exhausted heap. */
static long calloc_countdown, calloc_calls;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) {
  calloc_calls++;
  if (calloc_countdown > 0 && --calloc_countdown == 0) return NULL;
  return __real_calloc(n, size);
}

static aotrun_status fail_if(enum fail_point p, aotrun_error *err,
                             const char *what) {
  if (F.fail != p) return AOTRUN_OK;
  return aotrun_error_set(err, AOTRUN_ERR_INTERNAL, "fake %s failed", what);
}

static aotrun_status f_run_direct(void *ctx, const DLTensor *in, size_t ni,
                                  DLTensor *out, size_t no,
                                  aotrun_error *err) {
  (void)ctx;
  (void)ni;
  F.run_direct++;
  if (F.fail_direct_from_call && F.run_direct >= F.fail_direct_from_call)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL, "fake model failed");
  if (no > 0) ((float *)out[0].data)[0] = ((const float *)in[0].data)[0] + 1;
  F.last_output = 1;
  return F.run_direct_status;
}

static aotrun_status f_run_capture(void *ctx, const DLTensor *in, size_t ni,
                                   AtenTensorHandle *out, size_t no,
                                   aotrun_error *err) {
  (void)ctx;
  (void)in;
  (void)ni;
  F.run_capture++;
  F.pool_installed_in_capture = F.installed_pool != NULL && F.capturing;
  /* The model's allocations: the pool grows where its reserve is short. */
  size_t *pool_bytes = F.installed_pool;
  if (pool_bytes != NULL && *pool_bytes < F.capture_need)
    *pool_bytes = F.capture_need;
  F.capture_need += F.need_step;
  if (F.fail == FAIL_RUN_CAPTURE)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "aoti_torch_item_float32 cannot run inside a "
                            "CUDA graph capture");
  for (size_t i = 0; i < no; i++) {
    out[i] = (AtenTensorHandle)(uintptr_t)(0x1000 + F.outputs_made);
    F.outputs_made++;
  }
  return AOTRUN_OK;
}

static aotrun_status f_begin(void *ctx, aotrun_error *err) {
  (void)ctx;
  F.begin++;
  aotrun_status st = fail_if(FAIL_BEGIN, err, "cudaStreamBeginCapture");
  if (st == AOTRUN_OK) F.capturing = 1;
  return st;
}

static aotrun_status f_end(void *ctx, void **graph, aotrun_error *err) {
  (void)ctx;
  F.end++;
  F.capturing = 0; /* the real call ends the capture even when it fails */
  *graph = malloc(8);
  F.graphs_made++;
  if (F.fail == FAIL_END || F.fail == FAIL_RUN_CAPTURE)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "cudaStreamEndCapture: operation not permitted "
                            "when stream is capturing (invalidated)");
  return AOTRUN_OK;
}

static int f_is_capturing(void *ctx) {
  (void)ctx;
  return F.capturing;
}

static aotrun_status f_instantiate(void *ctx, void *graph, void **exec,
                                   aotrun_error *err) {
  (void)ctx;
  assert_non_null(graph);
  F.instantiate++;
  aotrun_status st = fail_if(FAIL_INSTANTIATE, err, "cudaGraphInstantiate");
  if (st != AOTRUN_OK) return st;
  *exec = malloc(8);
  F.execs_made++;
  return AOTRUN_OK;
}

static aotrun_status f_launch(void *ctx, void *exec, aotrun_error *err) {
  (void)ctx;
  assert_non_null(exec);
  F.launch++;
  return fail_if(FAIL_LAUNCH, err, "cudaGraphLaunch");
}

static aotrun_status f_sync(void *ctx, aotrun_error *err) {
  (void)ctx;
  F.sync++;
  return fail_if(FAIL_SYNC, err, "cudaStreamSynchronize (illegal address)");
}

static void f_destroy_graph(void *ctx, void *graph) {
  (void)ctx;
  F.graphs_destroyed++;
  free(graph);
}

static void f_destroy_exec(void *ctx, void *exec) {
  (void)ctx;
  F.execs_destroyed++;
  free(exec);
}

static void f_clear_error(void *ctx) {
  (void)ctx;
  F.clear_error++;
}

static aotrun_status f_static_alloc(void *ctx, size_t bytes, void **ptr,
                                    aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fail_if(FAIL_STATIC_ALLOC, err, "cudaMalloc");
  if (st != AOTRUN_OK) return st;
  *ptr = malloc(bytes); /* not calloc: the sweep below fails callocs */
  assert_non_null(*ptr);
  memset(*ptr, 0, bytes);
  F.static_allocs++;
  return AOTRUN_OK;
}

static void f_static_free(void *ctx, void *ptr) {
  (void)ctx;
  F.static_frees++;
  free(ptr);
}

static aotrun_status f_copy_inputs(void *ctx, const DLTensor *in,
                                   const DLTensor *st, size_t n,
                                   aotrun_error *err) {
  (void)ctx;
  F.copy_inputs++;
  aotrun_status s = fail_if(FAIL_COPY_INPUTS, err, "cudaMemcpyAsync");
  if (s != AOTRUN_OK) return s;
  for (size_t i = 0; i < n; i++) {
    size_t numel = 1;
    for (int d = 0; d < in[i].ndim; d++) numel *= (size_t)in[i].shape[d];
    assert_int_equal(st[i].ndim, in[i].ndim);
    memcpy(st[i].data, in[i].data, numel * in[i].dtype.bits / 8);
  }
  return AOTRUN_OK;
}

static aotrun_status f_copy_outputs(void *ctx, AtenTensorHandle *src,
                                    DLTensor *out, size_t n,
                                    aotrun_error *err) {
  (void)ctx;
  (void)err;
  F.copy_outputs++;
  for (size_t i = 0; i < n; i++) {
    assert_non_null(src[i]);
    ((float *)out[i].data)[0] = 100.0f + (float)F.copy_outputs;
  }
  return AOTRUN_OK;
}

static void f_delete_outputs(void *ctx, AtenTensorHandle *h, size_t n) {
  (void)ctx;
  for (size_t i = 0; i < n; i++)
    if (h[i] != NULL) F.outputs_deleted++;
}

#define FAKE_POOL_BYTES 4096

/* The fake pool is its size: at least one 4096-byte chunk, or reserve. */
static aotrun_status f_pool_create(void *ctx, size_t reserve, void **pool,
                                   aotrun_error *err) {
  (void)ctx;
  aotrun_status st = fail_if(FAIL_POOL_CREATE, err, "pool create");
  if (++F.pool_create_calls == F.fail_pool_create_at)
    st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "fake pool create %d failed", F.pool_create_calls);
  if (st != AOTRUN_OK) return st;
  size_t *bytes = malloc(sizeof *bytes);
  assert_non_null(bytes);
  *bytes = reserve > FAKE_POOL_BYTES ? reserve : FAKE_POOL_BYTES;
  *pool = bytes;
  F.last_reserve = reserve;
  F.pools_made++;
  return AOTRUN_OK;
}

static void f_pool_install(void *ctx, void *pool) {
  (void)ctx;
  F.installed_pool = pool;
}

static void f_pool_destroy(void *ctx, void *pool) {
  (void)ctx;
  assert_null(F.installed_pool); /* never destroyed while installed */
  F.pools_destroyed++;
  free(pool);
}

static size_t f_pool_bytes(void *ctx, void *pool) {
  (void)ctx;
  assert_non_null(pool);
  return *(size_t *)pool;
}

static void f_log(void *ctx, int32_t level, const char *message) {
  (void)ctx;
  if (F.nlogs >= MAX_LOGS) return;
  F.log_level[F.nlogs] = level;
  snprintf(F.log_text[F.nlogs], sizeof F.log_text[0], "%s", message);
  F.nlogs++;
}

static const aotrun_graph_ops kOps = {
    .ctx = NULL,
    .run_direct = f_run_direct,
    .run_capture = f_run_capture,
    .begin_capture = f_begin,
    .end_capture = f_end,
    .is_capturing = f_is_capturing,
    .instantiate = f_instantiate,
    .launch = f_launch,
    .synchronize = f_sync,
    .destroy_graph = f_destroy_graph,
    .destroy_exec = f_destroy_exec,
    .clear_error = f_clear_error,
    .static_alloc = f_static_alloc,
    .static_free = f_static_free,
    .copy_inputs = f_copy_inputs,
    .copy_outputs = f_copy_outputs,
    .delete_outputs = f_delete_outputs,
    .pool_create = f_pool_create,
    .pool_install = f_pool_install,
    .pool_destroy = f_pool_destroy,
    .pool_bytes = f_pool_bytes,
    .log = f_log,
};

/* ---- helpers ---- */

typedef struct io {
  float in_data[2][96];
  float out_data[96];
  int64_t in_shape[2][4];
  int64_t out_shape[2];
  DLTensor in[2];
  DLTensor out[1];
} io;

static const DLDataType kF32 = {kDLFloat, 32, 1};

/* Two inputs: (2,3,4,4) and (5); one output (3). */
static void make_io(io *t) {
  memset(t, 0, sizeof *t);
  int64_t s0[4] = {2, 3, 4, 4};
  memcpy(t->in_shape[0], s0, sizeof s0);
  t->in_shape[1][0] = 5;
  for (int i = 0; i < 96; i++) t->in_data[0][i] = (float)i;
  t->in[0] = (DLTensor){t->in_data[0], {kDLCPU, 0}, 4, kF32, t->in_shape[0],
                        NULL, 0};
  t->in[1] = (DLTensor){t->in_data[1], {kDLCPU, 0}, 1, kF32, t->in_shape[1],
                        NULL, 0};
  t->out_shape[0] = 3;
  t->out[0] = (DLTensor){t->out_data, {kDLCPU, 0}, 1, kF32, t->out_shape,
                         NULL, 0};
}

static aotrun_graph_state *make_state(void) {
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_create(&kOps, "forward",
                                             (DLDevice){kDLCUDA, 0}, 2, 1,
                                             &s, &err),
                   AOTRUN_OK);
  return s;
}

static aotrun_status call(aotrun_graph_state *s, io *t, aotrun_error *err) {
  aotrun_error_clear(err);
  return aotrun_graph_state_execute(s, t->in, 2, t->out, 1, err);
}

static int count_logs(int32_t level, const char *needle) {
  int n = 0;
  for (int i = 0; i < F.nlogs; i++)
    if (F.log_level[i] == level && strstr(F.log_text[i], needle) != NULL) n++;
  return n;
}

static int count_level(int32_t level) {
  int n = 0;
  for (int i = 0; i < F.nlogs; i++) n += F.log_level[i] == level;
  return n;
}

/* Everything a release must have undone. */
static void assert_all_released(void) {
  assert_int_equal(F.capturing, 0);
  assert_null(F.installed_pool);
  assert_int_equal(F.pools_destroyed, F.pools_made);
  assert_int_equal(F.static_frees, F.static_allocs);
  assert_int_equal(F.graphs_destroyed, F.graphs_made);
  assert_int_equal(F.execs_destroyed, F.execs_made);
  assert_int_equal(F.outputs_deleted, F.outputs_made);
}

static int reset(void **state) {
  (void)state;
  memset(&F, 0, sizeof F);
  return 0;
}

/* Runs the 3 warmup calls and the capture call; asserts the capture. */
static void warm_and_capture(aotrun_graph_state *s, io *t) {
  aotrun_error err;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(aotrun_graph_state_warmup_left(s), 3 - i);
    assert_int_equal(call(s, t, &err), AOTRUN_OK);
  }
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_WARMUP);
  assert_int_equal(aotrun_graph_state_warmup_left(s), 0);
  assert_int_equal(call(s, t, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
}

/* A state with graphs on and its 3 warmup calls made: the next call
 * captures. */
static aotrun_graph_state *warmed_state(io *t) {
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  make_io(t);
  aotrun_error err;
  for (int i = 0; i < 3; i++) assert_int_equal(call(s, t, &err), AOTRUN_OK);
  return s;
}

/* Enabled, warmed up and captured: the next call replays. */
static aotrun_graph_state *captured_state(io *t) {
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  make_io(t);
  warm_and_capture(s, t);
  return s;
}

/* ---- tests ---- */

static void test_disabled_runs_directly(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  io t;
  make_io(&t);
  aotrun_error err;
  for (int i = 0; i < 6; i++) assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 6);
  assert_int_equal(F.begin, 0);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(aotrun_graph_state_num_releases(s), 0);
  aotrun_graph_state_destroy(s);
  assert_int_equal(F.pools_made, 0);
}

static void test_warmup_capture_on_fourth_then_replay(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_WARMUP);
  io t;
  make_io(&t);
  aotrun_error err;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(call(s, &t, &err), AOTRUN_OK);
    assert_int_equal(F.begin, 0);
    assert_float_equal(t.out_data[0], 1.0f, 0); /* the direct run's value */
  }
  assert_int_equal(F.run_direct, 3);
  /* Call 4: capture, instantiate, first launch, outputs from the graph. */
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 3);
  assert_int_equal(F.static_allocs, 2);
  assert_int_equal(F.copy_inputs, 1);
  assert_int_equal(F.pools_made, 1);
  assert_int_equal(F.begin, 1);
  assert_int_equal(F.run_capture, 1);
  assert_true(F.pool_installed_in_capture);
  assert_null(F.installed_pool); /* uninstalled after the model ran */
  assert_int_equal(F.end, 1);
  assert_int_equal(F.instantiate, 1);
  assert_int_equal(F.launch, 1);
  assert_int_equal(F.sync, 1);
  assert_int_equal(F.copy_outputs, 1);
  assert_float_equal(t.out_data[0], 101.0f, 0);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  assert_true(aotrun_graph_state_has_capture(s));
  /* Calls 5, 6: replay only. */
  for (int i = 0; i < 2; i++) assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 3);
  assert_int_equal(F.run_capture, 1);
  assert_int_equal(F.begin, 1);
  assert_int_equal(F.launch, 3);
  assert_int_equal(F.copy_inputs, 3);
  assert_int_equal(F.copy_outputs, 3);
  assert_float_equal(t.out_data[0], 103.0f, 0);
  assert_int_equal(aotrun_graph_state_num_replays(s), 2);
  assert_int_equal(aotrun_graph_state_num_releases(s), 0);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  /* destroy releases the graph exactly once. */
  aotrun_graph_state_destroy(s);
  assert_int_equal(F.pools_destroyed, 1);
  assert_all_released();
}

static void test_failed_warmup_call_does_not_count(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  io t;
  make_io(&t);
  aotrun_error err;
  F.fail_direct_from_call = 2;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INTERNAL);
  assert_string_equal(err.message, "fake model failed");
  /* Returned, and logged at Debug only: the host prints it once. */
  assert_int_equal(count_logs(AOTRUN_LOG_DEBUG, "fake model failed"), 1);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  assert_int_equal(aotrun_graph_state_warmup_left(s), 2);
  aotrun_graph_state_destroy(s);
}

static void test_replay_refuses_other_size(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = captured_state(&t);
  int copies = F.copy_inputs, launches = F.launch;
  /* Same byte count, other shape: (2,3,4,4) -> (2,4,3,4). */
  t.in_shape[0][1] = 4;
  t.in_shape[0][2] = 3;
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "input 0 has size 4 in dim 1, captured with 3");
  assert_int_equal(F.copy_inputs, copies); /* refused before any copy */
  assert_int_equal(F.launch, launches);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  /* A later input differs: still no copy of input 0 is queued. */
  t.in_shape[0][1] = 3;
  t.in_shape[0][2] = 4;
  t.in_shape[1][0] = 6;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "input 1 has size 6 in dim 0, captured with 5");
  assert_int_equal(F.copy_inputs, copies);
  /* The right shape replays again. */
  t.in_shape[1][0] = 5;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.launch, launches + 1);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_replay_refuses_other_rank(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = captured_state(&t);
  t.in[0].ndim = 3;
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message, "input 0 has 3 dims, captured with 4");
  aotrun_graph_state_destroy(s);
}

static void test_replay_refuses_other_dtype(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = captured_state(&t);
  t.in[1].dtype = (DLDataType){kDLFloat, 16, 1};
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 1 has dtype float16, captured with float32");
  aotrun_graph_state_destroy(s);
}

/* One failure edge before the graph ran: release once, retry once without
 * a graph (its result returned), graphs off, Info log, no Error log. */
static void check_failure_edge(enum fail_point p, const char *fragment) {
  memset(&F, 0, sizeof F);
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  aotrun_error err;
  F.fail = p;
  t.out_data[0] = 0;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 4); /* the retry ran exactly once */
  assert_float_equal(t.out_data[0], 1.0f, 0); /* and its result came back */
  assert_int_equal(F.copy_outputs, 0);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_all_released();
  assert_true(F.clear_error >= 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_false(aotrun_graph_state_has_capture(s));
  assert_int_equal(count_logs(AOTRUN_LOG_INFO, "CUDA graph capture failed"),
                   1);
  assert_int_equal(count_logs(AOTRUN_LOG_INFO, fragment), 1);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  assert_non_null(strstr(aotrun_graph_state_disabled_reason(s), fragment));
  /* Graphs stay off: later calls run directly and never capture. */
  F.fail = FAIL_NONE;
  int begins = F.begin;
  for (int i = 0; i < 5; i++) assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 9);
  assert_int_equal(F.begin, begins);
  /* Re-enabling does not undo a failed capture... */
  aotrun_graph_state_set_enabled(s, 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_failure_edges_retry_without_graph(void **state) {
  (void)state;
  check_failure_edge(FAIL_STATIC_ALLOC, "static buffer of input 0: fake cudaMalloc failed");
  check_failure_edge(FAIL_COPY_INPUTS, "fake cudaMemcpyAsync failed");
  check_failure_edge(FAIL_POOL_CREATE, "fake pool create failed");
  check_failure_edge(FAIL_BEGIN, "fake cudaStreamBeginCapture failed");
  check_failure_edge(FAIL_RUN_CAPTURE,
                     "the model failed inside the capture: "
                     "aoti_torch_item_float32 cannot run inside a CUDA graph "
                     "capture");
  check_failure_edge(FAIL_END, "end capture: cudaStreamEndCapture");
  check_failure_edge(FAIL_INSTANTIATE, "instantiate: fake cudaGraphInstantiate failed");
  check_failure_edge(FAIL_LAUNCH, "first launch: fake cudaGraphLaunch failed");
}

static void test_shim_refusal_ends_the_capture(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  aotrun_error err;
  F.fail = FAIL_RUN_CAPTURE;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  /* release() ended the open capture and destroyed what it returned. */
  assert_int_equal(F.end, 1);
  assert_int_equal(F.graphs_destroyed, 1);
  assert_int_equal(F.instantiate, 0);
  assert_int_equal(F.capturing, 0);
  assert_int_equal(F.pools_destroyed, 1);
  aotrun_graph_state_destroy(s);
}

static void test_retry_failure_is_an_error(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  aotrun_error err;
  F.fail = FAIL_INSTANTIATE;
  F.fail_direct_from_call = 4;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INTERNAL);
  assert_string_equal(err.message, "fake model failed");
  assert_int_equal(F.run_direct, 4);
  assert_int_equal(count_logs(AOTRUN_LOG_INFO, "CUDA graph capture failed"), 1);
  assert_int_equal(count_logs(AOTRUN_LOG_DEBUG, "method forward failed: fake model failed"), 1);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_failure_after_launch_started_is_not_retried(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  aotrun_error err;
  F.fail = FAIL_SYNC;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INTERNAL);
  assert_string_equal(err.message,
                      "method forward: first launch of the CUDA graph "
                      "failed: fake cudaStreamSynchronize (illegal address) "
                      "failed (not retried; graphs stay off for this "
                      "method)");
  assert_int_equal(F.launch, 1);
  assert_int_equal(F.run_direct, 3); /* no retry: the graph ran */
  assert_int_equal(F.copy_outputs, 0);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_all_released();
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0); /* returned only */
  F.fail = FAIL_NONE;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 4);
  aotrun_graph_state_destroy(s);
}

static void test_forbidden_never_captures(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_forbid(s, "it keeps constant 'pred' in host memory");
  /* Nothing to say until graphs are asked for; then once, however often. */
  assert_int_equal(count_logs(AOTRUN_LOG_INFO, "runs without a CUDA graph"),
                   0);
  aotrun_graph_state_set_enabled(s, 1);
  aotrun_graph_state_set_enabled(s, 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(
      count_logs(AOTRUN_LOG_INFO,
                 "method forward runs without a CUDA graph: it keeps "
                 "constant 'pred' in host memory"),
      1);
  io t;
  make_io(&t);
  aotrun_error err;
  for (int i = 0; i < 6; i++) assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 6);
  assert_int_equal(F.begin, 0);
  assert_int_equal(F.static_allocs, 0);
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_recapture(s, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "recapture: method forward runs without a CUDA graph: "
                      "it keeps constant 'pred' in host memory");
  aotrun_graph_state_destroy(s);
}

static void test_forbid_after_enable_logs_once(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  aotrun_graph_state_forbid(s, "it keeps constant 'pred' in host memory");
  aotrun_graph_state_set_enabled(s, 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(
      count_logs(AOTRUN_LOG_INFO,
                 "method forward runs without a CUDA graph: it keeps "
                 "constant 'pred' in host memory"),
      1);
  aotrun_graph_state_destroy(s);
}

static void test_recapture_clears_shapes_and_captures_again(void **state) {
  (void)state;
  aotrun_graph_state *s = make_state();
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_recapture(s, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "recapture: CUDA graphs are not enabled for method "
                      "forward (enable_cuda_graph_for_method)");
  aotrun_graph_state_set_enabled(s, 1);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  assert_int_equal(aotrun_graph_state_recapture(s, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_false(aotrun_graph_state_has_capture(s));
  assert_all_released();
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_WARMUP);
  assert_int_equal(aotrun_graph_state_warmup_left(s), 1);
  /* A grown input: one warmup call, then a capture with the new shape. */
  t.in_shape[1][0] = 7;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 4);
  assert_int_equal(F.begin, 1);
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.begin, 2);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  assert_int_equal(call(s, &t, &err), AOTRUN_OK); /* replays size 7 */
  t.in_shape[1][0] = 5;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 1 has size 5 in dim 0, captured with 7");
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

/* The model took more from the graph's pool than it held before the
 * capture (a cudaMalloc while recording): the capture is recorded again
 * over a pool that holds it all first. Each capture starts from one chunk
 * (a smaller shape's graph holds no more than it needs). */
static void test_pool_grown_in_capture_records_again(void **state) {
  (void)state;
  F.capture_need = 3 * FAKE_POOL_BYTES;
  aotrun_graph_state *s = make_state();
  aotrun_graph_state_set_enabled(s, 1);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  assert_int_equal(F.begin, 2);
  assert_int_equal(F.run_capture, 2);
  assert_int_equal(F.end, 2);
  assert_int_equal(F.pools_made, 2);
  assert_int_equal(F.pools_destroyed, 1); /* the first recording's */
  assert_int_equal(F.graphs_destroyed, 1);
  assert_int_equal(F.outputs_deleted, 1);
  assert_int_equal(F.instantiate, 1);
  assert_int_equal(F.launch, 1);
  assert_int_equal(F.last_reserve, 3 * FAKE_POOL_BYTES);
  assert_int_equal(aotrun_graph_state_num_rerecords(s), 1);
  assert_int_equal(
      count_logs(AOTRUN_LOG_DEBUG,
                 "method forward: the graph's pool took device memory "
                 "inside the capture (4096 bytes reserved, 12288 needed); "
                 "recorded again with 12288 reserved first"),
      1);
  assert_int_equal(count_level(AOTRUN_LOG_INFO), 0);
  assert_float_equal(t.out_data[0], 101.0f, 0);
  /* A recapture of a model that needs one chunk: recorded once, its pool
   * one chunk. */
  F.capture_need = 0;
  aotrun_error err;
  assert_int_equal(aotrun_graph_state_recapture(s, &err), AOTRUN_OK);
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_capture, 3);
  assert_int_equal(F.last_reserve, 0);
  assert_int_equal(aotrun_graph_state_graph_bytes(s), 384 + 20 + 4096);
  assert_int_equal(aotrun_graph_state_num_rerecords(s), 1);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

/* A model whose allocations differ between recordings: the second
 * recording grows its pool too; it is kept, and said at info level. */
static void test_pool_grown_twice_is_kept_and_said(void **state) {
  (void)state;
  F.capture_need = 2 * FAKE_POOL_BYTES;
  F.need_step = 1024;
  io t;
  aotrun_graph_state *s = captured_state(&t);
  assert_int_equal(F.run_capture, 2);
  assert_int_equal(
      count_logs(AOTRUN_LOG_INFO,
                 "method forward: the graph's pool grew inside the second "
                 "capture too (9216 bytes, 8192 the first time): the model "
                 "allocates differently each capture"),
      1);
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK); /* replays */
  assert_int_equal(F.launch, 2);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

/* The second recording's pool cannot be made: the capture fails as any
 * pool failure does (graphs off, the call runs without one). */
static void test_pool_failure_on_second_recording(void **state) {
  (void)state;
  F.capture_need = 2 * FAKE_POOL_BYTES;
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  F.fail_pool_create_at = 2;
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_capture, 1);
  assert_int_equal(F.pools_made, 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(F.run_direct, 4); /* the same call, without a graph */
  assert_all_released();
  aotrun_graph_state_destroy(s);
}

static void test_recapture_after_failed_capture_rearms(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = warmed_state(&t);
  aotrun_error err;
  F.fail = FAIL_LAUNCH;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  F.fail = FAIL_NONE;
  assert_int_equal(aotrun_graph_state_recapture(s, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1); /* nothing left */
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  assert_string_equal(aotrun_graph_state_disabled_reason(s), "");
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_disable_releases(void **state) {
  (void)state;
  io t;
  aotrun_graph_state *s = captured_state(&t);
  aotrun_graph_state_set_enabled(s, 0);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_all_released();
  aotrun_error err;
  assert_int_equal(call(s, &t, &err), AOTRUN_OK);
  assert_int_equal(F.run_direct, 4);
  /* Enabling again starts a fresh warmup. */
  aotrun_graph_state_set_enabled(s, 1);
  assert_int_equal(aotrun_graph_state_warmup_left(s), 3);
  aotrun_graph_state_destroy(s);
  assert_int_equal(F.pools_destroyed, 1);
}

static void test_bad_arguments(void **state) {
  (void)state;
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_graph_ops ops = kOps;
  ops.launch = NULL;
  assert_int_equal(aotrun_graph_state_create(&ops, "forward",
                                             (DLDevice){kDLCUDA, 0}, 1, 1,
                                             &s, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(s);
  assert_string_equal(err.message,
                      "graph state for method forward: an ops member is NULL");
  s = make_state();
  io t;
  make_io(&t);
  assert_int_equal(aotrun_graph_state_execute(s, t.in, 1, t.out, 1, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "method forward takes 2 inputs and 1 outputs, got 1 "
                      "and 1");
  assert_string_equal(aotrun_graph_phase_name(AOTRUN_GRAPH_REPLAY), "Replay");
  aotrun_graph_state_destroy(s);
  aotrun_graph_state_destroy(NULL);
}

/* ---- a graph per shape (cuda_graph_shapes = K > 0) ---- */

/* Input 1's size picks the shape: (2,3,4,4) and (n). */
static aotrun_status call_n(aotrun_graph_state *s, io *t, int64_t n) {
  aotrun_error err;
  t->in_shape[1][0] = n;
  return call(s, t, &err);
}

static aotrun_graph_state *make_shapes_state(int64_t k) {
  aotrun_graph_state *s = make_state();
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_set_max_graphs(s, k, &err), AOTRUN_OK);
  aotrun_graph_state_set_enabled(s, 1);
  return s;
}

/* A new shape: one call without a graph, then its capture. */
static void add_shape(aotrun_graph_state *s, io *t, int64_t n) {
  int direct = F.run_direct, begins = F.begin;
  assert_int_equal(call_n(s, t, n), AOTRUN_OK);
  assert_int_equal(F.run_direct, direct + 1);
  assert_int_equal(F.begin, begins);
  assert_int_equal(call_n(s, t, n), AOTRUN_OK);
  assert_int_equal(F.begin, begins + 1);
  assert_int_equal(F.run_direct, direct + 1);
}

static void test_shapes_back_and_forth(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(3);
  io t;
  make_io(&t);
  warm_and_capture(s, &t); /* shape n = 5 */
  add_shape(s, &t, 6);
  add_shape(s, &t, 7);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 3);
  int launches = F.launch;
  const int64_t cycle[] = {5, 6, 7, 6, 5, 5, 7, 6};
  for (size_t i = 0; i < sizeof cycle / sizeof cycle[0]; i++) {
    t.out_data[0] = 0;
    assert_int_equal(call_n(s, &t, cycle[i]), AOTRUN_OK);
    assert_true(t.out_data[0] > 100.0f); /* from the graph's outputs */
  }
  assert_int_equal(F.begin, 3); /* no capture while cycling */
  assert_int_equal(F.run_direct, 5); /* 3 warmup + one per new shape */
  assert_int_equal(F.launch, launches + 8);
  assert_int_equal(aotrun_graph_state_num_evictions(s), 0);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  /* A new shape seen between others is still remembered. */
  assert_int_equal(call_n(s, &t, 8), AOTRUN_OK);
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK);
  assert_int_equal(call_n(s, &t, 8), AOTRUN_OK);
  assert_int_equal(F.begin, 4);
  assert_int_equal(aotrun_graph_state_num_evictions(s), 1);
  assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_eviction_order_frees_memory(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(2);
  io t;
  make_io(&t);
  warm_and_capture(s, &t); /* A: n = 5 */
  add_shape(s, &t, 6);     /* B */
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK); /* A used: B is the LRU */
  int frees = F.static_frees, pools = F.pools_destroyed;
  int execs = F.execs_destroyed, outs = F.outputs_deleted;
  add_shape(s, &t, 7); /* C evicts B, before C's capture allocates */
  assert_int_equal(aotrun_graph_state_num_evictions(s), 1);
  assert_int_equal(F.static_frees, frees + 2);
  assert_int_equal(F.pools_destroyed, pools + 1);
  assert_int_equal(F.execs_destroyed, execs + 1);
  assert_int_equal(F.outputs_deleted, outs + 1);
  assert_int_equal(F.pools_made - F.pools_destroyed, 2);
  assert_int_equal(F.static_allocs - F.static_frees, 4);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 2);
  /* A and C replay; B is new again (A is now the LRU and goes next). */
  int begins = F.begin;
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK);
  assert_int_equal(call_n(s, &t, 7), AOTRUN_OK);
  assert_int_equal(F.begin, begins);
  add_shape(s, &t, 6);
  assert_int_equal(call_n(s, &t, 7), AOTRUN_OK); /* C kept */
  assert_int_equal(F.begin, begins + 1);
  int direct = F.run_direct;
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK); /* A was evicted */
  assert_int_equal(F.run_direct, direct + 1);
  assert_int_equal(aotrun_graph_state_num_evictions(s), 2);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_memory_report(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(2);
  assert_string_equal(aotrun_graph_state_memory_report(s), "0 graphs, 0 bytes");
  io t;
  make_io(&t);
  warm_and_capture(s, &t); /* (2,3,4,4) (5): 384 + 20 + pool */
  assert_string_equal(aotrun_graph_state_memory_report(s),
                      "1 graph, 4500 bytes: [2,3,4,4] [5] 4500");
  add_shape(s, &t, 6);
  assert_int_equal(aotrun_graph_state_graph_bytes(s), 4500 + 4504);
  assert_string_equal(aotrun_graph_state_memory_report(s),
                      "2 graphs, 9004 bytes: [2,3,4,4] [6] 4504; [2,3,4,4] "
                      "[5] 4500");
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK); /* most recent first */
  assert_string_equal(aotrun_graph_state_memory_report(s),
                      "2 graphs, 9004 bytes: [2,3,4,4] [5] 4500; [2,3,4,4] "
                      "[6] 4504");
  aotrun_graph_state_destroy(s);
}

/* A capture failure of a second shape releases every graph (graphs off),
 * and the call runs once without a graph. */
static void check_second_shape_failure(enum fail_point p) {
  memset(&F, 0, sizeof F);
  aotrun_graph_state *s = make_shapes_state(2);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK); /* seen once */
  F.fail = p;
  int direct = F.run_direct;
  aotrun_error err;
  t.in_shape[1][0] = 6;
  aotrun_status st = call(s, &t, &err);
  if (p == FAIL_SYNC) {
    assert_int_equal(st, AOTRUN_ERR_INTERNAL);
    assert_int_equal(F.run_direct, direct); /* the graph ran: no retry */
    assert_int_equal(count_level(AOTRUN_LOG_ERROR), 0); /* returned only */
    assert_int_equal(st, AOTRUN_ERR_INTERNAL);
  } else {
    assert_int_equal(st, AOTRUN_OK);
    assert_int_equal(F.run_direct, direct + 1);
    assert_int_equal(count_logs(AOTRUN_LOG_INFO, "capture failed"), 1);
  }
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_DISABLED);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 0);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_all_released(); /* the first shape's graph too */
  F.fail = FAIL_NONE;
  int begins = F.begin;
  assert_int_equal(call_n(s, &t, 5), AOTRUN_OK); /* runs directly */
  assert_int_equal(F.begin, begins);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_failure_mid_capture_of_second_shape(void **state) {
  (void)state;
  check_second_shape_failure(FAIL_STATIC_ALLOC);
  check_second_shape_failure(FAIL_RUN_CAPTURE);
  check_second_shape_failure(FAIL_INSTANTIATE);
  check_second_shape_failure(FAIL_LAUNCH);
  check_second_shape_failure(FAIL_SYNC);
}

static void test_failed_new_shape_call_not_remembered(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(2);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  F.fail_direct_from_call = F.run_direct + 1;
  assert_int_equal(call_n(s, &t, 6), AOTRUN_ERR_INTERNAL);
  F.fail_direct_from_call = 0;
  int begins = F.begin;
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK); /* its warmup call */
  assert_int_equal(F.begin, begins);
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK);
  assert_int_equal(F.begin, begins + 1);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_recapture_with_several_graphs(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(3);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  add_shape(s, &t, 6);
  assert_int_equal(call_n(s, &t, 7), AOTRUN_OK); /* 7 seen once */
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_recapture(s, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 0);
  assert_int_equal(aotrun_graph_state_num_releases(s), 1);
  assert_all_released();
  assert_int_equal(aotrun_graph_state_warmup_left(s), 1);
  /* One warmup call, then a capture with the call's shape. */
  int begins = F.begin;
  assert_int_equal(call_n(s, &t, 7), AOTRUN_OK);
  assert_int_equal(call_n(s, &t, 7), AOTRUN_OK);
  assert_int_equal(F.begin, begins + 1);
  assert_int_equal(aotrun_graph_state_phase(s), AOTRUN_GRAPH_REPLAY);
  /* Shapes seen before the recapture were forgotten. */
  add_shape(s, &t, 6);
  add_shape(s, &t, 5);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 3);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

static void test_max_graphs_option(void **state) {
  (void)state;
  aotrun_graph_state *s = make_shapes_state(3);
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_set_max_graphs(s, 65, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'cuda_graph_shapes' is 65, must be 0 (one "
                      "graph, other shapes refused) to 64");
  assert_int_equal(aotrun_graph_state_set_max_graphs(s, -1, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  io t;
  make_io(&t);
  warm_and_capture(s, &t);
  add_shape(s, &t, 6);
  add_shape(s, &t, 7);
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK); /* 6 is the MRU */
  /* Lowering K evicts the least recently used graphs. */
  assert_int_equal(aotrun_graph_state_set_max_graphs(s, 1, &err), AOTRUN_OK);
  assert_int_equal(aotrun_graph_state_num_graphs(s), 1);
  assert_int_equal(aotrun_graph_state_num_evictions(s), 2);
  int begins = F.begin, launches = F.launch;
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK);
  assert_int_equal(F.launch, launches + 1);
  /* K = 0: the one graph stays and other shapes are refused again. */
  assert_int_equal(aotrun_graph_state_set_max_graphs(s, 0, &err), AOTRUN_OK);
  assert_int_equal(call_n(s, &t, 6), AOTRUN_OK);
  t.in_shape[1][0] = 5;
  assert_int_equal(call(s, &t, &err), AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "input 1 has size 5 in dim 0, captured with 6");
  assert_int_equal(F.begin, begins);
  aotrun_graph_state_destroy(s);
  assert_all_released();
}

/* One life of a graph state with two cached shapes: create, warm-up,
 * capture, replay, a second shape and its capture, replays of both,
 * destroy. Returns how many calls failed; each failure must say it ran
 * out of memory. */
static int oom_life(void) {
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_graph_state_create(
      &kOps, "forward", (DLDevice){kDLCUDA, 0}, 2, 1, &s, &err);
  if (st != AOTRUN_OK) {
    assert_int_equal(st, AOTRUN_ERR_OUT_OF_MEMORY);
    assert_null(s);
    return 1;
  }
  int failed = 0;
  if (aotrun_graph_state_set_max_graphs(s, 2, &err) != AOTRUN_OK) failed++;
  aotrun_graph_state_set_enabled(s, 1);
  io t;
  make_io(&t);
  const int64_t shapes[] = {5, 5, 5, 5, 5, 6, 6, 6, 5, 6, 5};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    t.in_shape[1][0] = shapes[i];
    st = call(s, &t, &err);
    if (st != AOTRUN_OK) {
      failed++;
      if (strstr(err.message, "out of memory") == NULL)
        fail_msg("call %zu failed without saying why: %s", i, err.message);
    }
  }
  (void)aotrun_graph_state_memory_report(s);
  aotrun_graph_state_destroy(s);
  return failed;
}

/* Every calloc of a graph state's life fails once, in turn: no crash, no
 * leak (ASan in CI), every failed call says "out of memory", and
 * everything the state made (graphs, execs, pools, static buffers,
 * outputs) is released by destroy. */
static void test_out_of_memory_at_every_calloc(void **state) {
  (void)state;
  calloc_calls = 0;
  calloc_countdown = 0;
  assert_int_equal(oom_life(), 0);
  long total = calloc_calls;
  assert_true(total > 0);
  assert_all_released();
  int failures = 0;
  for (long n = 1; n <= total; n++) {
    memset(&F, 0, sizeof F);
    calloc_countdown = n;
    failures += oom_life();
    if (calloc_countdown != 0)
      fail_msg("calloc %ld of %ld was never reached", n, total);
    assert_all_released();
  }
  calloc_countdown = 0;
  print_message("%ld callocs in a life; %d calls failed over the sweep\n",
                total, failures);
  assert_true(failures > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_disabled_runs_directly, reset),
      cmocka_unit_test_setup(test_out_of_memory_at_every_calloc, reset),
      cmocka_unit_test_setup(test_warmup_capture_on_fourth_then_replay, reset),
      cmocka_unit_test_setup(test_failed_warmup_call_does_not_count, reset),
      cmocka_unit_test_setup(test_replay_refuses_other_size, reset),
      cmocka_unit_test_setup(test_replay_refuses_other_rank, reset),
      cmocka_unit_test_setup(test_replay_refuses_other_dtype, reset),
      cmocka_unit_test_setup(test_failure_edges_retry_without_graph, reset),
      cmocka_unit_test_setup(test_shim_refusal_ends_the_capture, reset),
      cmocka_unit_test_setup(test_retry_failure_is_an_error, reset),
      cmocka_unit_test_setup(test_failure_after_launch_started_is_not_retried,
                             reset),
      cmocka_unit_test_setup(test_forbidden_never_captures, reset),
      cmocka_unit_test_setup(test_forbid_after_enable_logs_once, reset),
      cmocka_unit_test_setup(test_recapture_clears_shapes_and_captures_again,
                             reset),
      cmocka_unit_test_setup(test_pool_grown_in_capture_records_again, reset),
      cmocka_unit_test_setup(test_pool_grown_twice_is_kept_and_said, reset),
      cmocka_unit_test_setup(test_pool_failure_on_second_recording, reset),
      cmocka_unit_test_setup(test_recapture_after_failed_capture_rearms, reset),
      cmocka_unit_test_setup(test_disable_releases, reset),
      cmocka_unit_test_setup(test_bad_arguments, reset),
      cmocka_unit_test_setup(test_shapes_back_and_forth, reset),
      cmocka_unit_test_setup(test_eviction_order_frees_memory, reset),
      cmocka_unit_test_setup(test_memory_report, reset),
      cmocka_unit_test_setup(test_failure_mid_capture_of_second_shape, reset),
      cmocka_unit_test_setup(test_failed_new_shape_call_not_remembered,
                             reset),
      cmocka_unit_test_setup(test_recapture_with_several_graphs, reset),
      cmocka_unit_test_setup(test_max_graphs_option, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
