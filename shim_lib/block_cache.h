/*
 * block_cache.h: the default device allocator's cache of freed blocks.
 *
 * A model run allocates and frees the same intermediate buffers on every
 * call; cudaMallocAsync + cudaFreeAsync cost about a microsecond of API
 * time each. Freed blocks are kept here, keyed by (device, stream, rounded
 * size), and handed back to the next request of that size on that stream:
 * stream order makes the reuse safe without events, exactly as
 * cudaFreeAsync's own pool does, but without an API call.
 *
 * Bounded: at most the byte limit (AOTRUN_ALLOC_CACHE_BYTES, default
 * 2 GiB per process; 0 turns the cache off) is held; a free that would
 * exceed it goes to cudaFreeAsync. When cudaMallocAsync fails, the device's
 * cached blocks are returned and the allocation is tried once more.
 * Not for use inside a CUDA graph capture: the CUDA backend installs its
 * per-graph pool as the thread allocator while it captures.
 */
#ifndef AOTRUN_SHIM_BLOCK_CACHE_H
#define AOTRUN_SHIM_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Rounded size a request of `bytes` is served with (0: too large). */
size_t aotrun_block_cache_round(size_t bytes);

/* A cached block of exactly `rounded` bytes freed on (device, stream), or
 * NULL. A block handed out is remembered as live with its size. */
void *aotrun_block_cache_take(int device, void *stream, size_t rounded);

/* Remembers a block the allocator got from CUDA as live (0: out of host
 * memory; the block then is simply never cached). */
int aotrun_block_cache_note_live(void *ptr, size_t rounded);

/* Takes back a live block freed on (device, stream): 1 when kept, 0 when
 * the caller must free it (unknown pointer, cache off or full). */
int aotrun_block_cache_put(int device, void *stream, void *ptr);

/* Hands every cached block of `device` (-1: all devices) to release(ctx,
 * device, ptr) and forgets them. Not the stream a block was freed on: that
 * stream may be destroyed by now (a method's own at its destroy, a
 * caller's after execute_ex). Returns the bytes released. */
size_t aotrun_block_cache_drain(int device,
                                void (*release)(void *ctx, int device,
                                                void *ptr),
                                void *ctx);

/* Hands every cached block to release(ctx, device, ptr) (not its stream:
 * the streams of the bins may be destroyed by now), then forgets every bin
 * and the recycled bookkeeping: the cache is as in a new process, except
 * for blocks still live (taken back as usual when freed). Returns the
 * bytes released. */
size_t aotrun_block_cache_reset(void (*release)(void *ctx, int device,
                                                void *ptr),
                                void *ctx);

/* Bytes held in the cache now, and requests it served (for tests and
 * reports). */
size_t aotrun_block_cache_bytes(void);
uint64_t aotrun_block_cache_hits(void);

/* The byte limit (read from AOTRUN_ALLOC_CACHE_BYTES on first use);
 * tests may set it. */
size_t aotrun_block_cache_limit(void);
void aotrun_block_cache_set_limit(size_t bytes);

#endif /* AOTRUN_SHIM_BLOCK_CACHE_H */
