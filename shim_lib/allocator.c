/* allocator.c: the per-thread device allocator hook and its default. */
#include "shim_lib/allocator.h"

#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdio.h>

#include "shim_lib/block_cache.h"
#include "shim_lib/cuda_context.h"

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

static void release_block(void *ctx, void *ptr, void *stream) {
  (void)ctx;
  (void)cudaFreeAsync(ptr, (cudaStream_t)stream);
}

/* cudaMallocAsync of a rounded size; on failure the cached blocks of this
 * device go back to CUDA and it is tried once more. */
static void *malloc_async(int dev, size_t rounded, void *stream) {
  void *p = NULL;
  cudaError_t e = cudaMallocAsync(&p, rounded, (cudaStream_t)stream);
  if (e != cudaSuccess &&
      aotrun_block_cache_drain(dev, release_block, NULL) > 0) {
    (void)cudaGetLastError();
    /* The freed blocks are reusable once their streams reach the frees. */
    (void)cudaDeviceSynchronize();
    e = cudaMallocAsync(&p, rounded, (cudaStream_t)stream);
  }
  if (e != cudaSuccess) {
    aotrun_shim_fail("cudaMallocAsync(%zu bytes) failed: %s: %s (%d)", rounded,
                     cudaGetErrorName(e), cudaGetErrorString(e), (int)e);
    return NULL;
  }
  return p;
}

static void *default_alloc(void *ctx, size_t bytes, void *stream) {
  (void)ctx;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  size_t rounded = aotrun_block_cache_round(bytes);
  if (rounded == 0) {
    aotrun_shim_fail("cannot allocate %zu bytes: too large", bytes);
    return NULL;
  }
  void *p = aotrun_block_cache_take(dev, stream, rounded);
  if (p != NULL) return p;
  configure_default_pool(dev);
  p = malloc_async(dev, rounded, stream);
  if (p != NULL) (void)aotrun_block_cache_note_live(p, rounded);
  return p;
}

static void default_free(void *ctx, void *ptr, void *stream) {
  (void)ctx;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
  if (aotrun_block_cache_put(dev, stream, ptr)) return;
  cudaError_t e = cudaFreeAsync(ptr, (cudaStream_t)stream);
  if (e != cudaSuccess) {
    /* Frees run in destructors: report, never fail the caller. */
    fprintf(stderr, "aotrun warning: cudaFreeAsync(%p) failed: %s (%d)\n",
            ptr, cudaGetErrorString(e), (int)e);
  }
}

static const aotrun_shim_allocator kDefault = {NULL, default_alloc,
                                               default_free};

static _Thread_local aotrun_shim_allocator tls_allocator;
static _Thread_local int tls_has_allocator;

const aotrun_shim_allocator *aotrun_default_allocator(void) {
  return &kDefault;
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
  size_t n = aotrun_block_cache_drain(device, release_block, NULL);
  (void)cudaDeviceSynchronize();
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
