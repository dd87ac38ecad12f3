// scatter_kinds.cuh: the reductions of the scatter engines ("kinds"):
// identity, combine, element <-> accumulator, and the final store (a mean
// divides there). Shared by the sort engine's run folding
// (scatter_segment_kernels.cu) and the tile engine (scatter_tile_kernels.cu),
// so both round exactly alike.
#ifndef AOTRUN_FALLBACK_SCATTER_KINDS_CUH
#define AOTRUN_FALLBACK_SCATTER_KINDS_CUH

#include <cuda_runtime.h>

#include "shim_lib/fallback/scatter_kernels.h"
#include "shim_lib/fallback/scatter_math.h"

namespace aotrun_scatter {
namespace {

__device__ __forceinline__ uint64_t load_bits(const char *p, int64_t elem) {
  switch (elem) {
    case 1: return *reinterpret_cast<const unsigned char *>(p);
    case 2: return *reinterpret_cast<const unsigned short *>(p);
    case 4: return *reinterpret_cast<const unsigned int *>(p);
    default: return *reinterpret_cast<const unsigned long long *>(p);
  }
}

__device__ __forceinline__ void store_bits(char *p, int64_t elem, uint64_t v) {
  switch (elem) {
    case 1: *reinterpret_cast<unsigned char *>(p) = (unsigned char)v; break;
    case 2: *reinterpret_cast<unsigned short *>(p) = (unsigned short)v; break;
    case 4: *reinterpret_cast<unsigned int *>(p) = (unsigned int)v; break;
    default: *reinterpret_cast<unsigned long long *>(p) = v; break;
  }
}

// ---- reductions ("kinds"): identity, combine, element <-> accumulator ----

// uint8/int8/int16/int32/int64: wrapping arithmetic in 64 bits, truncated
// to the dtype at the end (the same as wrapping at every step).
template <int OP>
struct IntKind {
  using acc_t = unsigned long long;
  int32_t dtype;
  int64_t elem;
  int include_self;
  __device__ acc_t identity() const {
    return OP == AOTRUN_FB_SEG_PROD ? 1ull : 0ull;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    return OP == AOTRUN_FB_SEG_PROD ? a * b : a + b;
  }
  __device__ acc_t from_bits(uint64_t b) const {
    return (acc_t)aotrun_sm_int_value(b, dtype);
  }
  __device__ acc_t load(const char *p) const {
    return from_bits(load_bits(p, elem));
  }
  __device__ void store(char *p, acc_t a, int64_t n) const {
    uint64_t v = a;
    if (OP == AOTRUN_FB_SEG_MEAN) {
      int64_t s = aotrun_sm_int_wrap(a, dtype);
      int64_t c = aotrun_sm_int_count(n + include_self, dtype);
      v = (uint64_t)aotrun_sm_floor_div(s, c, dtype);
    }
    store_bits(p, elem, v);
  }
};

// float16/bfloat16/float32: sums accumulate in float and round once;
// products round to the dtype at every step.
template <int OP>
struct FloatKind {
  using acc_t = float;
  int32_t dtype;
  int64_t elem;
  int include_self;
  __device__ acc_t identity() const {
    return OP == AOTRUN_FB_SEG_PROD ? 1.0f : 0.0f;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (OP == AOTRUN_FB_SEG_PROD) return aotrun_sm_round_float(a * b, dtype);
    return a + b;
  }
  __device__ acc_t from_bits(uint64_t b) const {
    return aotrun_sm_load_float(b, dtype);
  }
  __device__ acc_t load(const char *p) const {
    return from_bits(load_bits(p, elem));
  }
  __device__ void store(char *p, acc_t a, int64_t n) const {
    if (OP == AOTRUN_FB_SEG_MEAN) {  // the sum rounds first, like ATen's
      float c = (float)aotrun_sm_float_count(n + include_self, dtype);
      a = aotrun_sm_round_float(a, dtype) / c;
    }
    store_bits(p, elem, aotrun_sm_store_float(a, dtype));
  }
};

template <int OP>
struct DoubleKind {
  using acc_t = double;
  int32_t dtype;
  int64_t elem;
  int include_self;
  __device__ acc_t identity() const {
    return OP == AOTRUN_FB_SEG_PROD ? 1.0 : 0.0;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    return OP == AOTRUN_FB_SEG_PROD ? a * b : a + b;
  }
  __device__ acc_t from_bits(uint64_t b) const { return aotrun_sm_f64(b); }
  __device__ acc_t load(const char *p) const {
    return from_bits(load_bits(p, 8));
  }
  __device__ void store(char *p, acc_t a, int64_t n) const {
    if (OP == AOTRUN_FB_SEG_MEAN)
      a = a / aotrun_sm_float_count(n + include_self, dtype);
    store_bits(p, 8, aotrun_sm_f64_bits(a));
  }
};

// bool "sum": logical or.
struct BoolKind {
  using acc_t = unsigned int;
  int32_t dtype;
  int64_t elem;
  int include_self;
  __device__ acc_t identity() const { return 0u; }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a | b; }
  __device__ acc_t from_bits(uint64_t b) const { return (b & 0xffu) != 0; }
  __device__ acc_t load(const char *p) const {
    return *reinterpret_cast<const unsigned char *>(p) != 0;
  }
  __device__ void store(char *p, acc_t a, int64_t) const {
    *reinterpret_cast<unsigned char *>(p) = a != 0;
  }
};

// scatter src: the last value wins.
template <typename T>
struct AssignKind {
  using acc_t = T;
  int32_t dtype;
  int64_t elem;
  int include_self;
  __device__ acc_t identity() const { return T{}; }
  __device__ acc_t combine(acc_t, acc_t b) const { return b; }
  __device__ acc_t from_bits(uint64_t b) const {
    T v{};
    memcpy(&v, &b, sizeof(T) < sizeof b ? sizeof(T) : sizeof b);
    return v;
  }
  __device__ acc_t load(const char *p) const {
    return *reinterpret_cast<const T *>(p);
  }
  __device__ void store(char *p, acc_t a, int64_t) const {
    *reinterpret_cast<T *>(p) = a;
  }
};

}  // namespace
}  // namespace aotrun_scatter

#endif  // AOTRUN_FALLBACK_SCATTER_KINDS_CUH
