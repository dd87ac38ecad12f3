/*
 * graph_copy_kernel.h: a device-to-device byte copy as a kernel node of a
 * CUDA graph, for replay's input and output copies where option
 * cuda_graph_copy_kernels asks (graph_copy_nodes.h). A kernel node costs
 * less than a memcpy node: launch_floor measured a replay with re-pointed
 * copy-kernel nodes 2.7 us faster than with memcpy nodes (9 kernels, H100,
 * 2026-12-07 02:53, docs/benchmarks.md). One kernel serves every copy (a
 * kernel node's function cannot change once instantiated): 16-byte moves
 * when both pointers are 16-byte aligned, bytes otherwise.
 */
#ifndef AOTRUN_GRAPH_COPY_KERNEL_H
#define AOTRUN_GRAPH_COPY_KERNEL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's arguments and their addresses, which params points into:
 * keep it alive until the graph call that reads params returns. */
typedef struct aotrun_copy_kernel_args {
  void *dst;
  const void *src;
  size_t bytes;
  void *args[3];
} aotrun_copy_kernel_args;

/* Fills *params (and *a, which it points into) for copying bytes from src
 * to dst on the current device. The grid depends on bytes alone. */
void aotrun_graph_copy_kernel_params(aotrun_copy_kernel_args *a, void *dst,
                                     const void *src, size_t bytes,
                                     struct cudaKernelNodeParams *params);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_GRAPH_COPY_KERNEL_H */
