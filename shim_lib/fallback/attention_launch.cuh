// attention_launch.cuh: the host-side launch helper the attention kernels
// share (attention_kernels.cu, attention_f32.cu). CUDA C++; included only
// by .cu files.
#ifndef AOTRUN_ATTENTION_LAUNCH_CUH
#define AOTRUN_ATTENTION_LAUNCH_CUH

#include <cuda_runtime.h>

namespace aotrun_attn_launch {

// Raises a kernel's dynamic shared memory limit once per device (a bit
// per device in *done, one word per kernel; a race only repeats the call);
// with max_carveout, also asks for the largest shared-memory carveout (for
// kernels whose loads bypass L1 and want two big blocks per SM).
template <typename K>
inline cudaError_t allow_smem(K kernel, size_t smem, unsigned long long *done,
                              bool max_carveout = false) {
  if (smem <= 48 * 1024 && !max_carveout) return cudaSuccess;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (dev & 63);
  if (__atomic_load_n(done, __ATOMIC_ACQUIRE) & bit) return cudaSuccess;
  if (smem > 48 * 1024)
    e = cudaFuncSetAttribute(kernel,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem);
  if (e == cudaSuccess && max_carveout)
    e = cudaFuncSetAttribute(kernel,
                             cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared);
  if (e == cudaSuccess) __atomic_fetch_or(done, bit, __ATOMIC_ACQ_REL);
  return e;
}

// The current device's opt-in shared memory per block, asked once per
// device (a race only asks twice); 0 when it cannot be asked, so a caller
// choosing between kernels takes the one that needs less.
inline size_t device_smem_limit() {
  static int limits[64];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
    (void)cudaGetLastError();
    return 0;
  }
  int v = __atomic_load_n(&limits[dev], __ATOMIC_RELAXED);
  if (v > 0) return (size_t)v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                             dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  __atomic_store_n(&limits[dev], v, __ATOMIC_RELAXED);
  return (size_t)v;
}

}  // namespace aotrun_attn_launch

#endif  // AOTRUN_ATTENTION_LAUNCH_CUH
