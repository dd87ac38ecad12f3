/*
 * cuda_method_internal.h: the state of one CUDA method handle, shared by
 * cuda_method.c (create, options, 1.0 execute) and cuda_execute_ex.c (the
 * 1.1 execute_ex and synchronize).
 */
#ifndef AOTRUN_CUDA_METHOD_INTERNAL_H
#define AOTRUN_CUDA_METHOD_INTERNAL_H

#include <stdatomic.h>

#include "aot_loader/method_runner.h"
#include "backend_cuda/cuda_device_ops.h"
#include "backend_cuda/cuda_graph_ops.h"
#include "backend_cuda/cuda_graph_state.h"
#include "backend_cuda/cuda_method.h"
#include "backend_cuda/cuda_stream.h"
#include "backend_cuda/cuda_stream_order.h"
#include "backend_cuda/cuda_timing.h"
#include "backend_cuda/weight_registry.h"

struct aotrun_method {
  const aotrun_host_api *host;
  int device;
  char device_str[32];
  aotrun_cuda_options opts;
  aotrun_cuda_stream *stream;
  aotrun_weight_registry_entry *weights; /* NULL: a private cache */
  aotrun_method_runner *runner;
  aotrun_cuda_graph_ctx graph_ctx;
  aotrun_graph_state *graph;
  aotrun_cuda_timing timing; /* option gpu_timing */
  aotrun_cuda_sync_ctx sync; /* the runner's: timing and graph_ctx.done */
  int timing_pending; /* an async call's timing, read by synchronize */
  atomic_int called;  /* a call succeeded (the first one is logged) */
  char method[64];    /* for log lines */
  aotrun_cuda_stream_order order; /* caller stream <-> method stream */
  aotrun_error err; /* last failed call (not of the const queries) */
  uint64_t serial;  /* tells handles at a reused address apart */
};

/* Every call on m that is not a const query (get_num_io, get_io_info)
 * starts with this: last_error(m) is then m->err again (a failed const
 * query's message is kept per thread, see cuda_method.c). */
void aotrun_cuda_method_forget_query_error(const aotrun_method *m);

/* The host's log, filtered by the handle's log_level (ctx: the method). */
void aotrun_cuda_method_log(void *ctx, int32_t level, const char *message);

/* Init's warm-up of a new handle (options warm_up, warm_up_run,
 * cuda_graph_capture_at_init; cuda_method_warm_up.c), device current.
 * Fails nothing: what it could not do is logged and left to the first
 * call. */
void aotrun_cuda_method_warm_up(aotrun_method *m, const void *manifest,
                                size_t size, const char *method);

/* One call on the method's device and stream (inputs checked here; call
 * may be NULL: the 1.0 execute). The caller made the device current
 * (aotrun_cuda_device_enter) and restores it. */
aotrun_status aotrun_cuda_method_run(aotrun_method *m, const DLTensor *inputs,
                                     size_t ni, DLTensor *outputs, size_t no,
                                     aotrun_runner_call *call);

#endif /* AOTRUN_CUDA_METHOD_INTERNAL_H */
