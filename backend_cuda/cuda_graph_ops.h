/*
 * cuda_graph_ops.h: the real implementation of the graph state machine's
 * seam (aotrun_graph_ops) for one method handle: CUDA stream capture,
 * graphs, static buffers, the per-graph pool, and the method runner.
 */
#ifndef AOTRUN_CUDA_GRAPH_OPS_H
#define AOTRUN_CUDA_GRAPH_OPS_H

#include <stdint.h>

#include "aot_loader/method_runner.h"
#include "backend_cuda/cuda_done_flag.h"
#include "backend_cuda/cuda_graph_state.h"

typedef struct aotrun_cuda_graph_ctx {
  aotrun_method_runner *runner;
  void *stream; /* the method's cudaStream_t (updated if it changes) */
  void *log_ctx;
  void (*log)(void *log_ctx, int32_t level, const char *message);
  /* The execute_ex requests of the call in progress (kept outputs, no
   * final synchronisation, the too-small report), NULL for execute. Set by
   * the method around one call; graph replays copy kept outputs out of
   * the graph's pool, direct runs may hand the model's tensor over. */
  aotrun_runner_call *call;
  /* Option cuda_graph_copy_kernels: copy nodes added from now on are
   * kernel nodes (graph_copy_kernel.h), else memcpy nodes. */
  int copy_kernels;
  /* Option cuda_graph_done_flag: graphs captured from then on end in the
   * done counter's node, and their replays wait on it (cuda_done_flag.h). */
  int done_flag;
  aotrun_cuda_done_flag done; /* the counter (the method's runner reaches it
                                 too, to wait and to disarm) */
} aotrun_cuda_graph_ctx;

/* The ops table with ctx as its context (ctx must outlive the state). */
aotrun_graph_ops aotrun_cuda_graph_ops(aotrun_cuda_graph_ctx *ctx);

#endif /* AOTRUN_CUDA_GRAPH_OPS_H */
