/* conv_graph_run.c: the CUDA side of the graph path (see conv_graph.h):
 * the cuDNN handle it plans and executes with, the capture check, plan
 * timing with events, the workspace, and cudnnBackendExecute. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/conv_graph.h"

#define MAX_DEVICES 64
/* The most workspace a plan may use: the legacy search's limit. */
#define WORKSPACE_LIMIT ((size_t)1 << 30)
#define TIMED_RUNS 3

/* ---- one cuDNN handle per device for the graph path ----
 * Plans are finalized with a handle and cached for the process, so they
 * must not outlive it: a thread's own handle (conv_run.c) dies with the
 * thread. These live until aotrun_fb_conv_release_all. A handle is not to
 * be used by two threads at once, so graph_lock guards the handle, the
 * planning and the (asynchronous, microseconds) execute call. */
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static aotrun_fb_cudnn_handle graph_handles[MAX_DEVICES];
static const aotrun_fb_cudnn_api *graph_api;

/* Called with graph_lock held and c->device current: the device's handle,
 * on `stream`. */
static AOTITorchError graph_handle(const aotrun_fb_conv *c,
                                   const aotrun_fb_cudnn_api *api,
                                   cudaStream_t stream, cudnnHandle_t *out) {
  if (c->device < 0 || c->device >= MAX_DEVICES)
    return aotrun_shim_fail("%s: device index %d is outside 0..%d", c->op,
                            (int)c->device, MAX_DEVICES - 1);
  graph_api = api;
  aotrun_fb_cudnn_handle *h = &graph_handles[c->device];
  if (h->handle == NULL) {
    cudnnStatus_t st = api->cudnnCreate(&h->handle);
    if (st != CUDNN_STATUS_SUCCESS) {
      *h = (aotrun_fb_cudnn_handle){NULL, NULL, 0};
      return aotrun_shim_fail("%s: cudnnCreate on cuda:%d failed: %s", c->op,
                              (int)c->device, api->cudnnGetErrorString(st));
    }
    h->stream_set = 0;
  }
  cudnnStatus_t st = aotrun_fb_cudnn_use_stream(api, h, stream);
  if (st != CUDNN_STATUS_SUCCESS)
    return aotrun_shim_fail("%s: cuDNN cudnnSetStream failed: %s", c->op,
                            api->cudnnGetErrorString(st));
  *out = h->handle;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_conv_graph_release_all(void) {
  pthread_mutex_lock(&graph_lock);
  /* Plans first: they were finalized with the handles below. */
  aotrun_fb_conv_gcache_clear();
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  for (int d = 0; d < MAX_DEVICES; d++) {
    if (graph_handles[d].handle == NULL || graph_api == NULL) continue;
    if (cudaSetDevice(d) == cudaSuccess)
      graph_api->cudnnDestroy(graph_handles[d].handle);
    graph_handles[d] = (aotrun_fb_cudnn_handle){NULL, NULL, 0};
  }
  if (have_previous) cudaSetDevice(previous);
  (void)cudaGetLastError();
  pthread_mutex_unlock(&graph_lock);
}

/* ---- execution ---- */

/* A finalized variant pack of ptrs (x, w, y, bias: the first n). */
static cudnnStatus_t new_pack(const aotrun_fb_cudnn_api *api, void *ptrs[],
                              int64_t n, void *workspace,
                              cudnnBackendDescriptor_t *out) {
  int64_t uids[4] = {AOTRUN_FB_CONV_UID_X, AOTRUN_FB_CONV_UID_W,
                     AOTRUN_FB_CONV_UID_Y, AOTRUN_FB_CONV_UID_B};
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t st = api->cudnnBackendCreateDescriptor(
      CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  st = api->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     CUDNN_TYPE_VOID_PTR, n, ptrs);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                       CUDNN_TYPE_INT64, n, uids);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                       CUDNN_TYPE_VOID_PTR, 1, &workspace);
  if (st == CUDNN_STATUS_SUCCESS) st = api->cudnnBackendFinalize(pack);
  if (st != CUDNN_STATUS_SUCCESS) {
    api->cudnnBackendDestroyDescriptor(pack);
    return st;
  }
  *out = pack;
  return CUDNN_STATUS_SUCCESS;
}

static void pointers_of(const aotrun_fb_conv_gplan *p, const void *x,
                        const void *w, void *y, const void *bias,
                        void *workspace, void *out[5]) {
  out[0] = (void *)x;
  out[1] = (void *)w;
  out[2] = y;
  out[3] = p->fused_bias ? (void *)bias : NULL;
  out[4] = workspace;
}

cudnnStatus_t aotrun_fb_conv_graph_execute(const aotrun_fb_cudnn_api *api,
                                           cudnnHandle_t handle,
                                           const aotrun_fb_conv_gplan *p,
                                           const void *x, const void *w,
                                           void *y, const void *bias,
                                           void *workspace) {
  void *ptrs[5];
  pointers_of(p, x, w, y, bias, workspace, ptrs);
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t st =
      new_pack(api, ptrs, p->fused_bias ? 4 : 3, workspace, &pack);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  st = api->cudnnBackendExecute(handle, p->plan, pack);
  api->cudnnBackendDestroyDescriptor(pack);
  return st;
}

cudnnStatus_t aotrun_fb_conv_graph_execute_reusing(
    const aotrun_fb_cudnn_api *api, cudnnHandle_t handle,
    aotrun_fb_conv_gplan *p, const void *x, const void *w, void *y,
    const void *bias, void *workspace) {
  void *want[5];
  pointers_of(p, x, w, y, bias, workspace, want);
  if (p->pack == NULL || memcmp(p->pack_ptrs, want, sizeof want) != 0) {
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t st =
        new_pack(api, want, p->fused_bias ? 4 : 3, workspace, &pack);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    if (p->pack != NULL) api->cudnnBackendDestroyDescriptor(p->pack);
    p->pack = pack;
    memcpy(p->pack_ptrs, want, sizeof want);
  }
  return api->cudnnBackendExecute(handle, p->plan, p->pack);
}

/* ---- timing a candidate on the real buffers (ATen's benchmark mode) ---- */

typedef struct timing {
  const aotrun_fb_conv *c;
  const aotrun_fb_cudnn_api *api;
  cudnnHandle_t handle;
  cudaStream_t stream;
  const void *x, *w, *bias;
  void *y;
  cudaEvent_t start, stop;
} timing;

static int time_plan(void *ctx, const aotrun_fb_conv_gplan *p, float *ms) {
  timing *t = (timing *)ctx;
  /* Events only once a benchmark runs (plan_and_run destroys them). */
  if (t->start == NULL && cudaEventCreate(&t->start) != cudaSuccess) {
    t->start = NULL;
    (void)cudaGetLastError();
    return -1;
  }
  if (t->stop == NULL && cudaEventCreate(&t->stop) != cudaSuccess) {
    t->stop = NULL;
    (void)cudaGetLastError();
    return -1;
  }
  aotrun_fb_temps scratch;
  aotrun_fb_temps_init(&scratch, t->c->op, t->c->device);
  void *ws = NULL;
  int rc = -1;
  if (p->workspace > 0 &&
      aotrun_fb_temp_bytes(&scratch, (size_t)p->workspace, &ws) !=
          AOTI_TORCH_SUCCESS)
    goto done;
  const void *bias = p->fused_bias ? t->bias : NULL;
  /* A warm-up run (lazy module loads, runtime-compiled kernels), then the
   * mean of a few. Writing y is harmless: the chosen plan rewrites it. */
  if (aotrun_fb_conv_graph_execute(t->api, t->handle, p, t->x, t->w, t->y,
                                   bias, ws) != CUDNN_STATUS_SUCCESS)
    goto done;
  if (cudaEventRecord(t->start, t->stream) != cudaSuccess) goto done;
  for (int i = 0; i < TIMED_RUNS; i++)
    if (aotrun_fb_conv_graph_execute(t->api, t->handle, p, t->x, t->w, t->y,
                                     bias, ws) != CUDNN_STATUS_SUCCESS)
      goto done;
  float total = 0.0f;
  if (cudaEventRecord(t->stop, t->stream) == cudaSuccess &&
      cudaEventSynchronize(t->stop) == cudaSuccess &&
      cudaEventElapsedTime(&total, t->start, t->stop) == cudaSuccess) {
    *ms = total / TIMED_RUNS;
    rc = 0;
  }
done:
  (void)cudaGetLastError();
  aotrun_shim_clear_error(); /* a candidate that cannot run is skipped */
  aotrun_fb_temps_release(&scratch);
  return rc;
}

/* The workspace a plan may use: the legacy search's rule (at most 1 GiB
 * and half the free memory); inside a capture the memory query is
 * skipped (nothing is run to learn it). */
static size_t workspace_limit(int capturing) {
  size_t cap = WORKSPACE_LIMIT;
  size_t free_b = 0, total_b = 0;
  if (capturing) return cap;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    if (free_b / 2 < cap) cap = free_b / 2;
  } else {
    (void)cudaGetLastError();
  }
  return cap;
}

static int64_t min_alignment_of(const void *p) {
  return aotrun_fb_conv_alignment(p);
}

/* Called with graph_lock held. */
static AOTITorchError plan_and_run(const aotrun_fb_conv *c,
                                   const aotrun_fb_cudnn_api *api,
                                   aotrun_fb_temps *temps, cudaStream_t stream,
                                   const aotrun_fb_conv_gkey *key,
                                   int capturing, const void *x,
                                   const void *w, void *y, const void *bias,
                                   aotrun_fb_conv_what *what, int *ran,
                                   int *bias_done) {
  cudnnHandle_t handle = NULL;
  AOTITorchError err = graph_handle(c, api, stream, &handle);
  if (err) return err;
  aotrun_fb_conv_gplan *p = NULL;
  /* The usual call: a cached plan, no memory query, no events. */
  if (aotrun_fb_conv_gcache_lookup(key, &p) &&
      p->from_heuristic && !capturing) {
    aotrun_fb_conv_gplan_unref(p); /* benchmark it now (below) */
    p = NULL;
  }
  if (p == NULL) {
    timing t = {c, api, handle, stream, x, w, bias, y, NULL, NULL};
    aotrun_fb_conv_choose ch = {api,       handle,    c,    key,
                                capturing, workspace_limit(capturing),
                                time_plan, &t,
                                aotrun_fb_conv_what_text(what)};
    err = aotrun_fb_conv_graph_plan(&ch, &p);
    if (t.start) cudaEventDestroy(t.start);
    if (t.stop) cudaEventDestroy(t.stop);
    if (err) return err;
  }
  if (p->legacy) {
    aotrun_fb_conv_gplan_unref(p);
    return AOTI_TORCH_SUCCESS;
  }
  void *ws = NULL;
  if (p->workspace > 0)
    err = aotrun_fb_temp_bytes(temps, (size_t)p->workspace, &ws);
  /* A graph captured now may use this plan's kernels after the cache
   * drops it: keep it alive (aotrun_fb_conv_gplan). */
  if (!err && capturing) aotrun_fb_conv_gplan_mark_captured(p);
  if (!err) {
    cudnnStatus_t st = aotrun_fb_conv_graph_execute_reusing(
        api, handle, p, x, w, y, p->fused_bias ? bias : NULL, ws);
    if (st != CUDNN_STATUS_SUCCESS)
      err = aotrun_shim_fail(
          "%s: cuDNN cudnnBackendExecute (graph engine %lld) failed: %s (%s)",
          c->op, (long long)p->engine, api->cudnnGetErrorString(st),
          aotrun_fb_conv_what_text(what));
  }
  if (!err) {
    *ran = 1;
    *bias_done = p->fused_bias;
  }
  aotrun_fb_conv_gplan_unref(p);
  return err;
}

AOTITorchError aotrun_fb_conv_graph_run(const aotrun_fb_conv *c,
                                        const aotrun_fb_cudnn_api *api,
                                        aotrun_fb_temps *temps,
                                        cudaStream_t stream, const void *x,
                                        const void *w, void *y,
                                        const void *bias,
                                        aotrun_fb_conv_what *what, int *ran,
                                        int *bias_done) {
  *ran = 0;
  *bias_done = 0;
  int64_t align[4] = {min_alignment_of(x), min_alignment_of(w),
                      min_alignment_of(y),
                      bias != NULL ? min_alignment_of(bias) : 0};
  aotrun_fb_conv_gkey key;
  aotrun_fb_conv_gkey_of(c, align, &key);
  enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  cudaError_t ce = cudaStreamIsCapturing(stream, &cap);
  if (ce != cudaSuccess)
    return aotrun_shim_fail("%s: cudaStreamIsCapturing failed: %s", c->op,
                            cudaGetErrorString(ce));
  pthread_mutex_lock(&graph_lock);
  AOTITorchError err =
      plan_and_run(c, api, temps, stream, &key,
                   cap != cudaStreamCaptureStatusNone, x, w, y, bias, what,
                   ran, bias_done);
  pthread_mutex_unlock(&graph_lock);
  return err;
}
