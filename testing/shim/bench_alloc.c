/* bench_alloc: many small stream-ordered allocations, as a model run makes
 * them: cudaMallocAsync (default pool threshold, then an unbounded one)
 * against a simple stream-aware pool, raw and through the shim's
 * empty_strided/delete with the pool installed as the allocator hook.
 * Usage: bench_alloc [iterations] (default 20000). Needs a GPU. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shim_lib/aotrun_shim.h"

/* ---- a simple stream-aware pool: size classes of powers of two; a freed
 * block is reused only by the stream that freed it (stream order makes
 * that safe without events). ---- */
#define POOL_CLASSES 40
typedef struct block {
  struct block *next;
  void *ptr;
  void *stream;
} block;
typedef struct pool {
  block *free_list[POOL_CLASSES];
  block *meta_free; /* spare list nodes */
  struct live { void *ptr; int cls; } *live;
  size_t nlive, cap;
  int mallocs;
} pool;

static int size_class(size_t bytes) {
  int c = 8; /* 256 B minimum */
  while (((size_t)1 << c) < bytes) c++;
  return c;
}

static void *pool_alloc(void *ctx, size_t bytes, void *stream) {
  pool *p = ctx;
  int c = size_class(bytes);
  block **pp = &p->free_list[c];
  for (block *b = *pp; b; pp = &b->next, b = b->next) {
    if (b->stream != stream) continue;
    *pp = b->next;
    void *ptr = b->ptr;
    b->next = p->meta_free;
    p->meta_free = b;
    if (p->nlive == p->cap) {
      p->cap = p->cap ? 2 * p->cap : 64;
      p->live = realloc(p->live, p->cap * sizeof *p->live);
    }
    p->live[p->nlive].ptr = ptr;
    p->live[p->nlive++].cls = c;
    return ptr;
  }
  void *ptr = NULL;
  if (cudaMalloc(&ptr, (size_t)1 << c) != cudaSuccess) return NULL;
  p->mallocs++;
  if (p->nlive == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 64;
    p->live = realloc(p->live, p->cap * sizeof *p->live);
  }
  p->live[p->nlive].ptr = ptr;
  p->live[p->nlive++].cls = c;
  return ptr;
}

static void pool_free(void *ctx, void *ptr, void *stream) {
  pool *p = ctx;
  for (size_t i = p->nlive; i-- > 0;) {
    if (p->live[i].ptr != ptr) continue;
    int c = p->live[i].cls;
    p->live[i] = p->live[--p->nlive];
    block *b = p->meta_free;
    if (b) p->meta_free = b->next;
    else b = malloc(sizeof *b);
    b->ptr = ptr;
    b->stream = stream;
    b->next = p->free_list[c];
    p->free_list[c] = b;
    return;
  }
}

static void pool_destroy(pool *p) {
  for (int c = 0; c < POOL_CLASSES; c++)
    for (block *b = p->free_list[c], *n; b; b = n) {
      n = b->next;
      cudaFree(b->ptr);
      free(b);
    }
  for (block *b = p->meta_free, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  free(p->live);
}

/* ---- the workload ---- */
#define PER_RUN 8
static const size_t kSizes[PER_RUN] = {256, 1024, 4096, 512, 65536, 2048, 16384, 768};

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

typedef void *(*alloc_fn)(void *, size_t, void *);
typedef void (*free_fn)(void *, void *, void *);

static void *async_alloc(void *ctx, size_t n, void *s) {
  (void)ctx;
  void *p = NULL;
  return cudaMallocAsync(&p, n, (cudaStream_t)s) == cudaSuccess ? p : NULL;
}
static void async_free(void *ctx, void *p, void *s) {
  (void)ctx;
  cudaFreeAsync(p, (cudaStream_t)s);
}

/* One "run": allocate PER_RUN buffers, touch each with a memset on the
 * stream, free them (still queued), synchronize. Returns us per run. */
static double bench_raw(const char *name, alloc_fn a, free_fn f, void *ctx,
                        cudaStream_t s, int iters) {
  void *ptrs[PER_RUN];
  double t0 = 0;
  for (int it = -100; it < iters; it++) { /* 100 warm-up runs */
    if (it == 0) t0 = now_us();
    for (int k = 0; k < PER_RUN; k++) {
      ptrs[k] = a(ctx, kSizes[k], s);
      if (!ptrs[k]) {
        fprintf(stderr, "%s: allocation failed\n", name);
        exit(1);
      }
      cudaMemsetAsync(ptrs[k], 0, kSizes[k], s);
    }
    for (int k = 0; k < PER_RUN; k++) f(ctx, ptrs[k], s);
    cudaStreamSynchronize(s);
  }
  double us = (now_us() - t0) / iters;
  printf("%-44s %8.2f us/run  %6.3f us/alloc+free\n", name, us, us / PER_RUN);
  return us;
}

static double bench_shim(const char *name, cudaStream_t s, int iters) {
  CUDAStreamGuardHandle g;
  if (aoti_torch_create_cuda_stream_guard(s, 0, &g)) {
    fprintf(stderr, "%s: %s\n", name, aotrun_shim_last_error());
    exit(1);
  }
  AtenTensorHandle t[PER_RUN];
  double t0 = 0;
  for (int it = -100; it < iters; it++) {
    if (it == 0) t0 = now_us();
    for (int k = 0; k < PER_RUN; k++) {
      int64_t n = (int64_t)kSizes[k] / 4, one = 1;
      if (aoti_torch_empty_strided(1, &n, &one, 6, 1, 0, &t[k])) {
        fprintf(stderr, "%s: %s\n", name, aotrun_shim_last_error());
        exit(1);
      }
      aoti_torch_zero_(t[k]);
    }
    for (int k = 0; k < PER_RUN; k++) aoti_torch_delete_tensor_object(t[k]);
    cudaStreamSynchronize(s);
  }
  double us = (now_us() - t0) / iters;
  aoti_torch_delete_cuda_stream_guard(g);
  printf("%-44s %8.2f us/run  %6.3f us/alloc+free\n", name, us, us / PER_RUN);
  return us;
}

static void set_threshold(uint64_t v) {
  cudaMemPool_t mp;
  cudaDeviceGetDefaultMemPool(&mp, 0);
  cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &v);
  cudaMemPoolTrimTo(mp, 0);
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    printf("bench_alloc: no GPU (%s); nothing measured\n", cudaGetErrorString(e));
    return 0;
  }
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  printf("bench_alloc: %d runs of %d allocations (256 B..64 KiB) + memset + free + sync\n",
         iters, PER_RUN);
  /* Floor: the same memsets into preallocated buffers. */
  void *pre[PER_RUN];
  for (int k = 0; k < PER_RUN; k++) cudaMalloc(&pre[k], kSizes[k]);
  double t0 = now_us();
  for (int it = 0; it < iters; it++) {
    for (int k = 0; k < PER_RUN; k++) cudaMemsetAsync(pre[k], 0, kSizes[k], s);
    cudaStreamSynchronize(s);
  }
  printf("%-44s %8.2f us/run\n", "floor: memsets only (no allocation)", (now_us() - t0) / iters);
  for (int k = 0; k < PER_RUN; k++) cudaFree(pre[k]);

  set_threshold(0);
  bench_raw("cudaMallocAsync, release threshold 0", async_alloc, async_free, NULL, s, iters);
  set_threshold(UINT64_MAX);
  bench_raw("cudaMallocAsync, release threshold max", async_alloc, async_free, NULL, s, iters);
  pool p = {0};
  bench_raw("stream-aware pool", pool_alloc, pool_free, &p, s, iters);
  printf("  (pool made %d cudaMalloc calls)\n", p.mallocs);
  bench_shim("shim empty_strided/delete, default allocator", s, iters);
  aotrun_shim_allocator hook = {&p, pool_alloc, pool_free};
  aotrun_shim_set_thread_allocator(&hook);
  bench_shim("shim empty_strided/delete, pool hook", s, iters);
  aotrun_shim_set_thread_allocator(NULL);
  cudaStreamSynchronize(s);
  pool_destroy(&p);
  cudaStreamDestroy(s);
  return 0;
}
