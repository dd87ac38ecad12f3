/* allocator.c: the per-thread device allocator hook and its default. */
#include "shim_lib/allocator.h"

#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdio.h>

#include "shim_lib/block_cache.h"
#include "shim_lib/cuda_context.h"
#include "shim_lib/shim_release.h"

/* One flag per device: the default pool was configured. */
static atomic_int g_pool_configured[AOTRUN_SHIM_MAX_DEVICES];

static void configure_default_pool(int dev) {
  if (dev < 0 || dev >= AOTRUN_SHIM_MAX_DEVICES) return;
  if (atomic_exchange(&g_pool_configured[dev], 1)) return;
  /* With the default threshold (0) every synchronize hands freed memory
   * back to the driver and the next step maps it again (libtorch's
   * cudaMallocAsync backend does the same). */
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) return;
  uint64_t threshold = UINT64_MAX;
  (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                &threshold);
}

/* Frees a cached block on its device's legacy stream, never on the stream
 * it was freed on: that one may be destroyed by now (a method's own at its
 * destroy, a caller's after execute_ex; freeing on it crashed the fault
 * sweep on the H200). Callers synchronise the device first, which orders
 * the free after the block's last use on whatever stream that was. */
static void release_block_legacy(void *ctx, int device, void *ptr) {
  (void)ctx;
  if (cudaSetDevice(device) == cudaSuccess)
    (void)cudaFreeAsync(ptr, (cudaStream_t)0);
}

/* Waits for `device` (-1: every configured device); the current device is
 * kept. */
static void synchronize_devices(int device) {
  int count = 0, previous = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess ||
      cudaGetDevice(&previous) != cudaSuccess)
    return;
  for (int d = 0; d < count && d < AOTRUN_SHIM_MAX_DEVICES; d++)
    if ((device < 0 || d == device) && atomic_load(&g_pool_configured[d]) &&
        cudaSetDevice(d) == cudaSuccess)
      (void)cudaDeviceSynchronize();
  (void)cudaSetDevice(previous);
}

/* Hands the cached blocks of `device` (-1: all) back to CUDA, after their
 * last use and before returning (the pool can reuse or trim them then).
 * Returns the bytes. */
static size_t drain_blocks(int device) {
  synchronize_devices(device);
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  size_t n = aotrun_block_cache_drain(device, release_block_legacy, NULL);
  if (have_previous) (void)cudaSetDevice(previous);
  if (n > 0) synchronize_devices(device);
  return n;
}

/* A capture must not synchronise the device (that ends the capture), nor
 * free cached blocks on its stream (frees would become graph nodes). */
static int capturing(void *stream) {
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing((cudaStream_t)stream, &st) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return st != cudaStreamCaptureStatusNone;
}

/* cudaMallocAsync of a rounded size; on failure the cached blocks of this
 * device go back to CUDA and it is tried once more. */
static void *malloc_async(int dev, size_t rounded, void *stream) {
  void *p = NULL;
  cudaError_t e = cudaMallocAsync(&p, rounded, (cudaStream_t)stream);
  if (e != cudaSuccess && !capturing(stream)) {
    (void)cudaGetLastError();
    if (drain_blocks(dev) > 0)
      e = cudaMallocAsync(&p, rounded, (cudaStream_t)stream);
  }
  if (e != cudaSuccess) {
    aotrun_shim_fail("cudaMallocAsync(%zu bytes) failed: %s: %s (%d)", rounded,
                     cudaGetErrorName(e), cudaGetErrorString(e), (int)e);
    return NULL;
  }
  return p;
}

/* A miss makes `dev` current for cudaMallocAsync (a stream's allocations
 * come from its device's pool) and restores the caller's device. */
static void *alloc_miss(int dev, size_t rounded, void *stream) {
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter("the device allocator", dev, &scope))
    return NULL;
  configure_default_pool(dev);
  void *p = malloc_async(dev, rounded, stream);
  if (p != NULL) (void)aotrun_block_cache_note_live(p, rounded);
  aotrun_cuda_device_exit(&scope);
  return p;
}

void *aotrun_default_alloc_on(int dev, size_t bytes, void *stream) {
  size_t rounded = aotrun_block_cache_round(bytes);
  if (rounded == 0) {
    aotrun_shim_fail("cannot allocate %zu bytes: too large", bytes);
    return NULL;
  }
  /* A cached block needs no CUDA call at all (not even cudaGetDevice). */
  void *p = aotrun_block_cache_take(dev, stream, rounded);
  return p != NULL ? p : alloc_miss(dev, rounded, stream);
}

void aotrun_default_free_on(int dev, void *ptr, void *stream) {
  if (aotrun_block_cache_put(dev, stream, ptr)) return;
  aotrun_device_scope scope;
  int entered = aotrun_cuda_device_enter("aoti_torch_delete_tensor_object",
                                         dev, &scope) == 0;
  cudaError_t e = cudaFreeAsync(ptr, (cudaStream_t)stream);
  if (entered) aotrun_cuda_device_exit(&scope);
  if (e != cudaSuccess) {
    /* Frees run in destructors: report, never fail the caller. */
    fprintf(stderr, "aotrun warning: cudaFreeAsync(%p) failed: %s (%d)\n",
            ptr, cudaGetErrorString(e), (int)e);
  }
}

/* Through the public hook (a caller holding the table): on the current
 * device. The shim's own storage calls the _on forms with its device. */
static void *default_alloc(void *ctx, size_t bytes, void *stream) {
  (void)ctx;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  return aotrun_default_alloc_on(dev, bytes, stream);
}

static void default_free(void *ctx, void *ptr, void *stream) {
  (void)ctx;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  aotrun_default_free_on(dev, ptr, stream);
}

static const aotrun_shim_allocator kDefault = {NULL, default_alloc,
                                               default_free};

static _Thread_local aotrun_shim_allocator tls_allocator;
static _Thread_local int tls_has_allocator;

const aotrun_shim_allocator *aotrun_default_allocator(void) {
  return &kDefault;
}

int aotrun_is_default_allocator(const aotrun_shim_allocator *a) {
  return a->alloc == default_alloc && a->free == default_free;
}

const aotrun_shim_allocator *aotrun_thread_allocator(void) {
  return tls_has_allocator ? &tls_allocator : &kDefault;
}

void aotrun_shim_set_thread_allocator(const aotrun_shim_allocator *a) {
  if (a && a->alloc && a->free) {
    tls_allocator = *a;
    tls_has_allocator = 1;
  } else {
    tls_has_allocator = 0;
  }
}

size_t aotrun_shim_release_cached_memory(int32_t device) {
  size_t n = drain_blocks(device);
  for (int d = 0; d < AOTRUN_SHIM_MAX_DEVICES; d++) {
    cudaMemPool_t pool;
    if ((device >= 0 && d != device) || !atomic_load(&g_pool_configured[d]) ||
        cudaDeviceGetDefaultMemPool(&pool, d) != cudaSuccess)
      continue;
    (void)cudaMemPoolTrimTo(pool, 0);
  }
  (void)cudaGetLastError();
  return n;
}

size_t aotrun_allocator_release_all(void) {
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  synchronize_devices(-1);
  size_t n = aotrun_block_cache_reset(release_block_legacy, NULL);
  if (have_previous) (void)cudaSetDevice(previous);
  /* Waits for those frees and trims every configured pool. */
  synchronize_devices(-1);
  (void)aotrun_shim_release_cached_memory(-1);
  (void)cudaGetLastError();
  return n;
}
