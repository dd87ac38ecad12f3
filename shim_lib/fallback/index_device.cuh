// index_device.cuh: device helpers of the advanced-indexing kernels
// (index_kernels.cu, index_put_kernels.cu): item and column offsets, the
// device error report, and how items x columns are spread over threads.
#ifndef AOTRUN_FALLBACK_INDEX_DEVICE_CUH
#define AOTRUN_FALLBACK_INDEX_DEVICE_CUH

#include <cuda_runtime.h>

#include "shim_lib/device_error.h"
#include "shim_lib/fallback/index_kernels.h"

namespace aotrun_fb {

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

// First reporter wins; later ones leave the slot alone.
__device__ inline void report_error(aotrun_device_error *e, int32_t code,
                                    uint64_t op, uint64_t arg, int32_t dim,
                                    int64_t value, int64_t bound) {
  if (e == nullptr) return;
  if (atomicCAS(reinterpret_cast<int *>(&e->code), 0, code) != 0) return;
  e->dim = dim;
  e->value = value;
  e->bound = bound;
  e->op = op;
  e->arg = arg;
}

// Row-major coordinates of b over B (coord[0..b_ndim)).
__device__ inline void b_coords(const aotrun_fb_ix_items &it, int64_t b,
                                int64_t *coord) {
  for (int d = it.b_ndim - 1; d > 0; d--) {
    int64_t s = it.b_sizes[d];
    coord[d] = b % s;
    b /= s;
  }
  if (it.b_ndim > 0) coord[0] = b;
}

// sum_d coord(b)[d] * strides[d].
__device__ inline int64_t b_offset(const aotrun_fb_ix_items &it, int64_t b,
                                   const int64_t *strides) {
  if (it.b_ndim == 1) return b * strides[0];
  int64_t off = 0;
  for (int d = it.b_ndim - 1; d > 0; d--) {
    int64_t s = it.b_sizes[d];
    off += (b % s) * strides[d];
    b /= s;
  }
  if (it.b_ndim > 0) off += b * strides[0];
  return off;
}

// The pick offset of item b (sum of coordinate * pick_mul over the pick
// dims). An out-of-range index is reported, uses coordinate 0 and sets *bad.
// With bstr, *boff = sum_d coord(b)[d] * bstr[d].
__device__ inline int64_t item_pick(const aotrun_fb_ix_items &it, int64_t b,
                                    const int64_t *bstr, int64_t *boff,
                                    aotrun_device_error *err, bool *bad) {
  // A 1-D B (the usual case) needs no coordinate array.
  const bool flat = it.b_ndim == 1;
  int64_t coord[AOTRUN_FB_MAX_DIMS];
  if (!flat) b_coords(it, b, coord);
  if (bstr != nullptr) {
    int64_t o = flat ? b * bstr[0] : 0;
    for (int d = 0; !flat && d < it.b_ndim; d++) o += coord[d] * bstr[d];
    *boff = o;
  }
  int64_t pick = 0;
  *bad = false;
  for (int k = 0; k < it.ncomp; k++) {
    const aotrun_fb_ix_comp &c = it.comp[k];
    int64_t e = 0;
    if (flat)
      e = c.ndim > 0 ? b * c.strides[0] : 0;
    else
      for (int j = 0; j < c.ndim; j++)
        e += coord[it.b_ndim - c.ndim + j] * c.strides[j];
    if (c.kind == AOTRUN_FB_IX_POSITIONS) {
      int64_t p = static_cast<const int64_t *>(c.data)[e];
      for (int j = c.pick_ndim - 1; j > 0; j--) {
        int pd = c.pick_first + j;
        int64_t s = it.pick_sizes[pd];
        pick += (p % s) * it.pick_mul[pd];
        p /= s;
      }
      pick += p * it.pick_mul[c.pick_first];
      continue;
    }
    int64_t v = c.kind == AOTRUN_FB_IX_INT32
                    ? static_cast<int64_t>(static_cast<const int32_t *>(c.data)[e])
                    : static_cast<const int64_t *>(c.data)[e];
    int pd = c.pick_first;
    int64_t size = it.pick_sizes[pd];
    int64_t w = v < 0 ? v + size : v;
    if (w < 0 || w >= size) {
      report_error(err, AOTRUN_DEVERR_INDEX_OUT_OF_RANGE, it.op, c.arg,
                   it.pick_dim[pd], v, size);
      *bad = true;
      w = 0;
    }
    pick += w * it.pick_mul[pd];
  }
  return pick;
}

// Offsets of column q in the src and dst operands.
__device__ inline void col_offsets(const aotrun_fb_ix_cols &c, int64_t q,
                                   int64_t *src, int64_t *dst) {
  if (c.ndim == 1) {
    *src = q * c.src[0];
    *dst = q * c.dst[0];
    return;
  }
  int64_t s = 0, d = 0;
  for (int k = c.ndim - 1; k > 0; k--) {
    int64_t i = q % c.sizes[k];
    q /= c.sizes[k];
    s += i * c.src[k];
    d += i * c.dst[k];
  }
  if (c.ndim > 0) {
    s += q * c.src[0];
    d += q * c.dst[0];
  }
  *src = s;
  *dst = d;
}

// Offset of a pick-linear key in an operand with strides `str` over the
// pick dims.
__device__ inline int64_t key_offset(const aotrun_fb_ix_items &it,
                                     uint64_t key, const int64_t *str) {
  int64_t k = static_cast<int64_t>(key);
  if (it.pick_ndim == 1) return k * str[0];
  int64_t off = 0;
  for (int d = it.pick_ndim - 1; d > 0; d--) {
    off += (k % it.pick_sizes[d]) * str[d];
    k /= it.pick_sizes[d];
  }
  return off + k * str[0];
}

// Work split of items x columns: each item's columns are cut into chunks of
// `chunk` columns; a group of G = 2^lg lanes (G <= 32, a power of two so
// groups never straddle a warp) handles one (item, chunk) unit, lane l
// taking columns l, l + G, ...
struct Units {
  int64_t n_units;
  int64_t nchunks;
  int64_t chunk;
  int lg;
};

inline Units plan_units(int64_t items, int64_t ncols, int cols_per_lane) {
  Units u;
  int lg = 0;
  while (lg < 5 && (int64_t(1) << lg) < ncols) lg++;
  u.lg = lg;
  u.chunk = (int64_t(1) << lg) * cols_per_lane;
  u.nchunks = ncols > 0 ? (ncols + u.chunk - 1) / u.chunk : 0;
  u.n_units = items * u.nchunks;
  return u;
}

constexpr int kThreads = 256;

inline unsigned grid_for_units(const Units &u) {
  int64_t threads = u.n_units << u.lg;
  int64_t blocks = (threads + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // grid-stride loops cover rest
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

}  // namespace aotrun_fb

#endif  // AOTRUN_FALLBACK_INDEX_DEVICE_CUH
