// strided_copy.cu: copies an n-d box between two strided layouts. Used to
// make operands contiguous, to broadcast a bias into a GEMM output and to
// write a temporary result back into a non-contiguous `out`.
#include <cuda_runtime.h>

#include "shim_lib/fallback/fallback_kernels.h"

namespace {

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

template <typename T>
__global__ void strided_copy_kernel(T *dst, const T *src,
                                    aotrun_fb_copy_desc d, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, so = 0, dof = 0;
    for (int k = d.ndim - 1; k >= 0; k--) {
      int64_t idx = rem % d.sizes[k];
      rem /= d.sizes[k];
      so += idx * d.src_strides[k];
      dof += idx * d.dst_strides[k];
    }
    dst[dof] = src[so];
  }
}

template <typename T>
cudaError_t launch(void *dst, const void *src, const aotrun_fb_copy_desc &d,
                   int64_t n, cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // grid-stride loop covers rest
  strided_copy_kernel<T><<<(unsigned)blocks, threads, 0, stream>>>(
      static_cast<T *>(dst), static_cast<const T *>(src), d, n);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t aotrun_fb_strided_copy(void *dst, const void *src,
                                              const aotrun_fb_copy_desc *desc,
                                              size_t elem_size,
                                              cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < desc->ndim; k++) n *= desc->sizes[k];
  if (n == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch<unsigned char>(dst, src, *desc, n, stream);
    case 2: return launch<unsigned short>(dst, src, *desc, n, stream);
    case 4: return launch<unsigned int>(dst, src, *desc, n, stream);
    case 8: return launch<unsigned long long>(dst, src, *desc, n, stream);
    case 16: return launch<Bytes16>(dst, src, *desc, n, stream);
    default: return cudaErrorInvalidValue;
  }
}
