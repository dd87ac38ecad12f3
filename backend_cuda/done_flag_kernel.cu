// done_flag_kernel.cu: see done_flag_kernel.h.
#include "backend_cuda/done_flag_kernel.h"

namespace {

// The device keeps its own count, so the host never writes what the
// device reads; the host only compares against the launches it made.
__global__ void bump(uint32_t *count, volatile uint32_t *host_counter) {
  uint32_t v = *count + 1u;
  *count = v;
  __threadfence_system();
  *host_counter = v;
}

}  // namespace

extern "C" void aotrun_done_flag_kernel_params(
    aotrun_done_flag_kernel_args *a, uint32_t *count, uint32_t *host_counter,
    struct cudaKernelNodeParams *params) {
  a->count = count;
  a->host_counter = host_counter;
  a->args[0] = &a->count;
  a->args[1] = &a->host_counter;
  params->func = reinterpret_cast<void *>(bump);
  params->gridDim = dim3(1, 1, 1);
  params->blockDim = dim3(1, 1, 1);
  params->sharedMemBytes = 0;
  params->kernelParams = a->args;
  params->extra = nullptr;
}
