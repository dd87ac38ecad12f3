/*
 * aotrun_shim.h: the aoti_torch_* C ABI that AOTInductor-compiled model
 * libraries call, as implemented by libaotrun_shim.so, plus the few aotrun_shim_*
 * functions the rest of aotrun uses (error text, allocator hooks).
 *
 * Declarations are our own, written to match the ABI of torch 2.11's
 * torch/csrc/inductor/aoti_torch/c/shim.h (codes in ../shared/DESIGN.md §2.3).
 */
#ifndef AOTRUN_SHIM_H
#define AOTRUN_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AOTRUN_SHIM_API __attribute__((visibility("default")))
#else
#define AOTRUN_SHIM_API
#endif

typedef int32_t AOTITorchError;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

/* A handle is one reference to a tensor (see DESIGN.md §2.4). */
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque *AtenTensorHandle;

struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque *CUDAStreamGuardHandle;

/* ---- aotrun_shim_*: used by aotrun's own code, not by models ---- */

/* The calling thread's current CUDA stream (a cudaStream_t; NULL is the
 * legacy default stream) and device, as set by the stream/device guards. */
AOTRUN_SHIM_API void *aotrun_shim_current_stream(void);
AOTRUN_SHIM_API int32_t aotrun_shim_current_device(void);

/* Records a printf-style thread-local error message and returns
 * AOTI_TORCH_FAILURE; every aoti_torch_* function that fails calls it. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* The calling thread's last shim error message ("" when none). */
AOTRUN_SHIM_API const char *aotrun_shim_last_error(void);
AOTRUN_SHIM_API void aotrun_shim_clear_error(void);

/* Returns AOTI_TORCH_SUCCESS when the current stream is not capturing a CUDA
 * graph; otherwise records "<what> cannot run inside a CUDA graph capture"
 * and returns AOTI_TORCH_FAILURE. Shims that read device data on the host
 * (item_*, mask index, nonzero) call it first. */
AOTRUN_SHIM_API AOTITorchError aotrun_shim_refuse_if_capturing(
    const char *what);

/* Device allocator hook: where CUDA tensors created by the shims get memory.
 * The default is cudaMallocAsync/cudaFreeAsync on the current stream. The
 * CUDA backend installs a per-graph pool while capturing. Both functions get
 * the current stream. alloc returns NULL on failure. */
typedef struct aotrun_shim_allocator {
  void *ctx;
  void *(*alloc)(void *ctx, size_t bytes, void *stream);
  void (*free)(void *ctx, void *ptr, void *stream);
} aotrun_shim_allocator;

/* Installs *a for the calling thread (copied); NULL restores the default.
 * Memory is freed through the allocator that allocated it (the tensor's
 * storage remembers it), so switching while tensors live is safe. */
AOTRUN_SHIM_API void aotrun_shim_set_thread_allocator(
    const aotrun_shim_allocator *a);

/* The rest of the ABI (every aoti_torch_* function) is declared below. */

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_H */
