/*
 * cuda_timing.h: GPU time of one execute (method option `gpu_timing`).
 * A start event is recorded on the method's stream when the call begins
 * and a stop event just before the call's final stream synchronisation
 * (the runner's synchronize hook), so the figure is the GPU's time for the
 * call's work: input copies, kernels (or the graph), output copies. Off by
 * default: two event records per call are work a host did not ask for.
 */
#ifndef AOTRUN_CUDA_TIMING_H
#define AOTRUN_CUDA_TIMING_H

#include <stdint.h>

#include "aot_loader/aotrun_error.h"

typedef struct aotrun_cuda_timing {
  int enabled;
  void *start, *stop; /* cudaEvent_t */
  int started, stopped;
  int64_t last_ns; /* -1: unknown */
} aotrun_cuda_timing;

void aotrun_cuda_timing_init(aotrun_cuda_timing *t);
/* Creates (on) or destroys (off) the events. */
aotrun_status aotrun_cuda_timing_enable(aotrun_cuda_timing *t, int on,
                                        aotrun_error *err);
void aotrun_cuda_timing_begin(aotrun_cuda_timing *t, void *stream);
/* Called just before the call's final synchronisation. */
void aotrun_cuda_timing_mark_end(aotrun_cuda_timing *t, void *stream);
/* After the call: last_ns from the events (-1 when the call failed or was
 * not timed). */
void aotrun_cuda_timing_finish(aotrun_cuda_timing *t, int call_ok);
void aotrun_cuda_timing_destroy(aotrun_cuda_timing *t);

#endif /* AOTRUN_CUDA_TIMING_H */
