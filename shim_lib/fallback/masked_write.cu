// masked_write.cu: the rank-based masked write of masked_write.h.
#include <cuda_runtime.h>

#include "shim_lib/fallback/acc_ops.cuh"
#include "shim_lib/fallback/index_device.cuh"
#include "shim_lib/fallback/masked_write.h"

namespace {

template <typename T, typename R, typename Op, bool kAcc>
__global__ void masked_write_kernel(T *out, const T *self, const T *values,
                                    const unsigned char *flags, const R *ranks,
                                    aotrun_fb_masked_write d) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < d.numel; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oo = 0, so = 0, vo = 0, fo = 0, rem = i;
    for (int k = d.ndim - 1; k > 0; k--) {
      int64_t c = rem % d.sizes[k];
      rem /= d.sizes[k];
      oo += c * d.out[k];
      so += c * d.self[k];
      vo += c * d.values[k];
      fo += c * d.flags[k];
    }
    if (d.ndim > 0) {
      oo += rem * d.out[0];
      so += rem * d.self[0];
      vo += rem * d.values[0];
      fo += rem * d.flags[0];
    }
    if (flags[fo] != 0) {
      int64_t r = static_cast<int64_t>(ranks[fo]);
      if (r < d.rank_limit) {
        T v = values[vo + r * d.rank_stride];
        if constexpr (kAcc) {
          T base = d.has_self ? self[so] : out[oo];
          out[oo] = Op::store(Op::add(Op::load(base), Op::load(v)));
        } else {
          out[oo] = v;
        }
        continue;
      }
    }
    if (d.has_self) out[oo] = self[so];
  }
}

template <typename T, typename Op, bool kAcc>
cudaError_t launch(void *out, const void *self, const void *values,
                   const uint8_t *flags, const void *ranks, int rank_bytes,
                   const aotrun_fb_masked_write &d, cudaStream_t stream) {
  unsigned grid = aotrun_fb::grid_for(d.numel);
  if (rank_bytes == 4)
    masked_write_kernel<T, int, Op, kAcc><<<grid, aotrun_fb::kThreads, 0,
                                            stream>>>(
        static_cast<T *>(out), static_cast<const T *>(self),
        static_cast<const T *>(values), flags, static_cast<const int *>(ranks),
        d);
  else if (rank_bytes == 8)
    masked_write_kernel<T, long long, Op, kAcc><<<grid, aotrun_fb::kThreads, 0,
                                                  stream>>>(
        static_cast<T *>(out), static_cast<const T *>(self),
        static_cast<const T *>(values), flags,
        static_cast<const long long *>(ranks), d);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

struct AccLauncher {
  void *out;
  const void *self, *values;
  const uint8_t *flags;
  const void *ranks;
  int rank_bytes;
  size_t elem_size;
  const aotrun_fb_masked_write &d;
  cudaStream_t stream;

  template <typename Op>
  cudaError_t run() {
    using T = typename Op::T;
    if (sizeof(T) != elem_size) return cudaErrorInvalidValue;
    return launch<T, Op, true>(out, self, values, flags, ranks, rank_bytes, d,
                               stream);
  }
};

template <typename R>
__global__ void count_check_kernel(const unsigned char *flags, const R *ranks,
                                   int64_t n, int64_t expected, int exact,
                                   aotrun_device_error *err, uint64_t op,
                                   uint64_t arg, int32_t dim) {
  int64_t count =
      n > 0 ? static_cast<int64_t>(ranks[n - 1]) + (flags[n - 1] != 0 ? 1 : 0)
            : 0;
  if (exact ? count != expected : count > expected)
    aotrun_fb::report_error(err, AOTRUN_DEVERR_COUNT_MISMATCH, op, arg, dim,
                            count, expected);
}

}  // namespace

extern "C" cudaError_t aotrun_fb_masked_write_run(
    void *out, const void *self, const void *values, const uint8_t *flags,
    const void *ranks, int rank_bytes, size_t elem_size,
    const aotrun_fb_masked_write *d, cudaStream_t stream) {
  if (d->numel == 0) return cudaSuccess;
  if (d->accumulate)
    return aotrun_fb::dispatch_acc(
        d->acc_kind, AccLauncher{out, self, values, flags, ranks, rank_bytes,
                                 elem_size, *d, stream});
  using aotrun_fb::OpInt;
  switch (elem_size) {
    case 1:
      return launch<unsigned char, OpInt<unsigned char>, false>(
          out, self, values, flags, ranks, rank_bytes, *d, stream);
    case 2:
      return launch<unsigned short, OpInt<unsigned short>, false>(
          out, self, values, flags, ranks, rank_bytes, *d, stream);
    case 4:
      return launch<unsigned int, OpInt<unsigned int>, false>(
          out, self, values, flags, ranks, rank_bytes, *d, stream);
    case 8:
      return launch<unsigned long long, OpInt<unsigned long long>, false>(
          out, self, values, flags, ranks, rank_bytes, *d, stream);
    case 16:
      return launch<aotrun_fb::Bytes16, OpInt<unsigned char>, false>(
          out, self, values, flags, ranks, rank_bytes, *d, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t aotrun_fb_mask_count_check(
    const uint8_t *flags, const void *ranks, int rank_bytes, int64_t n,
    int64_t expected, int exact, aotrun_device_error *err, uint64_t op,
    uint64_t arg, int32_t dim, cudaStream_t stream) {
  if (rank_bytes == 4)
    count_check_kernel<int><<<1, 1, 0, stream>>>(
        flags, static_cast<const int *>(ranks), n, expected, exact, err, op,
        arg, dim);
  else if (rank_bytes == 8)
    count_check_kernel<long long><<<1, 1, 0, stream>>>(
        flags, static_cast<const long long *>(ranks), n, expected, exact, err,
        op, arg, dim);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}
