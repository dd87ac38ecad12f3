/*
 * done_flag_kernel.h: the last node of a graph captured with option
 * cuda_graph_done_flag: one thread adds 1 to a counter in device memory
 * and writes the new value to mapped host memory, where the host spins on
 * it (done_wait.h) instead of calling cudaStreamSynchronize.
 */
#ifndef AOTRUN_DONE_FLAG_KERNEL_H
#define AOTRUN_DONE_FLAG_KERNEL_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's arguments and their addresses, which params points into:
 * keep it alive until the graph call that reads params returns. */
typedef struct aotrun_done_flag_kernel_args {
  uint32_t *count;          /* device memory */
  uint32_t *host_counter;   /* mapped host memory, as the device sees it */
  void *args[2];
} aotrun_done_flag_kernel_args;

void aotrun_done_flag_kernel_params(aotrun_done_flag_kernel_args *a,
                                    uint32_t *count, uint32_t *host_counter,
                                    struct cudaKernelNodeParams *params);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_DONE_FLAG_KERNEL_H */
