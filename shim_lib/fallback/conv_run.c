/* conv_run.c: runs a planned convolution (conv.h) with cuDNN's legacy API:
 * cudnnConvolutionForward, or cudnnConvolutionBackwardData for a transposed
 * convolution (its input is the "dy" of a forward convolution whose input
 * "dx" is our result), then the bias per channel (conv_bias.cu). Unless
 * AOTRUN_CONV_API=legacy, cuDNN's part goes to the backend graph API first
 * (conv_graph_run.c) on the same prepared operands, which may fuse the
 * bias; a key it has no plan for comes back here. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/conv_graph.h"
#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/kernel_options.h"
#include "shim_lib/fallback/thread_blocks.h"

#define MAX_DEVICES 64
/* Most scratch memory the first call of a shape lets cudnnFind* use. */
#define SEARCH_WORKSPACE_LIMIT ((size_t)1 << 30)
#define MAX_CANDIDATES 16

/* ---- cuDNN handles: one per (thread, device), destroyed at thread exit
 * or by aotrun_fb_conv_release_all (thread_blocks.h). cuDNN handles must
 * not be used by two threads at once. ---- */

typedef struct thread_handles {
  aotrun_fb_cudnn_handle on[MAX_DEVICES];
} thread_handles;

/* The loaded cuDNN (set before the first handle exists; cuDNN stays
 * loaded for the process, see aotrun_fb_conv_release_all). */
static const aotrun_fb_cudnn_api *handles_api;

static void destroy_handles(void *p) {
  thread_handles *t = (thread_handles *)p;
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  for (int d = 0; d < MAX_DEVICES; d++) {
    if (t->on[d].handle == NULL || handles_api == NULL) continue;
    if (cudaSetDevice(d) == cudaSuccess)
      handles_api->cudnnDestroy(t->on[d].handle);
  }
  if (have_previous) cudaSetDevice(previous);
}

static aotrun_fb_thread_blocks g_dnn =
    AOTRUN_FB_THREAD_BLOCKS_INIT(sizeof(thread_handles), destroy_handles);
static _Thread_local aotrun_fb_thread_ticket *tls_dnn;

/* This thread's handle on `device`, set to `stream`. */
static AOTITorchError thread_handle(const char *op,
                                    const aotrun_fb_cudnn_api *api,
                                    int32_t device, cudaStream_t stream,
                                    cudnnHandle_t *out) {
  if (device < 0 || device >= MAX_DEVICES)
    return aotrun_shim_fail("%s: device index %d is outside 0..%d", op,
                            (int)device, MAX_DEVICES - 1);
  handles_api = api;
  thread_handles *t = aotrun_fb_thread_block(&g_dnn, &tls_dnn);
  if (t == NULL)
    return aotrun_shim_fail("%s: out of host memory for the cuDNN handles",
                            op);
  aotrun_fb_cudnn_handle *h = &t->on[device];
  if (h->handle == NULL) {
    cudnnStatus_t st = api->cudnnCreate(&h->handle);
    if (st != CUDNN_STATUS_SUCCESS) {
      *h = (aotrun_fb_cudnn_handle){NULL, NULL, 0};
      return aotrun_shim_fail("%s: cudnnCreate on cuda:%d failed: %s", op,
                              (int)device, api->cudnnGetErrorString(st));
    }
    h->stream_set = 0;
  }
  cudnnStatus_t st = aotrun_fb_cudnn_use_stream(api, h, stream);
  if (st != CUDNN_STATUS_SUCCESS)
    return aotrun_shim_fail("%s: cuDNN cudnnSetStream failed: %s", op,
                            api->cudnnGetErrorString(st));
  *out = h->handle;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_conv_release_all(void) {
  aotrun_fb_thread_blocks_release(&g_dnn);
  aotrun_fb_conv_cache_clear();
  aotrun_fb_conv_graph_release_all();
}

/* ---- helpers ---- */

static cudnnDataType_t dnn_type(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT16: return CUDNN_DATA_HALF;
    case AOTRUN_FB_BFLOAT16: return CUDNN_DATA_BFLOAT16;
    case AOTRUN_FB_FLOAT64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

static int dense_as(const int64_t *sizes, const int64_t *strides,
                    const int64_t *want, int n) {
  for (int d = 0; d < n; d++)
    if (sizes[d] > 1 && strides[d] != want[d]) return 0;
  return 1;
}

static int to_ints(const int64_t *v, int n, int *out) {
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] > INT_MAX) return 0;
    out[i] = (int)v[i];
  }
  return 1;
}

int64_t aotrun_fb_conv_alignment(const void *p) {
  uintptr_t a = (uintptr_t)p;
  int64_t al = 1;
  while (al < 16 && (a & (uintptr_t)(al * 2 - 1)) == 0) al *= 2;
  return al;
}

const char *aotrun_fb_conv_what_text(aotrun_fb_conv_what *w) {
  if (w->text[0] != '\0') return w->text;
  const aotrun_fb_conv *c = w->c;
  char si[96], sw[96], so[96], sx[96], dt[24];
  snprintf(w->text, sizeof w->text,
           "%s%dd %s, input %s, weight %s, output %s%s%s%s, groups %lld%s",
           c->transposed ? "transposed " : "", c->nd,
           aotrun_fb_dtype_name(c->dtype, dt),
           aotrun_fb_shape_str(c->in_sizes, c->rd, si, sizeof si),
           aotrun_fb_shape_str(c->w_sizes, c->rd, sw, sizeof sw),
           aotrun_fb_shape_str(c->out_sizes, c->rd, so, sizeof so),
           c->windowed ? " (a window of cuDNN's dx " : "",
           c->windowed
               ? aotrun_fb_shape_str(c->dx_sizes, c->rd, sx, sizeof sx)
               : "",
           c->windowed ? ")" : "", (long long)c->groups,
           c->channels_last ? ", channels-last" : "");
  return w->text;
}

/* A contiguous copy of a tensor box (or the data itself when it is already
 * dense with strides `want`). */
static AOTITorchError dense_operand(const aotrun_fb_conv *c,
                                    aotrun_fb_temps *temps, const char *what,
                                    char *data, const int64_t *sizes,
                                    const int64_t *strides,
                                    const int64_t *want, cudaStream_t stream,
                                    void **out) {
  if (dense_as(sizes, strides, want, c->rd)) {
    *out = data;
    return AOTI_TORCH_SUCCESS;
  }
  int overflow = 0;
  int64_t n = aotrun_fb_numel(sizes, c->rd, &overflow);
  void *dst = NULL;
  AOTITorchError err = aotrun_fb_temp_alloc(temps, c->dtype, 1, &n, &dst);
  if (!err)
    err = aotrun_fb_copy(temps, what, dst, want, data, strides, sizes, c->rd,
                         c->elem_size, stream);
  if (!err) *out = dst;
  return err;
}

typedef struct candidate {
  int algo;
  cudnnStatus_t status;
  size_t memory;
  cudnnMathType_t math;
  float time_ms; /* benchmarked; -1 from the heuristic */
} candidate;

typedef struct descs {
  cudnnHandle_t h;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
} descs;

/* float32 may use TF32 tensor ops, as torch 2.11 by default
 * (torch.backends.cudnn.allow_tf32 True). With AOTRUN_CONV_TF32=0 it runs
 * as eager with allow_tf32 off: no tensor-op candidates, FMA math on the
 * descriptor. */
static int math_ok(const aotrun_fb_conv *c, cudnnMathType_t m) {
  if (c->dtype != AOTRUN_FB_FLOAT32 || aotrun_fb_conv_tf32_enabled()) return 1;
  return m != CUDNN_TENSOR_OP_MATH &&
         m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

static cudnnMathType_t run_math(const aotrun_fb_conv *c, cudnnMathType_t m) {
  return c->dtype == AOTRUN_FB_FLOAT32 && !aotrun_fb_conv_tf32_enabled()
             ? CUDNN_FMA_MATH
             : m;
}

/* The heuristic list (find == 0, no kernels) or the benchmarked one. */
static cudnnStatus_t query(const aotrun_fb_conv *c,
                           const aotrun_fb_cudnn_api *api, const descs *d,
                           int find, const void *x, const void *w, void *y,
                           void *ws, size_t ws_bytes, candidate *cands,
                           int *n) {
  int got = 0;
  cudnnStatus_t st;
  *n = 0;
  if (!c->transposed) {
    cudnnConvolutionFwdAlgoPerf_t perf[MAX_CANDIDATES];
    if (find)
      st = api->cudnnFindConvolutionForwardAlgorithmEx(
          d->h, d->x, x, d->w, w, d->conv, d->y, y, MAX_CANDIDATES, &got,
          perf, ws, ws_bytes);
    else
      st = api->cudnnGetConvolutionForwardAlgorithm_v7(
          d->h, d->x, d->w, d->conv, d->y, MAX_CANDIDATES, &got, perf);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got; i++)
      cands[i] = (candidate){(int)perf[i].algo, perf[i].status,
                             perf[i].memory, perf[i].mathType,
                             find ? perf[i].time : -1.0f};
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[MAX_CANDIDATES];
    /* dy = our input (x), dx = our output (y). */
    if (find)
      st = api->cudnnFindConvolutionBackwardDataAlgorithmEx(
          d->h, d->w, w, d->x, x, d->conv, d->y, y, MAX_CANDIDATES, &got,
          perf, ws, ws_bytes);
    else
      st = api->cudnnGetConvolutionBackwardDataAlgorithm_v7(
          d->h, d->w, d->x, d->conv, d->y, MAX_CANDIDATES, &got, perf);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got; i++)
      cands[i] = (candidate){(int)perf[i].algo, perf[i].status,
                             perf[i].memory, perf[i].mathType,
                             find ? perf[i].time : -1.0f};
  }
  if (st == CUDNN_STATUS_SUCCESS) *n = got;
  return st;
}

static const candidate *pick(const aotrun_fb_conv *c, const candidate *cands,
                             int n, size_t limit) {
  for (int i = 0; i < n; i++)
    if (cands[i].status == CUDNN_STATUS_SUCCESS && math_ok(c, cands[i].math) &&
        cands[i].memory <= limit)
      return &cands[i];
  return NULL;
}

static cudnnStatus_t workspace_size(const aotrun_fb_conv *c,
                                    const aotrun_fb_cudnn_api *api,
                                    const descs *d, int algo, size_t *bytes) {
  if (!c->transposed)
    return api->cudnnGetConvolutionForwardWorkspaceSize(
        d->h, d->x, d->w, d->conv, d->y, (cudnnConvolutionFwdAlgo_t)algo,
        bytes);
  return api->cudnnGetConvolutionBackwardDataWorkspaceSize(
      d->h, d->w, d->x, d->conv, d->y, (cudnnConvolutionBwdDataAlgo_t)algo,
      bytes);
}

/* The workspace cudnnFind* gets: the largest workspace any algorithm of
 * this problem needs (every algorithm's size queried, as ATen's
 * getMaxWorkspaceSize, and the heuristic's own figures), at most
 * SEARCH_WORKSPACE_LIMIT and half the free device memory. */
static size_t search_limit(const aotrun_fb_conv *c,
                           const aotrun_fb_cudnn_api *api, const descs *d,
                           const candidate *heur, int nh) {
  size_t cap = SEARCH_WORKSPACE_LIMIT;
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b / 2 < cap)
    cap = free_b / 2;
  else
    (void)cudaGetLastError();
  size_t limit = 0;
  for (int i = 0; i < nh; i++)
    if (heur[i].status == CUDNN_STATUS_SUCCESS && math_ok(c, heur[i].math) &&
        heur[i].memory > limit && heur[i].memory <= cap)
      limit = heur[i].memory;
  int count = c->transposed ? (int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                            : (int)CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  for (int algo = 0; algo < count; algo++) {
    size_t bytes = 0;
    if (workspace_size(c, api, d, algo, &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes > limit && bytes <= cap)
      limit = bytes;
  }
  return limit;
}

/* The cached algorithm of this key, or a new choice (benchmarked outside a
 * capture, heuristic inside one), stored in the cache. */
static AOTITorchError choose_algo(const aotrun_fb_conv *c,
                                  const aotrun_fb_cudnn_api *api,
                                  const descs *d, const void *x, const void *w,
                                  void *y, cudaStream_t stream,
                                  aotrun_fb_conv_what *what,
                                  aotrun_fb_conv_algo *out) {
  aotrun_fb_conv_key key;
  int64_t ax = aotrun_fb_conv_alignment(x), aw = aotrun_fb_conv_alignment(w),
          ay = aotrun_fb_conv_alignment(y);
  int64_t al = ax < aw ? ax : aw;
  aotrun_fb_conv_key_of(c, al < ay ? al : ay, &key);
  enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  cudaError_t ce = cudaStreamIsCapturing(stream, &cap);
  if (ce != cudaSuccess)
    return aotrun_shim_fail("%s: cudaStreamIsCapturing failed: %s", c->op,
                            cudaGetErrorString(ce));
  int capturing = cap != cudaStreamCaptureStatusNone;
  if (aotrun_fb_conv_cache_lookup(&key, out) &&
      !(out->from_heuristic && !capturing))
    return AOTI_TORCH_SUCCESS;

  candidate heur[MAX_CANDIDATES], found[MAX_CANDIDATES];
  int nh = 0, nf = 0;
  cudnnStatus_t st = query(c, api, d, 0, x, w, y, NULL, 0, heur, &nh);
  if (st != CUDNN_STATUS_SUCCESS)
    return aotrun_shim_fail("%s: cuDNN's algorithm heuristic failed: %s (%s)",
                            c->op, api->cudnnGetErrorString(st),
                            aotrun_fb_conv_what_text(what));
  const candidate *best = NULL;
  const char *source = "heuristic (inside a capture)";
  char search_error[160] = "";
  if (!capturing) {
    /* Benchmark with as much scratch as the hungriest algorithm wants (as
     * ATen's getMaxWorkspaceSize: every algorithm's workspace size, the
     * largest that fits SEARCH_WORKSPACE_LIMIT and half the free memory),
     * so the fast algorithms that need a workspace are not skipped. */
    size_t limit = search_limit(c, api, d, heur, nh);
    aotrun_fb_temps search;
    aotrun_fb_temps_init(&search, c->op, c->device);
    void *ws = NULL;
    if (aotrun_fb_temp_bytes(&search, limit, &ws) == AOTI_TORCH_SUCCESS) {
      st = query(c, api, d, 1, x, w, y, ws, limit, found, &nf);
      if (st == CUDNN_STATUS_SUCCESS) {
        best = pick(c, found, nf, limit);
        if (best == NULL)
          snprintf(search_error, sizeof search_error,
                   "no usable benchmarked algorithm among %d", nf);
      } else {
        snprintf(search_error, sizeof search_error, "%s",
                 api->cudnnGetErrorString(st));
      }
    } else {
      snprintf(search_error, sizeof search_error,
               "cannot allocate %zu bytes of search workspace", limit);
    }
    aotrun_shim_clear_error(); /* a failed search falls back quietly */
    aotrun_fb_temps_release(&search);
    /* Outside a capture the choice is final even when the search failed
     * (heuristic below): searching again on every call would cost far more
     * than the search can win. */
    source = best ? "benchmarked" : "heuristic (search failed)";
  }
  int from_heuristic = capturing;
  if (best == NULL) best = pick(c, heur, nh, (size_t)-1);
  if (best == NULL)
    return aotrun_shim_fail(
        "%s: cuDNN offers no algorithm for this convolution (%d candidates, "
        "none usable%s%s%s) (%s)",
        c->op, nh,
        c->dtype == AOTRUN_FB_FLOAT32 && !aotrun_fb_conv_tf32_enabled()
            ? " without TF32"
            : "",
        search_error[0] ? "; the search: " : "", search_error,
        aotrun_fb_conv_what_text(what));
  aotrun_fb_conv_algo a = {best->algo, (int)run_math(c, best->math), 0,
                           from_heuristic};
  st = api->cudnnSetConvolutionMathType(d->conv, (cudnnMathType_t)a.math_type);
  if (st == CUDNN_STATUS_SUCCESS)
    st = workspace_size(c, api, d, a.algo, &a.workspace);
  if (st != CUDNN_STATUS_SUCCESS)
    return aotrun_shim_fail("%s: cuDNN workspace query of algorithm %d "
                            "failed: %s (%s)",
                            c->op, a.algo, api->cudnnGetErrorString(st),
                            aotrun_fb_conv_what_text(what));
  aotrun_fb_conv_cache_store(&key, &a);
  if (aotrun_fb_conv_log_enabled())
    fprintf(stderr,
            "aotrun conv: %s: algorithm %d, math %d, workspace %zu bytes, "
            "%s%s%s%s, %.3f ms in the search (%s)\n",
            c->op, a.algo, a.math_type, a.workspace, source,
            search_error[0] ? " (" : "", search_error,
            search_error[0] ? ")" : "", best->time_ms,
            aotrun_fb_conv_what_text(what));
  *out = a;
  return AOTI_TORCH_SUCCESS;
}

#define DNN(call, step)                                                      \
  do {                                                                       \
    cudnnStatus_t s_ = (call);                                               \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                        \
      err = aotrun_shim_fail("%s: cuDNN %s failed: %s (%s)", c->op, step,    \
                             api->cudnnGetErrorString(s_),                \
                             aotrun_fb_conv_what_text(what));             \
      goto done;                                                             \
    }                                                                        \
  } while (0)

/* cuDNN's part on the legacy API: descriptors, the algorithm (cached per
 * key), cudnnConvolutionForward or cudnnConvolutionBackwardData into y. */
static AOTITorchError legacy_conv(const aotrun_fb_conv *c,
                                  const aotrun_fb_cudnn_api *api,
                                  aotrun_fb_temps *temps, cudaStream_t stream,
                                  const void *x, const void *w, void *y,
                                  aotrun_fb_conv_what *what) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  int rd = c->rd, sd = c->rd - 2;
  int64_t in_want[5];
  aotrun_fb_format_strides(c->in_sizes, rd, c->channels_last, in_want);
  int idims[5], istr[5], wdims[5], odims[5], ostr[5];
  int pad[3], str[3], dil[3];
  if (!to_ints(c->in_sizes, rd, idims) || !to_ints(in_want, rd, istr) ||
      !to_ints(c->w_sizes, rd, wdims) || !to_ints(c->dx_sizes, rd, odims) ||
      !to_ints(c->dx_strides, rd, ostr) || !to_ints(c->dx_pad, sd, pad) ||
      !to_ints(c->stride, sd, str) || !to_ints(c->dil, sd, dil))
    return aotrun_shim_fail(
        "%s: a size, stride or parameter does not fit cuDNN's 32-bit "
        "descriptors (%s)",
        c->op, aotrun_fb_conv_what_text(what));

  descs d;
  memset(&d, 0, sizeof d);
  err = thread_handle(c->op, api, c->device, stream, &d.h);
  if (err) return err;
  cudnnDataType_t t = dnn_type(c->dtype);
  cudnnDataType_t ct =
      c->dtype == AOTRUN_FB_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  DNN(api->cudnnCreateTensorDescriptor(&d.x), "tensor descriptor");
  DNN(api->cudnnCreateTensorDescriptor(&d.y), "tensor descriptor");
  DNN(api->cudnnCreateFilterDescriptor(&d.w), "filter descriptor");
  DNN(api->cudnnCreateConvolutionDescriptor(&d.conv),
      "convolution descriptor");
  DNN(api->cudnnSetTensorNdDescriptor(d.x, t, rd, idims, istr),
      "input descriptor");
  DNN(api->cudnnSetTensorNdDescriptor(d.y, t, rd, odims, ostr),
      "output descriptor");
  DNN(api->cudnnSetFilterNdDescriptor(
          d.w, t, c->channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
          rd, wdims),
      "weight descriptor");
  DNN(api->cudnnSetConvolutionNdDescriptor(d.conv, sd, pad, str, dil,
                                           CUDNN_CROSS_CORRELATION, ct),
      "convolution descriptor");
  DNN(api->cudnnSetConvolutionGroupCount(d.conv, (int)c->groups),
      "group count");
  DNN(api->cudnnSetConvolutionMathType(
          d.conv, c->dtype == AOTRUN_FB_FLOAT32 ? CUDNN_FMA_MATH
                  : c->dtype == AOTRUN_FB_FLOAT64 ? CUDNN_DEFAULT_MATH
                                                  : CUDNN_TENSOR_OP_MATH),
      "math type");

  aotrun_fb_conv_algo algo;
  err = choose_algo(c, api, &d, x, w, y, stream, what, &algo);
  if (err) goto done;
  DNN(api->cudnnSetConvolutionMathType(d.conv, (cudnnMathType_t)algo.math_type),
      "math type");
  void *ws = NULL;
  if (algo.workspace > 0) {
    err = aotrun_fb_temp_bytes(temps, algo.workspace, &ws);
    if (err) goto done;
  }
  double one_d = 1.0, zero_d = 0.0;
  float one_f = 1.0f, zero_f = 0.0f;
  int dbl = c->dtype == AOTRUN_FB_FLOAT64;
  const void *one = dbl ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = dbl ? (const void *)&zero_d : (const void *)&zero_f;
  if (!c->transposed)
    DNN(api->cudnnConvolutionForward(d.h, one, d.x, x, d.w, w, d.conv,
                                     (cudnnConvolutionFwdAlgo_t)algo.algo, ws,
                                     algo.workspace, zero, d.y, y),
        "cudnnConvolutionForward");
  else
    DNN(api->cudnnConvolutionBackwardData(
            d.h, one, d.w, w, d.x, x, d.conv,
            (cudnnConvolutionBwdDataAlgo_t)algo.algo, ws, algo.workspace,
            zero, d.y, y),
        "cudnnConvolutionBackwardData");
done:
  if (d.conv) api->cudnnDestroyConvolutionDescriptor(d.conv);
  if (d.w) api->cudnnDestroyFilterDescriptor(d.w);
  if (d.y) api->cudnnDestroyTensorDescriptor(d.y);
  if (d.x) api->cudnnDestroyTensorDescriptor(d.x);
  return err;
}

/* The bias as a dense vector (a copy when it is strided). */
static AOTITorchError dense_bias(const aotrun_fb_conv *c,
                                 aotrun_fb_temps *temps, cudaStream_t stream,
                                 const void **out) {
  int64_t cout = c->out_sizes[1];
  *out = c->bias_data;
  if (cout <= 1 || c->bias_stride == 1) return AOTI_TORCH_SUCCESS;
  void *copy = NULL;
  int64_t one_stride[1] = {c->bias_stride};
  AOTITorchError err = aotrun_fb_contiguous_copy(
      temps, "the bias", c->bias_data, one_stride, &cout, 1, c->dtype,
      c->elem_size, stream, &copy);
  if (!err) *out = copy;
  return err;
}

static AOTITorchError run_on_stream(const aotrun_fb_conv *c,
                                    const aotrun_fb_cudnn_api *api,
                                    aotrun_fb_temps *temps,
                                    cudaStream_t stream, void *y) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  aotrun_fb_conv_what what_buf = {c, ""};
  aotrun_fb_conv_what *what = &what_buf;
  int rd = c->rd, sd = c->rd - 2;
  int64_t in_want[5], w_want[5];
  aotrun_fb_format_strides(c->in_sizes, rd, c->channels_last, in_want);
  aotrun_fb_format_strides(c->w_sizes, rd, c->channels_last, w_want);

  void *x = NULL, *w = NULL;
  err = dense_operand(c, temps, "the input into cuDNN's layout", c->in_data,
                      c->in_sizes, c->in_strides, in_want, stream, &x);
  if (!err)
    err = dense_operand(c, temps, "the weight into cuDNN's layout", c->w_data,
                        c->w_sizes, c->w_strides, w_want, stream, &w);
  if (err) return err;
  /* A windowed plan: cuDNN writes the full dx into scratch (conv.h). */
  void *result = y;
  if (c->windowed) {
    int overflow = 0;
    int64_t n = aotrun_fb_numel(c->dx_sizes, rd, &overflow);
    err = aotrun_fb_temp_alloc(temps, c->dtype, 1, &n, &y);
    if (err) return err;
  }
  const void *bias = NULL;
  if (c->has_bias) {
    err = dense_bias(c, temps, stream, &bias);
    if (err) return err;
  }

  /* The backend (graph) API unless AOTRUN_CONV_API=legacy; it may fuse
   * the bias. A key it has no plan for (logged once) runs on the legacy
   * API. */
  int ran = 0, bias_done = 0;
  if (aotrun_fb_conv_graph_enabled())
    err = aotrun_fb_conv_graph_run(c, api, temps, stream, x, w, y, bias, what,
                                   &ran, &bias_done);
  if (!err && !ran) err = legacy_conv(c, api, temps, stream, x, w, y, what);
  if (err) return err;
  if (c->windowed) {
    err = aotrun_fb_conv_window_copy(c, temps, y, result, stream);
    if (err) return err;
    y = result;
  }

  if (c->has_bias && !bias_done) {
    int overflow = 0;
    int64_t numel = aotrun_fb_numel(c->out_sizes, rd, &overflow);
    int64_t inner = aotrun_fb_numel(c->out_sizes + 2, sd, &overflow);
    cudaError_t e = aotrun_fb_conv_add_bias(y, bias, c->dtype, numel,
                                            c->out_sizes[1], inner,
                                            c->channels_last, stream);
    if (e != cudaSuccess)
      return aotrun_shim_fail("%s: the bias kernel failed to launch: %s (%s)",
                              c->op, cudaGetErrorString(e),
                              aotrun_fb_conv_what_text(what));
  }
  return AOTI_TORCH_SUCCESS;
}
#undef DNN

AOTITorchError aotrun_fb_conv_run(const aotrun_fb_conv *c,
                                  AtenTensorHandle *ret) {
  *ret = NULL;
  AtenTensorHandle out = NULL;
  int overflow = 0;
  int64_t numel = aotrun_fb_numel(c->ret_sizes, c->ret_ndim, &overflow);
  if (numel == 0) {
    /* An empty batch: the result's shape and layout, no cuDNN. */
    if (aoti_torch_empty_strided(c->ret_ndim, c->ret_sizes, c->ret_strides,
                                 c->dtype, AOTRUN_FB_DEVICE_CUDA, c->device,
                                 &out) != AOTI_TORCH_SUCCESS)
      return aotrun_shim_fail("%s: cannot allocate the result: %s", c->op,
                              aotrun_shim_last_error());
    *ret = out;
    return AOTI_TORCH_SUCCESS;
  }
  const aotrun_fb_cudnn_api *api = NULL;
  AOTITorchError err = aotrun_fb_cudnn_load(c->op, &api);
  if (err) return err;
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(c->op, c->device, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  if (aoti_torch_empty_strided(c->ret_ndim, c->ret_sizes, c->ret_strides,
                               c->dtype, AOTRUN_FB_DEVICE_CUDA, c->device,
                               &out) != AOTI_TORCH_SUCCESS) {
    err = aotrun_shim_fail("%s: cannot allocate the result: %s", c->op,
                           aotrun_shim_last_error());
    aotrun_fb_device_leave(&scope);
    return err;
  }
  void *y = NULL;
  if (aoti_torch_get_data_ptr(out, &y) != AOTI_TORCH_SUCCESS)
    err = aotrun_shim_fail("%s: cannot read the result's data: %s", c->op,
                           aotrun_shim_last_error());
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, c->op, c->device);
  if (!err) err = run_on_stream(c, api, &temps, stream, y);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  if (err) {
    aoti_torch_delete_tensor_object(out);
    return err;
  }
  *ret = out;
  return AOTI_TORCH_SUCCESS;
}
