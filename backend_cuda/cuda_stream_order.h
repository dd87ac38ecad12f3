/*
 * cuda_stream_order.h: orders a method's own stream against a caller's
 * stream (execute_ex's `stream`) with two events, both ways, and nothing
 * device-wide:
 *   before: an event recorded on the caller's stream, waited for by the
 *           method's stream: the call's work (input copies, the model or
 *           its graph, output copies) runs after what the caller queued
 *           before the call;
 *   after:  an event recorded on the method's stream after the call's
 *           work, waited for by the caller's stream: what the caller
 *           queues after the call sees the outputs.
 * The model always runs on the method's stream (CUDA graphs are captured
 * and replayed there, and the shim's block cache keys freed blocks by that
 * stream), so graphs and plain runs take the same path.
 */
#ifndef AOTRUN_CUDA_STREAM_ORDER_H
#define AOTRUN_CUDA_STREAM_ORDER_H

#include "aot_loader/aotrun_error.h"

typedef struct aotrun_cuda_stream_order {
  void *before, *after; /* cudaEvent_t (no timing), made on first use */
} aotrun_cuda_stream_order;

/* The method's stream waits for the caller's stream. The method's device
 * must be current. */
aotrun_status aotrun_cuda_order_before(aotrun_cuda_stream_order *o,
                                       void *caller, void *method_stream,
                                       aotrun_error *err);
/* The caller's stream waits for the method's stream. */
aotrun_status aotrun_cuda_order_after(aotrun_cuda_stream_order *o,
                                      void *caller, void *method_stream,
                                      aotrun_error *err);
/* Destroys the events (the method's device need not be current). */
void aotrun_cuda_stream_order_destroy(aotrun_cuda_stream_order *o);

#endif /* AOTRUN_CUDA_STREAM_ORDER_H */
