/*
 * stream_check.c: aotrun_stream_check, the GPU test of the CUDA backend's
 * execute_ex (ABI 1.1, issues 16 and 17): caller streams, async calls,
 * synchronize, backend-allocated outputs, the too-small report and the
 * current device on return. Runs on the GPU machine against a PROGRAM
 * directory exported there by torch (testing/gpu/export_suite.py); exits
 * 77 (skip) with the reason when there is no GPU.
 *
 *   aotrun_stream_check PLUGIN.so PROGRAM_DIR MODE --input F.npy ...
 *                       --expected F.npy ... [--calls N]
 *   MODE streams  (a model with static output shapes, e.g. mlp) for
 *                 graphs off and on: --calls calls (default 10) alternating
 *                 two caller streams (non-blocking). Before each call the
 *                 device inputs and outputs are poisoned (NaN bytes), then
 *                 on the caller's stream 4 GiB of memsets (a delay) and
 *                 the input's upload are queued; execute_ex gets that
 *                 stream (odd calls AOTRUN_EXECUTE_ASYNC, every third of
 *                 those also synchronize(method)); the output's download
 *                 is queued on the same stream after the call, which is
 *                 then synchronised and compared with --expected. A model
 *                 that ignored the stream would read the poisoned inputs
 *                 or be read before it wrote. With graphs the last calls
 *                 must be replays (phase Replay), and output 0 is then
 *                 also taken as a backend-allocated output: its values
 *                 must survive the next replay (a copy, not the graph's
 *                 pool). Then one ASYNC call on a stream held by a host
 *                 function (cudaLaunchHostFunc waiting on a gate) must
 *                 return while the stream is still held, and its output
 *                 is right once the gate opens (issue 17: ASYNC returns
 *                 before the work ends). Also: pinned (kDLCUDAHost)
 *                 outputs with ASYNC, pageable (kDLCPU) outputs with
 *                 ASYNC refused, the
 *                 current device unchanged after every call (and, with 2
 *                 GPUs, a method on cuda:1 called from a thread on cuda:0,
 *                 success and failure).
 *         managed (a model with a data-dependent output, e.g. mask_index)
 *                 graphs off and on: output 0 backend-allocated on a caller
 *                 stream, async: shape and values equal --expected, device
 *                 memory, row-major strides; a 1-element output buffer
 *                 fails with AOTRUN_ERR_OUTPUT_TOO_SMALL and the expected
 *                 shape in needed_shape (execute 1.0: its old status,
 *                 AOTRUN_ERR_INVALID_ARGUMENT); one managed output is
 *                 deleted on another thread after the method is destroyed.
 * Prints "PASS: ..." / "FAIL: ..." lines; exit 0 pass, 1 fail, 2 usage,
 * 77 skip.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"

#define MAX_IO 16
#define EXIT_SKIP 77
#define DELAY_BYTES ((size_t)256 << 20)
#define DELAY_REPEAT 16

typedef struct check {
  const aotrun_backend_api *api;
  aotrun_program_dir *dir;
  char *manifest;
  size_t manifest_size;
  const char *mode;
  int calls;
  size_t ni, no;
  aotrun_npy in[MAX_IO], want[MAX_IO];
  const char *in_path[MAX_IO], *want_path[MAX_IO];
  int num_in, num_want;
  /* device and pinned copies */
  void *d_in[MAX_IO], *h_in[MAX_IO], *d_out[MAX_IO], *h_out[MAX_IO];
  DLTensor in_t[MAX_IO], out_t[MAX_IO];
  int64_t out_shape[MAX_IO][AOTRUN_MAX_DIMS];
  void *delay; /* DELAY_BYTES of device scratch */
  cudaStream_t streams[2];
} check;

static int g_failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  g_failures++;
}

#define CUDA_OK(call)                                               \
  do {                                                              \
    cudaError_t e_ = (call);                                        \
    if (e_ != cudaSuccess) {                                        \
      fail("%s: %s", #call, cudaGetErrorString(e_));                \
      return -1;                                                    \
    }                                                               \
  } while (0)

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf != NULL) buf[n] = '\0';
  *size = (size_t)n;
  return buf;
}

static int current_device(void) {
  int d = -1;
  (void)cudaGetDevice(&d);
  return d;
}

static aotrun_method *open_method(check *c, int graphs, const char *device) {
  aotrun_option opt = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, graphs ? "forward" : ""};
  c->api->set_option(NULL, &opt);
  aotrun_key_value spec[2] = {{"method", "forward"}, {"device", device}};
  aotrun_method *m = NULL;
  if (c->api->init(aotrun_program_dir_host_api(c->dir), c->manifest,
                   c->manifest_size, spec, 2, &m) != AOTRUN_OK) {
    fail("init on %s: %s", device, c->api->last_error(NULL));
    return NULL;
  }
  return m;
}

/* Inputs and expected outputs into pinned and device memory. */
static int prepare(check *c, aotrun_method *m) {
  c->api->get_num_io(m, AOTRUN_IO_INPUT, &c->ni);
  c->api->get_num_io(m, AOTRUN_IO_OUTPUT, &c->no);
  if ((size_t)c->num_in != c->ni || c->no > MAX_IO ||
      (size_t)c->num_want != c->no) {
    fail("method takes %zu inputs and %zu outputs; %d --input, %d "
         "--expected given",
         c->ni, c->no, c->num_in, c->num_want);
    return -1;
  }
  for (size_t i = 0; i < c->ni; i++) {
    if (aotrun_npy_read(c->in_path[i], &c->in[i]) != AOTRUN_OK) {
      fail("%s", aotrun_host_last_error());
      return -1;
    }
    size_t n = c->in[i].nbytes ? c->in[i].nbytes : 1;
    CUDA_OK(cudaMallocHost(&c->h_in[i], n));
    CUDA_OK(cudaMalloc(&c->d_in[i], n));
    memcpy(c->h_in[i], c->in[i].data, c->in[i].nbytes);
    c->in_t[i] = (DLTensor){c->d_in[i], {kDLCUDA, 0}, c->in[i].ndim,
                            c->in[i].dtype, c->in[i].shape, NULL, 0};
  }
  for (size_t i = 0; i < c->no; i++) {
    if (aotrun_npy_read(c->want_path[i], &c->want[i]) != AOTRUN_OK) {
      fail("%s", aotrun_host_last_error());
      return -1;
    }
    size_t n = c->want[i].nbytes ? c->want[i].nbytes : 1;
    CUDA_OK(cudaMallocHost(&c->h_out[i], n));
    CUDA_OK(cudaMalloc(&c->d_out[i], n));
  }
  CUDA_OK(cudaMalloc(&c->delay, DELAY_BYTES));
  for (int s = 0; s < 2; s++)
    CUDA_OK(cudaStreamCreateWithFlags(&c->streams[s], cudaStreamNonBlocking));
  return 0;
}

static void reset_outputs(check *c, int device_type) {
  for (size_t i = 0; i < c->no; i++) {
    for (int d = 0; d < c->want[i].ndim; d++)
      c->out_shape[i][d] = c->want[i].shape[d];
    void *data = device_type == kDLCUDA ? c->d_out[i] : c->h_out[i];
    c->out_t[i] = (DLTensor){data, {(DLDeviceType)device_type, 0},
                             c->want[i].ndim, c->want[i].dtype,
                             c->out_shape[i], NULL, 0};
  }
}

static int same_values(DLDataType t, const void *got, const void *want,
                       size_t nbytes) {
  if (t.code == kDLFloat && t.bits == 32) {
    const float *g = got, *w = want;
    for (size_t i = 0; i < nbytes / 4; i++)
      if (!(fabsf(g[i] - w[i]) <= 1e-4f + 1e-4f * fabsf(w[i]))) return 0;
    return 1;
  }
  return memcmp(got, want, nbytes) == 0;
}

/* Poison (sync), then on stream s: the delay and the input uploads. */
static int queue_inputs(check *c, cudaStream_t s) {
  for (size_t i = 0; i < c->ni; i++)
    CUDA_OK(cudaMemset(c->d_in[i], 0xFF, c->in[i].nbytes));
  for (size_t i = 0; i < c->no; i++) {
    CUDA_OK(cudaMemset(c->d_out[i], 0xFF, c->want[i].nbytes));
    memset(c->h_out[i], 0xFF, c->want[i].nbytes);
  }
  CUDA_OK(cudaDeviceSynchronize()); /* the test's own setup only */
  for (int k = 0; k < DELAY_REPEAT; k++)
    CUDA_OK(cudaMemsetAsync(c->delay, k, DELAY_BYTES, s));
  for (size_t i = 0; i < c->ni; i++)
    CUDA_OK(cudaMemcpyAsync(c->d_in[i], c->h_in[i], c->in[i].nbytes,
                            cudaMemcpyHostToDevice, s));
  return 0;
}

static aotrun_execute_args make_args(check *c, cudaStream_t s,
                                     uint32_t flags,
                                     DLManagedTensor **managed) {
  aotrun_execute_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.flags = flags;
  a.inputs = c->in_t;
  a.num_inputs = c->ni;
  a.outputs = c->out_t;
  a.num_outputs = c->no;
  a.stream = s;
  a.managed_outputs = managed;
  return a;
}

static const char *phase(check *c, aotrun_method *m) {
  aotrun_option o;
  if (c->api->get_option(m, "cuda_graph_phase", &o) != AOTRUN_OK) return "?";
  return o.string_value;
}

/* Copies a managed output to the host on s (after the call) and compares. */
static int check_managed(check *c, const char *what, DLManagedTensor *mt,
                         size_t i, cudaStream_t s, void *host) {
  const DLTensor *t = &mt->dl_tensor;
  const aotrun_npy *w = &c->want[i];
  if (t->device.device_type != kDLCUDA || t->ndim != w->ndim ||
      !aotrun_strides_are_row_major(t->ndim, t->shape, t->strides)) {
    fail("%s: managed output %zu: device %d, %d dims (expected %d), "
         "row-major %d",
         what, i, (int)t->device.device_type, (int)t->ndim, (int)w->ndim,
         aotrun_strides_are_row_major(t->ndim, t->shape, t->strides));
    return -1;
  }
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] != w->shape[d]) {
      fail("%s: managed output %zu has size %lld in dim %d, expected %lld",
           what, i, (long long)t->shape[d], d, (long long)w->shape[d]);
      return -1;
    }
  if (w->nbytes > 0) {
    CUDA_OK(cudaMemcpyAsync(host, (char *)t->data + t->byte_offset,
                            w->nbytes, cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    if (!same_values(w->dtype, host, w->data, w->nbytes)) {
      fail("%s: managed output %zu differs from %s", what, i,
           c->want_path[i]);
      return -1;
    }
  }
  return 0;
}

/* ---- mode streams ---- */

/* Downloads the device outputs on s (unless they are pinned host memory
 * the call wrote itself), waits for s and compares with --expected. */
static int check_outputs(check *c, const char *what, cudaStream_t s,
                         int pinned) {
  for (size_t i = 0; i < c->no && !pinned; i++)
    CUDA_OK(cudaMemcpyAsync(c->h_out[i], c->d_out[i], c->want[i].nbytes,
                            cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaStreamSynchronize(s));
  for (size_t i = 0; i < c->no; i++)
    if (!same_values(c->want[i].dtype, c->h_out[i], c->want[i].data,
                     c->want[i].nbytes))
      fail("%s: output %zu differs from %s", what, i, c->want_path[i]);
  return 0;
}

static int one_stream_call(check *c, aotrun_method *m, int graphs, int call) {
  cudaStream_t s = c->streams[call % 2];
  int async = call % 2 == 1;
  int pinned = async && call % 4 == 3; /* kDLCUDAHost outputs */
  char what[96];
  snprintf(what, sizeof what, "graphs %s call %d (stream %d%s%s)",
           graphs ? "on" : "off", call, call % 2, async ? ", async" : "",
           pinned ? ", pinned outputs" : "");
  reset_outputs(c, pinned ? kDLCUDAHost : kDLCUDA);
  if (queue_inputs(c, s) != 0) return -1;
  int device = current_device();
  aotrun_execute_args a =
      make_args(c, s, async ? AOTRUN_EXECUTE_ASYNC : 0, NULL);
  aotrun_status st = c->api->execute_ex(m, &a);
  if (current_device() != device)
    fail("%s: current device %d after execute_ex, %d before", what,
         current_device(), device);
  if (st != AOTRUN_OK) {
    fail("%s: %s", what, c->api->last_error(m));
    return -1;
  }
  if (async && call % 3 == 0 && c->api->synchronize(m) != AOTRUN_OK)
    fail("%s: synchronize: %s", what, c->api->last_error(m));
  return check_outputs(c, what, s, pinned);
}

/* Graph replays with output 0 backend-allocated: a copy of the pool's. */
static void managed_replays(check *c, aotrun_method *m) {
  DLManagedTensor *managed[MAX_IO] = {0}, *first = NULL;
  cudaStream_t s = c->streams[0];
  for (int k = 0; k < 2; k++) {
    reset_outputs(c, kDLCUDA);
    c->out_t[0].data = NULL;
    if (queue_inputs(c, s) != 0) return;
    aotrun_execute_args a = make_args(c, s, AOTRUN_EXECUTE_ASYNC, managed);
    if (c->api->execute_ex(m, &a) != AOTRUN_OK || managed[0] == NULL) {
      fail("graph replay with a managed output: %s", c->api->last_error(m));
      return;
    }
    if (check_managed(c, "graph replay", managed[0], 0, s, c->h_out[0]) != 0)
      return;
    if (k == 0) first = managed[0];
    else managed[0]->deleter(managed[0]);
  }
  /* The second replay must not have written the first one's tensor. */
  if (first != NULL) {
    check_managed(c, "first managed output after the next replay", first, 0,
                  s, c->h_out[0]);
    first->deleter(first);
  }
}

/* ---- ASYNC returns before the work ends ----
 * A host function queued on the caller's stream holds the stream until
 * the gate opens (or GATE_SECONDS pass: a call that waits for its work
 * must not hang the check). execute_ex with AOTRUN_EXECUTE_ASYNC on that
 * stream must return while the gate is still closed; only then is the
 * gate opened and the output checked. */
#define GATE_SECONDS 10

typedef struct gate {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int open;      /* set by the check */
  int timed_out; /* set by the host function */
} gate;

static void CUDART_CB gate_wait(void *arg) {
  gate *g = arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += GATE_SECONDS;
  pthread_mutex_lock(&g->lock);
  while (!g->open && !g->timed_out)
    if (pthread_cond_timedwait(&g->cond, &g->lock, &until) != 0)
      g->timed_out = 1;
  pthread_mutex_unlock(&g->lock);
}

static void gate_open(gate *g) {
  pthread_mutex_lock(&g->lock);
  g->open = 1;
  pthread_cond_signal(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) +
         (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Returns 0 when the check ran (pass or fail recorded), -1 on a setup
 * error (recorded). */
static int gated_async_call(check *c, aotrun_method *m, int graphs,
                            gate *g) {
  cudaStream_t s = c->streams[0];
  reset_outputs(c, kDLCUDA);
  if (queue_inputs(c, s) != 0) return -1;
  CUDA_OK(cudaLaunchHostFunc(s, gate_wait, g));
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  aotrun_execute_args a = make_args(c, s, AOTRUN_EXECUTE_ASYNC, NULL);
  aotrun_status st = c->api->execute_ex(m, &a);
  double took = seconds_since(&t0);
  pthread_mutex_lock(&g->lock);
  int held = !g->open && !g->timed_out;
  pthread_mutex_unlock(&g->lock);
  gate_open(g);
  if (st != AOTRUN_OK) {
    fail("graphs %s, gated ASYNC call: %s", graphs ? "on" : "off",
         c->api->last_error(m));
    CUDA_OK(cudaStreamSynchronize(s));
    return 0;
  }
  if (held)
    printf("PASS: graphs %s: ASYNC execute_ex returned in %.3f s while the "
           "caller's stream was held\n", graphs ? "on" : "off", took);
  else
    fail("graphs %s: ASYNC execute_ex returned after %.3f s, once the "
         "caller's stream was %s: it waited for its work",
         graphs ? "on" : "off", took,
         g->timed_out ? "released by the gate's timeout" : "free");
  return check_outputs(c, graphs ? "graphs on, gated ASYNC call"
                                 : "graphs off, gated ASYNC call",
                       s, 0);
}

static void async_returns_early(check *c, aotrun_method *m, int graphs) {
  gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  (void)gated_async_call(c, m, graphs, &g);
  /* The host function may still be waiting (setup failed after it was
   * queued): open the gate before it goes out of scope. */
  gate_open(&g);
  (void)cudaStreamSynchronize(c->streams[0]);
  pthread_mutex_destroy(&g.lock);
  pthread_cond_destroy(&g.cond);
}

static void async_pageable_refused(check *c, aotrun_method *m) {
  reset_outputs(c, kDLCPU);
  aotrun_execute_args a =
      make_args(c, c->streams[0], AOTRUN_EXECUTE_ASYNC, NULL);
  aotrun_status st = c->api->execute_ex(m, &a);
  if (st != AOTRUN_ERR_INVALID_ARGUMENT ||
      strstr(c->api->last_error(m), "pageable host memory") == NULL)
    fail("ASYNC with kDLCPU outputs: status %d (%s), expected a refusal",
         (int)st, c->api->last_error(m));
}

/* With 2 GPUs: a method on cuda:1 called from a thread on cuda:0 leaves
 * cuda:0 current, on success and on failure. */
static void other_device(check *c) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    printf("INFO: one GPU: the cuda:1 device-restore case is skipped\n");
    return;
  }
  aotrun_method *m = open_method(c, 0, "cuda:1");
  if (m == NULL) return;
  cudaSetDevice(0);
  DLTensor host_in[MAX_IO];
  for (size_t i = 0; i < c->ni; i++)
    host_in[i] = (DLTensor){c->in[i].data, {kDLCPU, 0}, c->in[i].ndim,
                            c->in[i].dtype, c->in[i].shape, NULL, 0};
  reset_outputs(c, kDLCUDAHost);
  aotrun_execute_args a = make_args(c, NULL, 0, NULL);
  a.inputs = host_in;
  if (c->api->execute_ex(m, &a) != AOTRUN_OK)
    fail("cuda:1 execute_ex: %s", c->api->last_error(m));
  if (current_device() != 0)
    fail("cuda:1 execute_ex left device %d", current_device());
  if (c->api->execute(m, host_in, c->ni, c->out_t, c->no) != AOTRUN_OK)
    fail("cuda:1 execute: %s", c->api->last_error(m));
  if (current_device() != 0)
    fail("cuda:1 execute left device %d", current_device());
  a.num_inputs = c->ni + 1; /* a failing call */
  if (c->api->execute_ex(m, &a) == AOTRUN_OK) fail("cuda:1: bad call passed");
  if (current_device() != 0)
    fail("cuda:1 failed execute_ex left device %d", current_device());
  c->api->destroy(m);
}

static void mode_streams(check *c) {
  for (int graphs = 0; graphs <= 1; graphs++) {
    aotrun_method *m = open_method(c, graphs, "cuda:0");
    if (m == NULL) return;
    if (graphs == 0 && prepare(c, m) != 0) {
      c->api->destroy(m);
      return;
    }
    for (int call = 1; call <= c->calls; call++)
      if (one_stream_call(c, m, graphs, call) != 0) break;
    const char *p = phase(c, m);
    if (strcmp(p, graphs ? "Replay" : "Disabled") != 0)
      fail("graphs %s: phase %s after %d calls", graphs ? "on" : "off", p,
           c->calls);
    if (graphs) managed_replays(c, m);
    async_returns_early(c, m, graphs);
    async_pageable_refused(c, m);
    c->api->destroy(m);
  }
  other_device(c);
}

/* ---- mode managed ---- */

static void *delete_on_thread(void *arg) {
  DLManagedTensor *mt = arg;
  mt->deleter(mt);
  return NULL;
}

static void too_small(check *c, aotrun_method *m) {
  const aotrun_npy *w = &c->want[0];
  if (w->ndim != 1 || w->shape[0] < 2) {
    printf("INFO: output 0 has shape of rank %d: too-small case skipped\n",
           (int)w->ndim);
    return;
  }
  reset_outputs(c, kDLCUDA);
  c->out_shape[0][0] = 1;
  aotrun_execute_args a = make_args(c, NULL, 0, NULL);
  aotrun_status st = c->api->execute_ex(m, &a);
  if (st != AOTRUN_ERR_OUTPUT_TOO_SMALL || a.too_small_output != 0 ||
      a.needed_ndim != 1 || a.needed_shape[0] != w->shape[0] ||
      strstr(c->api->last_error(m), "needs shape") == NULL)
    fail("too small: status %d, output %lld, needed [%lld] (expected %d, 0, "
         "[%lld]): %s",
         (int)st, (long long)a.too_small_output,
         (long long)a.needed_shape[0], AOTRUN_ERR_OUTPUT_TOO_SMALL,
         (long long)w->shape[0], c->api->last_error(m));
  c->out_shape[0][0] = 1;
  st = c->api->execute(m, c->in_t, c->ni, c->out_t, c->no);
  if (st != AOTRUN_ERR_INVALID_ARGUMENT)
    fail("too small through execute 1.0: status %d, expected %d", (int)st,
         AOTRUN_ERR_INVALID_ARGUMENT);
}

static void mode_managed(check *c) {
  DLManagedTensor *kept = NULL;
  for (int graphs = 0; graphs <= 1; graphs++) {
    aotrun_method *m = open_method(c, graphs, "cuda:0");
    if (m == NULL) return;
    if (graphs == 0 && prepare(c, m) != 0) {
      c->api->destroy(m);
      return;
    }
    for (int call = 1; call <= c->calls; call++) {
      cudaStream_t s = c->streams[call % 2];
      DLManagedTensor *managed[MAX_IO] = {0};
      reset_outputs(c, kDLCUDA);
      c->out_t[0].data = NULL;
      if (queue_inputs(c, s) != 0) return;
      int device = current_device();
      aotrun_execute_args a = make_args(
          c, call % 3 == 0 ? NULL : s, call % 2 ? AOTRUN_EXECUTE_ASYNC : 0,
          managed);
      char what[64];
      snprintf(what, sizeof what, "graphs %s call %d", graphs ? "on" : "off",
               call);
      /* Without a stream the caller orders the upload itself. */
      if (call % 3 == 0) (void)cudaStreamSynchronize(s);
      if (c->api->execute_ex(m, &a) != AOTRUN_OK || managed[0] == NULL) {
        fail("%s: %s", what, c->api->last_error(m));
        break;
      }
      if (current_device() != device) fail("%s: device changed", what);
      /* Async on the method's own stream: only synchronize orders it. */
      if (a.stream == NULL && (a.flags & AOTRUN_EXECUTE_ASYNC) &&
          c->api->synchronize(m) != AOTRUN_OK)
        fail("%s: synchronize: %s", what, c->api->last_error(m));
      if (check_managed(c, what, managed[0], 0, s, c->h_out[0]) == 0 &&
          kept == NULL && graphs == 1)
        kept = managed[0]; /* deleted after the method is gone */
      else
        managed[0]->deleter(managed[0]);
    }
    too_small(c, m);
    c->api->destroy(m);
  }
  if (kept != NULL) {
    pthread_t th;
    if (pthread_create(&th, NULL, delete_on_thread, kept) != 0)
      kept->deleter(kept);
    else
      pthread_join(th, NULL);
    if (cudaDeviceSynchronize() != cudaSuccess)
      fail("device error after the deleter: %s",
           cudaGetErrorString(cudaGetLastError()));
  }
}

/* ---- main ---- */

static int usage(void) {
  fprintf(stderr,
          "usage: aotrun_stream_check PLUGIN.so PROGRAM_DIR streams|managed "
          "--input F.npy ... --expected F.npy ... [--calls N]\n");
  return 2;
}

static int parse(int argc, char **argv, check *c) {
  if (argc < 4) return -1;
  c->mode = argv[3];
  c->calls = 10;
  for (int i = 4; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) return -1;
    if (!strcmp(f, "--input") && c->num_in < MAX_IO)
      c->in_path[c->num_in++] = v;
    else if (!strcmp(f, "--expected") && c->num_want < MAX_IO)
      c->want_path[c->num_want++] = v;
    else if (!strcmp(f, "--calls"))
      c->calls = atoi(v);
    else
      return -1;
    i++;
  }
  if (strcmp(c->mode, "streams") && strcmp(c->mode, "managed")) return -1;
  return c->calls >= 6 ? 0 : -1;
}

static void release(check *c) {
  for (size_t i = 0; i < MAX_IO; i++) {
    aotrun_npy_free(&c->in[i]);
    aotrun_npy_free(&c->want[i]);
    if (c->h_in[i]) cudaFreeHost(c->h_in[i]);
    if (c->h_out[i]) cudaFreeHost(c->h_out[i]);
    if (c->d_in[i]) cudaFree(c->d_in[i]);
    if (c->d_out[i]) cudaFree(c->d_out[i]);
  }
  for (int s = 0; s < 2; s++)
    if (c->streams[s]) cudaStreamDestroy(c->streams[s]);
  if (c->delay) cudaFree(c->delay);
}

int main(int argc, char **argv) {
  static check c;
  if (parse(argc, argv, &c) != 0) return usage();
  aotrun_backend *backend = NULL;
  if (aotrun_backend_open(argv[1], AOTRUN_ABI_VERSION, &backend) !=
      AOTRUN_OK) {
    printf("FAIL: %s\n", aotrun_host_last_error());
    return 1;
  }
  c.api = aotrun_backend_table(backend);
  char reason[256];
  if (!c.api->is_available(reason, sizeof reason)) {
    printf("SKIP: no usable GPU: %s\n", reason);
    aotrun_backend_close(backend);
    return EXIT_SKIP;
  }
  if (!AOTRUN_TABLE_CAN(c.api, execute_ex) ||
      !AOTRUN_TABLE_CAN(c.api, synchronize)) {
    printf("FAIL: the plugin has no execute_ex / synchronize\n");
    aotrun_backend_close(backend);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", argv[2]);
  c.manifest = read_file(path, &c.manifest_size);
  if (c.manifest == NULL)
    fail("cannot read %s", path);
  else if (aotrun_program_dir_open(argv[2], &c.dir) != AOTRUN_OK)
    fail("%s", aotrun_host_last_error());
  else if (!strcmp(c.mode, "streams"))
    mode_streams(&c);
  else
    mode_managed(&c);
  release(&c);
  aotrun_program_dir_close(c.dir);
  free(c.manifest);
  aotrun_backend_close(backend);
  if (g_failures == 0) printf("PASS: %s\n", c.mode);
  return g_failures ? 1 : 0;
}
