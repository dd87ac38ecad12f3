/*
 * cublas_handle.h: one cuBLAS and one cuBLASLt handle per (thread, device),
 * created lazily and kept for the thread's life, and one preallocated
 * workspace per (device, stream), so GEMMs queued during a CUDA graph
 * capture never make cuBLAS allocate and GEMMs on different streams never
 * share scratch memory.
 *
 * Nothing is allocated inside a capture (checked with cudaStreamIsCapturing
 * whenever a handle or a workspace is missing):
 * - a stream's workspace is allocated at its first GEMM outside a capture;
 *   a stream first seen inside a capture runs its GEMMs without a workspace
 *   (cuBLAS / cuBLASLt with size 0: possibly other kernels, results equal
 *   up to rounding) and gets its workspace at its next GEMM outside one;
 * - a thread's handles are created at its first GEMM outside a capture; a
 *   thread whose first GEMM is inside a capture gets an error that says so
 *   (cublasCreate allocates device memory).
 */
#ifndef AOTRUN_FALLBACK_CUBLAS_HANDLE_H
#define AOTRUN_FALLBACK_CUBLAS_HANDLE_H

#include <cublasLt.h>
#include <cublas_v2.h>

#include "shim_lib/fallback/cublas_api.h"
#include "shim_lib/fallback/fallback_tensor.h"

/* Returns the calling thread's handle for `device` (which must be the
 * current CUDA device), bound to `stream` and to its workspace, and the
 * cuBLAS functions to call it with (loaded at the first acquire,
 * cublas_api.h). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_cublas_acquire(
    const char *op, int32_t device, cudaStream_t stream,
    const aotrun_fb_cublas_api **blas, cublasHandle_t *handle);

/* The calling thread's cuBLASLt handle for `device` and the workspace of
 * (device, stream) (shared with the cuBLAS handle: work on one stream runs
 * in order). *workspace may be NULL (then *workspace_bytes is 0). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_cublaslt_acquire(
    const char *op, int32_t device, cudaStream_t stream,
    const aotrun_fb_cublas_api **blas, cublasLtHandle_t *handle,
    void **workspace, size_t *workspace_bytes);

/* Device switching for the duration of one op: makes `device` current and
 * remembers the previous one. */
typedef struct aotrun_fb_device_scope {
  int previous;
  int changed;
} aotrun_fb_device_scope;

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_device_enter(
    const char *op, int32_t device, aotrun_fb_device_scope *scope);
AOTRUN_FB_HIDDEN void aotrun_fb_device_leave(aotrun_fb_device_scope *scope);

/* Destroys the cuBLAS / cuBLASLt handles of every thread and frees every
 * stream's workspace (aotrun_shim_release_process_state): only while no
 * GEMM runs or is queued in any thread. The next GEMM makes them again. */
AOTRUN_FB_HIDDEN void aotrun_fb_cublas_release_all(void);
/* Threads holding handles, and workspaces held (tests). */
AOTRUN_FB_HIDDEN size_t aotrun_fb_cublas_threads(void);
AOTRUN_FB_HIDDEN int aotrun_fb_cublas_workspaces(void);

#endif /* AOTRUN_FALLBACK_CUBLAS_HANDLE_H */
