// scatter_device.cuh: device helpers shared by the scatter kernels: where
// an item's index, src element and target live, reading the index, and
// reporting an out-of-range index without a host synchronisation.
#ifndef AOTRUN_FALLBACK_SCATTER_DEVICE_CUH
#define AOTRUN_FALLBACK_SCATTER_DEVICE_CUH

#include <cuda_runtime.h>

#include "shim_lib/device_error.h"
#include "shim_lib/fallback/scatter_kernels.h"

namespace aotrun_scatter {

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

// Element offsets of item p: in index, in src, and of its target in out
// without dim's term (add value * out_strides[dim]).
struct ItemOffsets {
  int64_t index, src, out;
};

__device__ __forceinline__ ItemOffsets
item_offsets(const aotrun_fb_scatter_items &it, int64_t p) {
  ItemOffsets o{0, 0, 0};
  if (it.narrow) {  // 32-bit divisions are several times cheaper
    uint32_t r = (uint32_t)p;
    for (int d = it.ndim - 1; d > 0; d--) {
      uint32_t size = (uint32_t)it.sizes[d];
      uint32_t q = r / size;
      int64_t c = (int64_t)(r - q * size);
      r = q;
      o.index += c * it.index_strides[d];
      o.src += c * it.src_strides[d];
      if (d != it.dim) o.out += c * it.out_strides[d];
    }
    int64_t c = (int64_t)r;
    o.index += c * it.index_strides[0];
    o.src += c * it.src_strides[0];
    if (it.dim != 0) o.out += c * it.out_strides[0];
    return o;
  }
  int64_t r = p;
  for (int d = it.ndim - 1; d > 0; d--) {
    int64_t q = r / it.sizes[d];
    int64_t c = r - q * it.sizes[d];
    r = q;
    o.index += c * it.index_strides[d];
    o.src += c * it.src_strides[d];
    if (d != it.dim) o.out += c * it.out_strides[d];
  }
  o.index += r * it.index_strides[0];
  o.src += r * it.src_strides[0];
  if (it.dim != 0) o.out += r * it.out_strides[0];
  return o;
}

// Offsets of line l's first item (position 0 along dim) in index and src,
// and of its targets' base in out: l unravels row-major over the dims but
// dim.
__device__ __forceinline__ ItemOffsets line_base(
    const aotrun_fb_scatter_items &it, int64_t l) {
  ItemOffsets o{0, 0, 0};
  for (int d = it.ndim - 1; d >= 0; d--) {
    if (d == it.dim) continue;
    int64_t q = l / it.sizes[d];
    int64_t c = l - q * it.sizes[d];
    l = q;
    o.index += c * it.index_strides[d];
    o.src += c * it.src_strides[d];
    o.out += c * it.out_strides[d];
  }
  return o;
}

__device__ __forceinline__ int64_t read_index(const aotrun_fb_scatter_items &it,
                                              int64_t off) {
  return it.index_is_int32 ? (int64_t)((const int32_t *)it.index)[off]
                           : ((const int64_t *)it.index)[off];
}

// Claims the device error slot for the first bad index seen (later ones are
// dropped: one report is enough to fail the call).
__device__ __forceinline__ void report_bad_index(
    const aotrun_fb_scatter_report &r, int64_t value, int64_t bound) {
  aotrun_device_error *e = (aotrun_device_error *)r.slot;
  if (atomicCAS(&e->code, 0, AOTRUN_DEVERR_INDEX_OUT_OF_RANGE) == 0) {
    e->dim = r.dim;
    e->value = value;
    e->bound = bound;
    e->op = r.op;
    e->arg = r.arg;
  }
}

// True when v addresses dim; reports it otherwise.
__device__ __forceinline__ bool index_ok(const aotrun_fb_scatter_items &it,
                                         const aotrun_fb_scatter_report &r,
                                         int64_t v) {
  if (v >= 0 && v < it.dim_size) return true;
  report_bad_index(r, v, it.dim_size);
  return false;
}

// Grid of a grid-stride loop over n work items.
inline unsigned grid_for(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  return (unsigned)(blocks > 0 ? blocks : 1);
}

}  // namespace aotrun_scatter

#endif  // AOTRUN_FALLBACK_SCATTER_DEVICE_CUH
