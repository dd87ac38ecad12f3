/*
 * done_wait.h: waiting for a graph replay's end by a counter in mapped
 * host memory, which the graph's last node (done_flag_kernel.h) bumps,
 * instead of cudaStreamSynchronize: the host sees the counter 0.7 to
 * 0.9 us sooner than that call returns at every graph size launch_floor
 * tried (H200, 2026-12-07, docs/benchmarks.md).
 *
 * Pure C, no CUDA: the stream is asked through a callback, so the loop is
 * tested on the CPU. The spin never outlives the stream: every
 * spins_per_query reads it asks whether the stream is done or failed (a
 * kernel that faulted never reaches the last node), so a wait ends when
 * the counter arrives, the stream reports an error, or the stream is idle
 * without the counter (a mismatch, reported, never a hang).
 */
#ifndef AOTRUN_DONE_WAIT_H
#define AOTRUN_DONE_WAIT_H

#include <stdint.h>

/* What the stream said: the callback's return. */
typedef enum aotrun_stream_query {
  AOTRUN_STREAM_BUSY = 0,  /* work still queued or running */
  AOTRUN_STREAM_IDLE = 1,  /* everything queued has finished */
  AOTRUN_STREAM_FAILED = 2 /* the stream reported an error */
} aotrun_stream_query;

typedef aotrun_stream_query (*aotrun_stream_query_fn)(void *ctx);

typedef enum aotrun_done_wait_result {
  AOTRUN_DONE_SEEN = 0,      /* the counter reached want */
  AOTRUN_DONE_FAILED = 1,    /* the stream failed first */
  AOTRUN_DONE_MISSING = 2    /* the stream went idle, the counter short */
} aotrun_done_wait_result;

/* 1 when counter has reached want (modulo 2^32: it wraps). */
int aotrun_done_reached(uint32_t counter, uint32_t want);

/* Spins on *counter until it reaches want; asks query(ctx) every
 * spins_per_query reads (0 is taken as 1). *queries, when not NULL, gets
 * the number of queries made (a fast wait makes none). */
aotrun_done_wait_result aotrun_done_wait(const volatile uint32_t *counter,
                                         uint32_t want,
                                         uint32_t spins_per_query,
                                         aotrun_stream_query_fn query,
                                         void *ctx, uint32_t *queries);

#endif /* AOTRUN_DONE_WAIT_H */
