/*
 * thread_blocks.h: per-thread blocks of library handles (cuBLAS, cuDNN:
 * a handle must not be used by two threads at once) that are freed when
 * their thread exits, or all at once by aotrun_fb_thread_blocks_release
 * (aotrun_shim_release_process_state, a backend's deinit).
 *
 * Each thread that asks gets a ticket (its pthread key value, freed at the
 * thread's exit) pointing to its block; release frees every block and
 * leaves the tickets empty, so a thread's next call makes a new block and
 * its exit frees only what it still has.
 */
#ifndef AOTRUN_FALLBACK_THREAD_BLOCKS_H
#define AOTRUN_FALLBACK_THREAD_BLOCKS_H

#include <pthread.h>
#include <stddef.h>

#include "shim_lib/fallback/fallback_limits.h"

typedef struct aotrun_fb_thread_ticket aotrun_fb_thread_ticket;

typedef struct aotrun_fb_thread_blocks {
  pthread_mutex_t lock;
  int key_state; /* 0: not made, 1: made, -1: failed */
  pthread_key_t key;
  size_t block_size;                /* bytes, zeroed when made */
  void (*release)(void *block);     /* frees the handles in a block */
  aotrun_fb_thread_ticket *tickets; /* threads that hold a block */
} aotrun_fb_thread_blocks;

#define AOTRUN_FB_THREAD_BLOCKS_INIT(size, release_fn) \
  { PTHREAD_MUTEX_INITIALIZER, 0, 0, (size), (release_fn), NULL }

/* The calling thread's block (zeroed when new), or NULL when out of host
 * memory. `tls` is the caller's _Thread_local ticket pointer. Concurrent
 * calls from different threads are safe; not concurrent with release. */
AOTRUN_FB_HIDDEN void *aotrun_fb_thread_block(aotrun_fb_thread_blocks *s,
                                              aotrun_fb_thread_ticket **tls);

/* Calls release on every thread's block and frees the blocks. Only while
 * no other thread uses a block of `s` (no shim call in flight). */
AOTRUN_FB_HIDDEN void aotrun_fb_thread_blocks_release(
    aotrun_fb_thread_blocks *s);

/* Number of threads holding a block (tests). */
AOTRUN_FB_HIDDEN size_t
aotrun_fb_thread_blocks_count(aotrun_fb_thread_blocks *s);

#endif /* AOTRUN_FALLBACK_THREAD_BLOCKS_H */
