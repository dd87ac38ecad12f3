/* cublas_handle.c: per-(thread, device) cuBLAS handles and per-(device,
 * stream) workspaces (see cublas_handle.h). */
#include "shim_lib/fallback/cublas_handle.h"

#include <pthread.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/thread_blocks.h"

/* cuBLAS recommends 32 MiB of workspace on Hopper (4 MiB elsewhere). */
#define AOTRUN_FB_CUBLAS_WORKSPACE ((size_t)32 << 20)
#define AOTRUN_FB_MAX_DEVICES 64
/* Streams that get their own workspace; later ones run without one. */
#define AOTRUN_FB_MAX_WORKSPACES 64

/* 1 when `stream` is capturing a CUDA graph (or the query fails: then
 * nothing is allocated either, the safe side). */
static int stream_capturing(cudaStream_t stream) {
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return st != cudaStreamCaptureStatusNone;
}

/* ---- handles: one per (thread, device); cuBLAS handles are not safe to
 * share between threads. A thread's block of them is freed at its exit or
 * by aotrun_fb_cublas_release_all (thread_blocks.h). ---- */

typedef struct thread_blas {
  cublasHandle_t h;
  cublasLtHandle_t lt;
} thread_blas;

static void destroy_handles(void *p) {
  thread_blas *handles = (thread_blas *)p;
  /* Handles exist only once cuBLAS was loaded. */
  const aotrun_fb_cublas_api *blas = aotrun_fb_cublas();
  if (blas == NULL) return;
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  for (int d = 0; d < AOTRUN_FB_MAX_DEVICES; d++) {
    if (handles[d].h == NULL && handles[d].lt == NULL) continue;
    if (cudaSetDevice(d) != cudaSuccess) continue;
    if (handles[d].h) blas->cublasDestroy(handles[d].h);
    if (handles[d].lt) blas->cublasLtDestroy(handles[d].lt);
  }
  if (have_previous) cudaSetDevice(previous);
}

static aotrun_fb_thread_blocks g_blas = AOTRUN_FB_THREAD_BLOCKS_INIT(
    AOTRUN_FB_MAX_DEVICES * sizeof(thread_blas), destroy_handles);
static _Thread_local aotrun_fb_thread_ticket *tls_blas;

static thread_blas *thread_handles(void) {
  return aotrun_fb_thread_block(&g_blas, &tls_blas);
}

static AOTITorchError thread_handle(const char *op,
                                    const aotrun_fb_cublas_api *blas,
                                    int32_t device, cudaStream_t stream,
                                    cublasHandle_t *out) {
  thread_blas *handles = thread_handles();
  if (handles == NULL)
    return aotrun_shim_fail("%s: out of host memory for the cuBLAS handles",
                            op);
  if (handles[device].h == NULL) {
    if (stream_capturing(stream))
      return aotrun_shim_fail(
          "%s: the first cuBLAS call of this thread on cuda:%d is inside a "
          "CUDA graph capture (creating the handle allocates device memory); "
          "run the op once on this thread before capturing",
          op, (int)device);
    cublasStatus_t st = blas->cublasCreate(&handles[device].h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      handles[device].h = NULL;
      return aotrun_shim_fail("%s: cublasCreate on cuda:%d failed: %s", op,
                              (int)device, blas->cublasGetStatusString(st));
    }
    /* Full-precision float32 like eager torch (no TF32 tensor-op math). */
    blas->cublasSetMathMode(handles[device].h, CUBLAS_DEFAULT_MATH);
  }
  *out = handles[device].h;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError thread_lt_handle(const char *op,
                                       const aotrun_fb_cublas_api *blas,
                                       int32_t device, cudaStream_t stream,
                                       cublasLtHandle_t *out) {
  thread_blas *handles = thread_handles();
  if (handles == NULL)
    return aotrun_shim_fail("%s: out of host memory for the cuBLAS handles",
                            op);
  if (handles[device].lt == NULL) {
    if (stream_capturing(stream))
      return aotrun_shim_fail(
          "%s: the first cuBLASLt call of this thread on cuda:%d is inside a "
          "CUDA graph capture (creating the handle allocates device memory); "
          "run the op once on this thread before capturing",
          op, (int)device);
    cublasStatus_t st = blas->cublasLtCreate(&handles[device].lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
      handles[device].lt = NULL;
      return aotrun_shim_fail("%s: cublasLtCreate on cuda:%d failed: %s", op,
                              (int)device, blas->cublasGetStatusString(st));
    }
  }
  *out = handles[device].lt;
  return AOTI_TORCH_SUCCESS;
}

/* ---- workspaces: one per (device, stream), shared by all threads. Work on
 * one stream runs in order, so GEMMs from several threads on the same
 * stream never use a workspace at the same time, while GEMMs on different
 * streams (several methods run by one thread) each get their own. Allocated
 * once with cudaMalloc and kept until aotrun_fb_cublas_release_all. ---- */

typedef struct workspace {
  int32_t device;
  cudaStream_t stream;
  void *ptr;
} workspace;

static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static workspace ws_table[AOTRUN_FB_MAX_WORKSPACES];
static int ws_count;

/* *ptr = the stream's workspace, or NULL (run without one). The workspace
 * of a stream is allocated at its first GEMM outside a capture. A stream
 * first seen inside a capture gets none (cuBLAS / cuBLASLt with workspace
 * size 0: other kernels, same results up to rounding, never an allocation
 * inside the capture) and is not recorded, so its next GEMM outside a
 * capture allocates it. A full table also means none. Fails only when
 * cudaMalloc does. */
static AOTITorchError stream_workspace(const char *op, int32_t device,
                                       cudaStream_t stream, void **ptr) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  *ptr = NULL;
  pthread_mutex_lock(&ws_lock);
  for (int i = 0; i < ws_count; i++) {
    if (ws_table[i].device == device && ws_table[i].stream == stream) {
      *ptr = ws_table[i].ptr;
      pthread_mutex_unlock(&ws_lock);
      return AOTI_TORCH_SUCCESS;
    }
  }
  if (ws_count < AOTRUN_FB_MAX_WORKSPACES && !stream_capturing(stream)) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, AOTRUN_FB_CUBLAS_WORKSPACE);
    if (e == cudaSuccess) {
      ws_table[ws_count++] = (workspace){device, stream, p};
      *ptr = p;
    } else {
      (void)cudaGetLastError();
      err = aotrun_shim_fail(
          "%s: cannot allocate the %zu-byte cuBLAS workspace on cuda:%d: %s",
          op, AOTRUN_FB_CUBLAS_WORKSPACE, (int)device, cudaGetErrorString(e));
    }
  }
  pthread_mutex_unlock(&ws_lock);
  return err;
}

AOTITorchError aotrun_fb_cublas_acquire(const char *op, int32_t device,
                                        cudaStream_t stream,
                                        const aotrun_fb_cublas_api **api,
                                        cublasHandle_t *handle) {
  if (device < 0 || device >= AOTRUN_FB_MAX_DEVICES)
    return aotrun_shim_fail("%s: device index %d is outside 0..%d", op,
                            (int)device, AOTRUN_FB_MAX_DEVICES - 1);
  const aotrun_fb_cublas_api *blas = NULL;
  cublasHandle_t h = NULL;
  void *ws = NULL;
  AOTITorchError err = aotrun_fb_cublas_load(op, &blas);
  if (!err) err = thread_handle(op, blas, device, stream, &h);
  if (!err) err = stream_workspace(op, device, stream, &ws);
  if (err) return err;
  /* cublasSetStream resets the workspace to cuBLAS's own pool, so ours is
   * set again after it on every call. A NULL/0 workspace makes cuBLAS use
   * none (slower algorithms, still no allocation during a capture). */
  cublasStatus_t st = blas->cublasSetStream(h, stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = blas->cublasSetWorkspace(h, ws, ws ? AOTRUN_FB_CUBLAS_WORKSPACE : 0);
  if (st != CUBLAS_STATUS_SUCCESS)
    return aotrun_shim_fail(
        "%s: cannot bind the cuBLAS handle to the stream: %s", op,
        blas->cublasGetStatusString(st));
  *api = blas;
  *handle = h;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_cublaslt_acquire(const char *op, int32_t device,
                                          cudaStream_t stream,
                                          const aotrun_fb_cublas_api **api,
                                          cublasLtHandle_t *handle,
                                          void **workspace,
                                          size_t *workspace_bytes) {
  if (device < 0 || device >= AOTRUN_FB_MAX_DEVICES)
    return aotrun_shim_fail("%s: device index %d is outside 0..%d", op,
                            (int)device, AOTRUN_FB_MAX_DEVICES - 1);
  const aotrun_fb_cublas_api *blas = NULL;
  void *ws = NULL;
  AOTITorchError err = aotrun_fb_cublas_load(op, &blas);
  if (!err) err = thread_lt_handle(op, blas, device, stream, handle);
  if (!err) err = stream_workspace(op, device, stream, &ws);
  if (err) return err;
  *api = blas;
  *workspace = ws;
  *workspace_bytes = ws ? AOTRUN_FB_CUBLAS_WORKSPACE : 0;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_device_enter(const char *op, int32_t device,
                                      aotrun_fb_device_scope *scope) {
  scope->changed = 0;
  cudaError_t e = cudaGetDevice(&scope->previous);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: cudaGetDevice failed: %s", op,
                            cudaGetErrorString(e));
  if (scope->previous == device) return AOTI_TORCH_SUCCESS;
  e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: cudaSetDevice(%d) failed: %s", op,
                            (int)device, cudaGetErrorString(e));
  scope->changed = 1;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_device_leave(aotrun_fb_device_scope *scope) {
  if (scope->changed) cudaSetDevice(scope->previous);
  scope->changed = 0;
}

void aotrun_fb_cublas_release_all(void) {
  /* Handles first: a handle may still point at a workspace. */
  aotrun_fb_thread_blocks_release(&g_blas);
  pthread_mutex_lock(&ws_lock);
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  for (int i = 0; i < ws_count; i++) {
    if (cudaSetDevice(ws_table[i].device) == cudaSuccess)
      (void)cudaFree(ws_table[i].ptr); /* waits for the GEMMs using it */
  }
  ws_count = 0;
  if (have_previous) cudaSetDevice(previous);
  (void)cudaGetLastError();
  pthread_mutex_unlock(&ws_lock);
}

size_t aotrun_fb_cublas_threads(void) {
  return aotrun_fb_thread_blocks_count(&g_blas);
}

int aotrun_fb_cublas_workspaces(void) {
  pthread_mutex_lock(&ws_lock);
  int n = ws_count;
  pthread_mutex_unlock(&ws_lock);
  return n;
}
