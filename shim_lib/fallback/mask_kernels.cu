// mask_kernels.cu: CUB reduce / select / scan over a mask or over the
// non-zero test of any dtype (see mask_kernels.h).
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "shim_lib/fallback/fallback_limits.h"
#include "shim_lib/fallback/mask_kernels.h"

namespace {

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

template <typename U>
struct NonZero {
  unsigned long long bits;
  __host__ __device__ bool operator()(const U &x) const {
    return (static_cast<unsigned long long>(x) & bits) != 0;
  }
};

template <>
struct NonZero<Bytes16> {
  unsigned long long bits;
  __host__ __device__ bool operator()(const Bytes16 &x) const {
    return ((x.lo & bits) | (x.hi & bits)) != 0;
  }
};

// 0/1 as a summable integer.
template <typename U, typename R>
struct NonZeroCount {
  NonZero<U> nz;
  __host__ __device__ R operator()(const U &x) const { return nz(x) ? 1 : 0; }
};

template <typename R>
struct FlagValue {
  __host__ __device__ R operator()(const unsigned char &f) const {
    return f != 0 ? 1 : 0;
  }
};

template <typename U>
cudaError_t run_typed(int kind, void *temp, size_t *bytes,
                      const aotrun_fb_mask_args &a, cudaStream_t stream) {
  const U *data = static_cast<const U *>(a.data);
  switch (kind) {
    case AOTRUN_FB_MASK_COUNT: {
      auto in = thrust::make_transform_iterator(
          data, NonZeroCount<U, long long>{NonZero<U>{a.nz_bits}});
      return cub::DeviceReduce::Sum(temp, *bytes, in,
                                    reinterpret_cast<long long *>(a.count),
                                    a.n, stream);
    }
    case AOTRUN_FB_MASK_POSITIONS: {
      auto flags = thrust::make_transform_iterator(data, NonZero<U>{a.nz_bits});
      thrust::counting_iterator<int64_t> pos(0);
      return cub::DeviceSelect::Flagged(temp, *bytes, pos, flags,
                                        static_cast<int64_t *>(a.out),
                                        a.count, a.n, stream);
    }
    case AOTRUN_FB_MASK_SELECT:
      return cub::DeviceSelect::Flagged(temp, *bytes, data, a.flags,
                                        static_cast<U *>(a.out), a.count, a.n,
                                        stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t run_ranks(void *temp, size_t *bytes, const aotrun_fb_mask_args &a,
                      cudaStream_t stream) {
  if (a.rank_bytes == 4) {
    auto in = thrust::make_transform_iterator(a.flags, FlagValue<int>{});
    return cub::DeviceScan::ExclusiveSum(temp, *bytes, in,
                                         static_cast<int *>(a.out), a.n,
                                         stream);
  }
  if (a.rank_bytes == 8) {
    auto in = thrust::make_transform_iterator(a.flags, FlagValue<long long>{});
    return cub::DeviceScan::ExclusiveSum(temp, *bytes, in,
                                         static_cast<long long *>(a.out), a.n,
                                         stream);
  }
  return cudaErrorInvalidValue;
}

struct Dims {
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
};

__global__ void coords_kernel(int64_t *out, int64_t count, int64_t ld,
                              Dims dims, int ndim) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < count;
       c += int64_t(gridDim.x) * blockDim.x) {
    int64_t flat = out[c];
    for (int d = ndim - 1; d > 0; d--) {
      out[c + d * ld] = flat % dims.sizes[d];
      flat /= dims.sizes[d];
    }
    out[c] = flat;
  }
}

}  // namespace

extern "C" cudaError_t aotrun_fb_mask_run(int kind, void *temp,
                                          size_t *temp_bytes,
                                          const aotrun_fb_mask_args *a,
                                          cudaStream_t stream) {
  if (a->n <= 0) return cudaErrorInvalidValue;
  if (kind == AOTRUN_FB_MASK_RANKS) return run_ranks(temp, temp_bytes, *a, stream);
  switch (a->elem_size) {
    case 1: return run_typed<unsigned char>(kind, temp, temp_bytes, *a, stream);
    case 2: return run_typed<unsigned short>(kind, temp, temp_bytes, *a, stream);
    case 4: return run_typed<unsigned int>(kind, temp, temp_bytes, *a, stream);
    case 8: return run_typed<unsigned long long>(kind, temp, temp_bytes, *a, stream);
    case 16: return run_typed<Bytes16>(kind, temp, temp_bytes, *a, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t aotrun_fb_nonzero_coords(int64_t *out, int64_t count,
                                                int64_t ld,
                                                const int64_t *sizes,
                                                int32_t ndim,
                                                cudaStream_t stream) {
  if (count == 0 || ndim < 2) return cudaSuccess;
  if (ndim > AOTRUN_FB_MAX_DIMS) return cudaErrorInvalidValue;
  Dims d;
  for (int i = 0; i < ndim; i++) d.sizes[i] = sizes[i];
  int64_t blocks = (count + 255) / 256;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  coords_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      out, count, ld, d, ndim);
  return cudaGetLastError();
}
