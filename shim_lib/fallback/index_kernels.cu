// index_kernels.cu: the device side of aoti_torch_cuda_index_Tensor: mask
// compaction (CUB DeviceSelect::Flagged), integer index normalisation and
// the gather of the selected rows.
#include <cuda_runtime.h>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "shim_lib/fallback/fallback_kernels.h"

namespace {

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

__device__ int64_t unravel_offset(int64_t lin, int nd, const int64_t *sizes,
                                  const int64_t *strides) {
  int64_t off = 0;
  for (int k = nd - 1; k >= 0; k--) {
    off += (lin % sizes[k]) * strides[k];
    lin /= sizes[k];
  }
  return off;
}

template <typename T>
__global__ void gather_kernel(T *out, const T *self, const int64_t *sel,
                              aotrun_fb_gather_desc d, int64_t n) {
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < n;
       o += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = o % d.rest_numel;
    int64_t t = o / d.rest_numel;
    int64_t c = t % d.count;
    int64_t a = t / d.count;
    int64_t off =
        unravel_offset(a, d.lead_ndim, d.lead_sizes, d.lead_strides) +
        unravel_offset(sel[c], d.pick_ndim, d.pick_sizes, d.pick_strides) +
        unravel_offset(r, d.rest_ndim, d.rest_sizes, d.rest_strides);
    out[o] = self[off];
  }
}

unsigned grid_for(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // grid-stride loops cover rest
  return (unsigned)blocks;
}

template <typename T>
cudaError_t launch_gather(void *out, const void *self, const int64_t *sel,
                          const aotrun_fb_gather_desc &d, int64_t n,
                          cudaStream_t stream) {
  gather_kernel<T><<<grid_for(n, 256), 256, 0, stream>>>(
      static_cast<T *>(out), static_cast<const T *>(self), sel, d, n);
  return cudaGetLastError();
}

template <typename I>
__global__ void normalize_kernel(const I *idx, int64_t n, int64_t dim_size,
                                 int64_t *sel, int64_t *bad) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t v = (int64_t)idx[i];
    int64_t w = v < 0 ? v + dim_size : v;
    if (w < 0 || w >= dim_size) {
      bad[1] = v;  // any offending value will do for the message
      bad[0] = 1;
      w = 0;
    }
    sel[i] = w;
  }
}

}  // namespace

extern "C" cudaError_t aotrun_fb_index_gather(void *out, const void *self,
                                              const int64_t *sel,
                                              const aotrun_fb_gather_desc *desc,
                                              size_t elem_size,
                                              cudaStream_t stream) {
  int64_t n = desc->lead_numel * desc->count * desc->rest_numel;
  if (n == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch_gather<unsigned char>(out, self, sel, *desc, n, stream);
    case 2: return launch_gather<unsigned short>(out, self, sel, *desc, n, stream);
    case 4: return launch_gather<unsigned int>(out, self, sel, *desc, n, stream);
    case 8: return launch_gather<unsigned long long>(out, self, sel, *desc, n, stream);
    case 16: return launch_gather<Bytes16>(out, self, sel, *desc, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t aotrun_fb_select_flagged(void *temp, size_t *temp_bytes,
                                                const uint8_t *flags, int64_t n,
                                                int64_t *sel, int64_t *num_sel,
                                                cudaStream_t stream) {
  thrust::counting_iterator<int64_t> positions(0);
  return cub::DeviceSelect::Flagged(temp, *temp_bytes, positions, flags, sel,
                                    num_sel, n, stream);
}

extern "C" cudaError_t aotrun_fb_normalize_indices(const void *idx,
                                                   int is_int32, int64_t n,
                                                   int64_t dim_size,
                                                   int64_t *sel, int64_t *bad,
                                                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (is_int32)
    normalize_kernel<int32_t><<<grid_for(n, 256), 256, 0, stream>>>(
        static_cast<const int32_t *>(idx), n, dim_size, sel, bad);
  else
    normalize_kernel<int64_t><<<grid_for(n, 256), 256, 0, stream>>>(
        static_cast<const int64_t *>(idx), n, dim_size, sel, bad);
  return cudaGetLastError();
}
