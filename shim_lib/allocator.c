/* allocator.c: the per-thread device allocator hook and its default. */
#include "shim_lib/allocator.h"

#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdio.h>

#include "shim_lib/cuda_context.h"

/* One flag per device: the default pool was configured. */
static atomic_int g_pool_configured[AOTRUN_SHIM_MAX_DEVICES];

static void configure_default_pool(void) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 ||
      dev >= AOTRUN_SHIM_MAX_DEVICES)
    return;
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

static void *default_alloc(void *ctx, size_t bytes, void *stream) {
  (void)ctx;
  configure_default_pool();
  void *p = NULL;
  cudaError_t e = cudaMallocAsync(&p, bytes, (cudaStream_t)stream);
  if (e != cudaSuccess) {
    aotrun_shim_fail("cudaMallocAsync(%zu bytes) failed: %s: %s (%d)", bytes,
                     cudaGetErrorName(e), cudaGetErrorString(e), (int)e);
    return NULL;
  }
  return p;
}

static void default_free(void *ctx, void *ptr, void *stream) {
  (void)ctx;
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
