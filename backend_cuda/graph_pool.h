/*
 * graph_pool.h: the per-graph memory pool. While a method is captured into
 * a CUDA graph, the tensors the model allocates come from this pool (it is
 * installed as the thread's shim allocator) instead of cudaMallocAsync,
 * whose graph memory nodes cost ~2 us per replay. The pool lives as long as
 * the graph: the addresses baked into the graph stay valid for every replay,
 * and release() frees it all at once.
 *
 * Blocks are carved from chunks (raw.alloc, cudaMalloc in the backend); a
 * block freed during the capture is reused by a later request of the same
 * rounded size, which is safe because the captured work runs in stream
 * order. Nothing is returned to the device before destroy.
 */
#ifndef AOTRUN_GRAPH_POOL_H
#define AOTRUN_GRAPH_POOL_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "shim_lib/aotrun_shim.h"

/* Where chunks come from. alloc returns NULL on failure. */
typedef struct aotrun_pool_raw_ops {
  void *ctx;
  void *(*alloc)(void *ctx, size_t bytes);
  void (*free)(void *ctx, void *ptr);
} aotrun_pool_raw_ops;

#define AOTRUN_GRAPH_POOL_ALIGNMENT 256
#define AOTRUN_GRAPH_POOL_CHUNK (2u << 20) /* smallest chunk: 2 MiB */

typedef struct aotrun_graph_pool aotrun_graph_pool;

aotrun_status aotrun_graph_pool_create(const aotrun_pool_raw_ops *raw,
                                       aotrun_graph_pool **out,
                                       aotrun_error *err);
/* Frees every chunk. Accepts NULL. */
void aotrun_graph_pool_destroy(aotrun_graph_pool *pool);

/* The shim allocator over this pool (ctx = pool). */
aotrun_shim_allocator aotrun_graph_pool_allocator(aotrun_graph_pool *pool);

/* Makes room for `bytes` (at least one chunk) now, so the capture that
 * follows allocates nothing from the device while it records (cudaMalloc
 * inside a capture, allowed in relaxed mode, is where compute-sanitizer's
 * synccheck died on device-I/O replays: docs/reliability.md). */
aotrun_status aotrun_graph_pool_reserve(aotrun_graph_pool *pool, size_t bytes,
                                        aotrun_error *err);

/* Direct use (the allocator calls these). */
void *aotrun_graph_pool_alloc(aotrun_graph_pool *pool, size_t bytes);
void aotrun_graph_pool_free(aotrun_graph_pool *pool, void *ptr);

/* Bytes reserved from the device, and blocks currently in use. */
size_t aotrun_graph_pool_reserved(const aotrun_graph_pool *pool);
size_t aotrun_graph_pool_in_use(const aotrun_graph_pool *pool);

#endif /* AOTRUN_GRAPH_POOL_H */
