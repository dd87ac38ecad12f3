// graph_copy_kernel.cu: see graph_copy_kernel.h.
#include <stdint.h>

#include "backend_cuda/graph_copy_kernel.h"

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;

// Grid-stride copy; 16-byte moves when both sides allow, then the tail.
__global__ void copy_bytes(char *dst, const char *src, size_t n) {
  size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t done = 0;
  if ((((uintptr_t)dst | (uintptr_t)src) & 15u) == 0) {
    size_t n16 = n / 16;
    uint4 *d = reinterpret_cast<uint4 *>(dst);
    const uint4 *s = reinterpret_cast<const uint4 *>(src);
    for (size_t i = tid; i < n16; i += stride) d[i] = s[i];
    done = n16 * 16;
  }
  for (size_t i = done + tid; i < n; i += stride) dst[i] = src[i];
}

}  // namespace

extern "C" void aotrun_graph_copy_kernel_params(
    aotrun_copy_kernel_args *a, void *dst, const void *src, size_t bytes,
    struct cudaKernelNodeParams *params) {
  a->dst = dst;
  a->src = src;
  a->bytes = bytes;
  a->args[0] = &a->dst;
  a->args[1] = &a->src;
  a->args[2] = &a->bytes;
  size_t chunks = (bytes + 16 * kThreads - 1) / (16 * kThreads);
  unsigned blocks = chunks < 1 ? 1u
                    : chunks > kMaxBlocks ? kMaxBlocks
                                          : (unsigned)chunks;
  params->func = reinterpret_cast<void *>(copy_bytes);
  params->gridDim = dim3(blocks, 1, 1);
  params->blockDim = dim3(kThreads, 1, 1);
  params->sharedMemBytes = 0;
  params->kernelParams = a->args;
  params->extra = nullptr;
}
