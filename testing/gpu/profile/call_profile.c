/*
 * call_profile.c: an LD_PRELOAD library that counts and times the CUDA
 * runtime, driver, cuBLAS(Lt) and shim calls a process makes, for finding
 * per-call host overhead on a GPU machine without nsys or perf:
 *
 *   LD_PRELOAD=libcall_profile.so aotrun bench PROGRAM --iterations 5000
 *
 * At exit it prints, per function, calls, total host microseconds inside
 * it, and calls / microseconds per AOTRUN_PROFILE_CALLS (the bench's call
 * count) and the slowest single call (a one-time cost shows there: the
 * first call's module load, a first copy) to stderr. With
 * AOTRUN_PROFILE_SLOW_US=T it also prints each call that took T us or
 * more as it happens, numbered among the function's calls and the
 * process's wrapped calls, with its time since the first wrapped call:
 * which call of a first execute was the slow one. A wrapped call made
 * inside another (cuBLAS launching its kernel, the shim asking for the
 * device) is in both totals; the "self" column takes the calls made
 * inside out, and "inside" counts the calls made within another wrapped
 * call and names the last such caller. Shim functions are caught only
 * where a model library calls them (through the global scope); calls
 * inside the shim are not.
 * The shim opens cuBLAS with dlopen and calls what dlsym gives it, which
 * a preload does not interpose: name this library as the cuBLAS to open
 * (AOTRUN_CUBLAS_LIBRARY and AOTRUN_CUBLASLT_LIBRARY, as profile_case.sh
 * does). It links both cuBLAS libraries, so a lookup in it finds its
 * wrapper for a function wrapped here and the real function for the rest.
 * Built with -DCALL_PROFILE_CUDNN it is libcall_profile_cudnn.so, the same
 * for cuDNN (which the shim also opens itself): it links libcudnn.so.9,
 * wraps the calls of a convolution's steady path, and is named as the
 * cuDNN to open (AOTRUN_CUDNN_LIBRARY, not preloaded); its table follows
 * the main one at exit.
 * A development tool: built by testing/gpu/build_gpu_bundle.sh (and by
 * Bazel for its CPU test, test_call_profile.sh), not linked into anything.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shim_lib/aotrun_shim.h"

#ifdef CALL_PROFILE_CUDNN
#include <cudnn.h>
#define CALL_PROFILE_LIST "testing/gpu/profile/call_profile_cudnn_list.h"
#define CALL_PROFILE_TITLE "call_profile_cudnn:"
#else
#define CALL_PROFILE_LIST "testing/gpu/profile/call_profile_list.h"
#define CALL_PROFILE_TITLE "call_profile:"
#endif

enum {
#define F(name) P_##name,
#include CALL_PROFILE_LIST
#undef F
  P_COUNT
};
static const char *const kNames[P_COUNT] = {
#define F(name) #name,
#include CALL_PROFILE_LIST
#undef F
};
static unsigned long long g_calls[P_COUNT];
static double g_ns[P_COUNT];
static double g_self_ns[P_COUNT]; /* g_ns less the wrapped calls inside */
static double g_max_ns[P_COUNT];
static unsigned long long g_inside[P_COUNT]; /* calls made inside another */
static int g_outer[P_COUNT];                 /* ... the last such caller */

/* The wrapped call this thread is in (-1: none) and the time spent so far
 * in wrapped calls made inside it. */
static _Thread_local int t_current = -1;
static _Thread_local double t_child_ns;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The libraries that define what is wrapped. A plugin is dlopen'ed
 * RTLD_LOCAL, so its libcudart (and the shim, cuBLAS) are not in the global
 * scope RTLD_NEXT searches: look them up by name, already loaded. */
static const char *const kLibs[] = {"libcudnn.so.9", "libcudnn_graph.so.9",
                                    "libcudart.so.13", "libcuda.so.1",
                                    "libcublasLt.so.13", "libcublas.so.13",
                                    "libaotrun_shim.so"};

static void *real(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  for (size_t i = 0; p == NULL && i < sizeof kLibs / sizeof *kLibs; i++) {
    void *h = dlopen(kLibs[i], RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) p = dlsym(h, name);
  }
  if (p == NULL) {
    fprintf(stderr, "call_profile: %s not found in any loaded library\n",
            name);
    _exit(70); /* a profiling tool: better stop than call NULL */
  }
  return p;
}

static unsigned long long g_seq; /* wrapped calls of the process */
static double g_first_ns, g_slow_ns = -2; /* -2: not read yet, -1: off */

/* Entering wrapped call i: what the enclosing call is owed back. */
typedef struct {
  int outer;
  double outer_child_ns;
} nest;

static nest nest_enter(int i) {
  nest n = {t_current, t_child_ns};
  if (t_current >= 0) {
    g_inside[i]++;
    g_outer[i] = t_current;
  }
  t_current = i;
  t_child_ns = 0;
  return n;
}

/* Leaving it after dt ns: its self time, and its whole time counted as a
 * child of the enclosing call. */
static void nest_leave(int i, nest n, double dt) {
  g_self_ns[i] += dt - t_child_ns;
  t_current = n.outer;
  t_child_ns = n.outer_child_ns + dt;
}

/* AOTRUN_PROFILE_SLOW_US: print each call at least that slow. */
static void note_call(int i, double t0, double dt) {
  g_seq++;
  if (g_first_ns == 0) g_first_ns = t0;
  if (g_slow_ns == -2) {
    const char *v = getenv("AOTRUN_PROFILE_SLOW_US");
    g_slow_ns = v != NULL && *v != '\0' && atof(v) >= 0 ? atof(v) * 1e3 : -1;
  }
  if (g_slow_ns >= 0 && dt >= g_slow_ns)
    fprintf(stderr,
            "call_profile: slow: %s call %llu (wrapped call %llu, at %.3f "
            "ms): %.1f us\n",
            kNames[i], g_calls[i], g_seq, (t0 - g_first_ns) / 1e6, dt / 1e3);
}

/* Defines a wrapper `ret name(params)` forwarding `args`. */
#define WRAP(ret, name, params, args)                       \
  ret name params {                                        \
    static ret(*next) params;                              \
    if (next == NULL) next = (ret(*) params)real(#name);   \
    nest n_ = nest_enter(P_##name);                        \
    double t0 = now_ns();                                  \
    ret r_ = next args;                                    \
    double dt_ = now_ns() - t0;                            \
    nest_leave(P_##name, n_, dt_);                         \
    g_ns[P_##name] += dt_;                                 \
    if (dt_ > g_max_ns[P_##name]) g_max_ns[P_##name] = dt_; \
    g_calls[P_##name]++;                                   \
    note_call(P_##name, t0, dt_);                          \
    return r_;                                             \
  }

#ifdef CALL_PROFILE_CUDNN
/* A convolution's steady path (shim_lib/fallback/conv_graph_run.c). */
WRAP(cudnnStatus_t, cudnnSetStream, (cudnnHandle_t h, cudaStream_t s), (h, s))
WRAP(cudnnStatus_t, cudnnBackendCreateDescriptor,
     (cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d), (t, d))
WRAP(cudnnStatus_t, cudnnBackendSetAttribute,
     (cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t n,
      cudnnBackendAttributeType_t t, int64_t c, const void *v),
     (d, n, t, c, v))
WRAP(cudnnStatus_t, cudnnBackendFinalize, (cudnnBackendDescriptor_t d), (d))
WRAP(cudnnStatus_t, cudnnBackendDestroyDescriptor,
     (cudnnBackendDescriptor_t d), (d))
WRAP(cudnnStatus_t, cudnnBackendExecute,
     (cudnnHandle_t h, cudnnBackendDescriptor_t p, cudnnBackendDescriptor_t v),
     (h, p, v))
#else
WRAP(cudaError_t, cudaMallocAsync, (void **p, size_t n, cudaStream_t s), (p, n, s))
WRAP(cudaError_t, cudaFreeAsync, (void *p, cudaStream_t s), (p, s))
WRAP(cudaError_t, cudaMalloc, (void **p, size_t n), (p, n))
WRAP(cudaError_t, cudaFree, (void *p), (p))
WRAP(cudaError_t, cudaMemcpyAsync,
     (void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st),
     (d, s, n, k, st))
WRAP(cudaError_t, cudaMemsetAsync, (void *d, int v, size_t n, cudaStream_t s),
     (d, v, n, s))
WRAP(cudaError_t, cudaStreamSynchronize, (cudaStream_t s), (s))
WRAP(cudaError_t, cudaDeviceSynchronize, (void), ())
WRAP(cudaError_t, cudaGetDevice, (int *d), (d))
WRAP(cudaError_t, cudaStreamIsCapturing,
     (cudaStream_t s, enum cudaStreamCaptureStatus *c), (s, c))
WRAP(cudaError_t, cudaLaunchKernel,
     (const void *f, dim3 g, dim3 b, void **a, size_t m, cudaStream_t s),
     (f, g, b, a, m, s))
WRAP(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t e, cudaStream_t s), (e, s))
WRAP(cudaError_t, cudaGraphExecMemcpyNodeSetParams1D,
     (cudaGraphExec_t e, cudaGraphNode_t n, void *d, const void *s, size_t c,
      enum cudaMemcpyKind k),
     (e, n, d, s, c, k))
WRAP(cudaError_t, cudaGraphNodeSetEnabled,
     (cudaGraphExec_t e, cudaGraphNode_t n, unsigned int on), (e, n, on))
WRAP(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), (e, s))
WRAP(cudaError_t, cudaFuncSetAttribute,
     (const void *f, enum cudaFuncAttribute a, int v), (f, a, v))
WRAP(cudaError_t, cudaGetLastError, (void), ())
WRAP(cudaError_t, cudaPointerGetAttributes,
     (struct cudaPointerAttributes *a, const void *p), (a, p))
WRAP(CUresult, cuLaunchKernel,
     (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
      unsigned by, unsigned bz, unsigned sm, CUstream s, void **a, void **e),
     (f, gx, gy, gz, bx, by, bz, sm, s, a, e))
WRAP(CUresult, cuCtxGetCurrent, (CUcontext * c), (c))
WRAP(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
     (cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
      cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
      cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t p, int n,
      cublasLtMatmulHeuristicResult_t *r, int *found),
     (h, d, a, b, c, dd, p, n, r, found))
WRAP(cublasStatus_t, cublasLtMatmul,
     (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *al, const void *A,
      cublasLtMatrixLayout_t la, const void *B, cublasLtMatrixLayout_t lb,
      const void *be, const void *C, cublasLtMatrixLayout_t lc, void *D,
      cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo, void *ws,
      size_t wsb, cudaStream_t s),
     (h, d, al, A, la, B, lb, be, C, lc, D, ld, algo, ws, wsb, s))
WRAP(cublasStatus_t, cublasSetStream_v2, (cublasHandle_t h, cudaStream_t s),
     (h, s))
WRAP(cublasStatus_t, cublasSetWorkspace_v2, (cublasHandle_t h, void *w, size_t n),
     (h, w, n))
WRAP(cublasStatus_t, cublasGemmEx_64,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
      int64_t n, int64_t k, const void *al, const void *A, cudaDataType at,
      int64_t lda, const void *B, cudaDataType bt, int64_t ldb,
      const void *be, void *C, cudaDataType ct, int64_t ldc,
      cublasComputeType_t cp, cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, cp, algo))
WRAP(AOTITorchError, aoti_torch_empty_strided,
     (int64_t nd, const int64_t *sz, const int64_t *st, int32_t dt, int32_t dv,
      int32_t di, AtenTensorHandle *r),
     (nd, sz, st, dt, dv, di, r))
WRAP(AOTITorchError, aoti_torch_delete_tensor_object, (AtenTensorHandle t), (t))
WRAP(AOTITorchError, aoti_torch__reinterpret_tensor,
     (AtenTensorHandle s, int64_t nd, const int64_t *sz, const int64_t *st,
      int64_t off, AtenTensorHandle *r),
     (s, nd, sz, st, off, r))
WRAP(AOTITorchError, aoti_torch_cuda_addmm_out,
     (AtenTensorHandle o, AtenTensorHandle s, AtenTensorHandle a,
      AtenTensorHandle b, double be, double al),
     (o, s, a, b, be, al))
WRAP(AOTITorchError, aoti_torch_cuda_mm_out,
     (AtenTensorHandle o, AtenTensorHandle s, AtenTensorHandle b), (o, s, b))
WRAP(AOTITorchError, aoti_torch_create_cuda_stream_guard,
     (void *s, int32_t d, CUDAStreamGuardHandle *g), (s, d, g))
WRAP(AOTITorchError, aoti_torch_delete_cuda_stream_guard,
     (CUDAStreamGuardHandle g), (g))
WRAP(AOTITorchError, aoti_torch_get_current_cuda_stream,
     (int32_t d, void **s), (d, s))

#endif /* CALL_PROFILE_CUDNN */

__attribute__((destructor)) static void report(void) {
  const char *c = getenv("AOTRUN_PROFILE_CALLS");
  double per = c != NULL && atof(c) > 0 ? atof(c) : 1;
  fprintf(stderr, CALL_PROFILE_TITLE " %-36s %10s %12s %9s %9s %10s %11s  %s\n",
          "function", "calls", "total us", "calls/x", "us/x", "max us",
          "self us/x", "inside");
  for (int i = 0; i < P_COUNT; i++) {
    if (g_calls[i] == 0) continue;
    char inside[96] = "-";
    if (g_inside[i] != 0)
      snprintf(inside, sizeof inside, "%llu, in %s", g_inside[i],
               kNames[g_outer[i]]);
    fprintf(stderr,
            CALL_PROFILE_TITLE
            " %-36s %10llu %12.1f %9.2f %9.3f %10.1f %11.3f  %s\n",
            kNames[i], g_calls[i], g_ns[i] / 1e3, g_calls[i] / per,
            g_ns[i] / 1e3 / per, g_max_ns[i] / 1e3, g_self_ns[i] / 1e3 / per,
            inside);
  }
}
