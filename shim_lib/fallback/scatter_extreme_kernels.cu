// scatter_extreme_kernels.cu: scatter_reduce "amax" / "amin" by
// compare-and-swap directly on out. The comparison is the total order of
// scatter_math.h, so the final value of a target is the preferred element
// of its candidates whatever order the updates land in: exact and
// deterministic, NaN payloads included. A target's current value is read
// first and most losing candidates never issue an atomic.
#include <cuda_runtime.h>

#include "shim_lib/fallback/scatter_device.cuh"
#include "shim_lib/fallback/scatter_math.h"

namespace aotrun_scatter {
namespace {

template <int W>
struct Word;
template <>
struct Word<1> {
  using T = unsigned char;
};
template <>
struct Word<2> {
  using T = unsigned short;
};
template <>
struct Word<4> {
  using T = unsigned int;
};
template <>
struct Word<8> {
  using T = unsigned long long;
};

__device__ __forceinline__ bool better(uint64_t a, uint64_t b, int32_t dtype,
                                       int is_min) {
  return aotrun_sm_rank_greater(aotrun_sm_extreme_rank(a, dtype, is_min),
                                aotrun_sm_extreme_rank(b, dtype, is_min)) != 0;
}

// Replaces *addr by bits while bits is preferred. A stale first read is
// harmless: values only move up the order, so a stale value is never
// preferred over the current one, and a failed CAS returns the current one.
template <int W>
__device__ __forceinline__ void prefer(char *addr, uint64_t bits,
                                       int32_t dtype, int is_min) {
  using U = typename Word<W>::T;
  U *p = reinterpret_cast<U *>(addr);
  U old = *reinterpret_cast<volatile U *>(p);
  while (better(bits, old, dtype, is_min)) {
    U prev = atomicCAS(p, old, (U)bits);
    if (prev == old) return;
    old = prev;
  }
}

// Bytes have no CAS of their own: swap the aligned word holding the byte.
template <>
__device__ __forceinline__ void prefer<1>(char *addr, uint64_t bits,
                                          int32_t dtype, int is_min) {
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  unsigned int *word = reinterpret_cast<unsigned int *>(a & ~(uintptr_t)3);
  unsigned int shift = (unsigned int)(a & 3) * 8u;
  unsigned int mine = (unsigned int)(bits & 0xffu) << shift;
  unsigned int old = *reinterpret_cast<volatile unsigned int *>(word);
  while (better(bits & 0xffu, (old >> shift) & 0xffu, dtype, is_min)) {
    unsigned int prev = atomicCAS(word, old, (old & ~(0xffu << shift)) | mine);
    if (prev == old) return;
    old = prev;
  }
}

template <int W>
__global__ void extreme_kernel(aotrun_fb_scatter_items it, int32_t dtype,
                               int is_min, aotrun_fb_scatter_report r) {
  using U = typename Word<W>::T;
  const int64_t step = it.out_strides[it.dim];
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
       p < it.numel; p += (int64_t)gridDim.x * blockDim.x) {
    ItemOffsets o = item_offsets(it, p);
    int64_t v = read_index(it, o.index);
    if (!index_ok(it, r, v)) continue;
    uint64_t bits = reinterpret_cast<const U *>(it.src)[o.src];
    prefer<W>(it.out + (o.out + v * step) * W, bits, dtype, is_min);
  }
}

template <int W>
cudaError_t launch(const aotrun_fb_scatter_items &it, int32_t dtype,
                   int is_min, const aotrun_fb_scatter_report &r,
                   cudaStream_t stream) {
  extreme_kernel<W>
      <<<grid_for(it.numel, 256), 256, 0, stream>>>(it, dtype, is_min, r);
  return cudaGetLastError();
}

}  // namespace
}  // namespace aotrun_scatter

using namespace aotrun_scatter;

extern "C" cudaError_t aotrun_fb_scatter_extreme(
    const aotrun_fb_scatter_items *it, int32_t dtype, int is_min,
    const aotrun_fb_scatter_report *r, cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  switch (dtype) {
    case AOTRUN_SM_U8:
    case AOTRUN_SM_I8: return launch<1>(*it, dtype, is_min, *r, stream);
    case AOTRUN_SM_I16:
    case AOTRUN_SM_F16:
    case AOTRUN_SM_BF16: return launch<2>(*it, dtype, is_min, *r, stream);
    case AOTRUN_SM_I32:
    case AOTRUN_SM_F32: return launch<4>(*it, dtype, is_min, *r, stream);
    case AOTRUN_SM_I64:
    case AOTRUN_SM_F64: return launch<8>(*it, dtype, is_min, *r, stream);
    default: return cudaErrorInvalidValue;
  }
}
