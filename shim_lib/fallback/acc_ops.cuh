// acc_ops.cuh: the arithmetic of an accumulating write per dtype, on the
// raw storage type: Acc is the type sums are kept in (float for
// float16/bfloat16, 64-bit for integers so a sum wraps exactly as the
// dtype's would), load widens an element, store rounds once.
#ifndef AOTRUN_FALLBACK_ACC_OPS_CUH
#define AOTRUN_FALLBACK_ACC_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "shim_lib/fallback/index_kernels.h"

namespace aotrun_fb {

struct OpF16 {
  using T = unsigned short;
  using Acc = float;
  __device__ static Acc zero() { return 0.0f; }
  __device__ static Acc load(T x) { return __half2float(__ushort_as_half(x)); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static T store(Acc a) {
    return __half_as_ushort(__float2half_rn(a));
  }
};

struct OpBF16 {
  using T = unsigned short;
  using Acc = float;
  __device__ static Acc zero() { return 0.0f; }
  __device__ static Acc load(T x) {
    return __bfloat162float(__ushort_as_bfloat16(x));
  }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static T store(Acc a) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(a));
  }
};

template <typename F>
struct OpFloat {
  using T = F;
  using Acc = F;
  __device__ static Acc zero() { return F(0); }
  __device__ static Acc load(T x) { return x; }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static T store(Acc a) { return a; }
};

// Integers of any signedness: the low bits of a 64-bit sum are the wrapped
// sum in the dtype.
template <typename U>
struct OpInt {
  using T = U;
  using Acc = unsigned long long;
  __device__ static Acc zero() { return 0ull; }
  __device__ static Acc load(T x) { return static_cast<Acc>(x); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static T store(Acc a) { return static_cast<T>(a); }
};

// bool + bool is logical or in ATen's accumulate.
struct OpBool {
  using T = unsigned char;
  using Acc = unsigned long long;
  __device__ static Acc zero() { return 0ull; }
  __device__ static Acc load(T x) { return x != 0 ? 1ull : 0ull; }
  __device__ static Acc add(Acc a, Acc b) { return a | b; }
  __device__ static T store(Acc a) { return a != 0 ? 1 : 0; }
};

template <typename V>  // float2 or double2
struct OpComplex {
  using T = V;
  using Acc = V;
  __device__ static Acc zero() { return Acc{0, 0}; }
  __device__ static Acc load(T x) { return x; }
  __device__ static Acc add(Acc a, Acc b) { return Acc{a.x + b.x, a.y + b.y}; }
  __device__ static T store(Acc a) { return a; }
};

// Calls f.template operator()<Op>() for the Op of acc_kind; returns
// cudaErrorInvalidValue for an unknown kind.
template <typename F>
cudaError_t dispatch_acc(int acc_kind, F &&f) {
  switch (acc_kind) {
    case AOTRUN_FB_ACC_F16: return f.template run<OpF16>();
    case AOTRUN_FB_ACC_BF16: return f.template run<OpBF16>();
    case AOTRUN_FB_ACC_F32: return f.template run<OpFloat<float>>();
    case AOTRUN_FB_ACC_F64: return f.template run<OpFloat<double>>();
    case AOTRUN_FB_ACC_I8: return f.template run<OpInt<unsigned char>>();
    case AOTRUN_FB_ACC_I16: return f.template run<OpInt<unsigned short>>();
    case AOTRUN_FB_ACC_I32: return f.template run<OpInt<unsigned int>>();
    case AOTRUN_FB_ACC_I64: return f.template run<OpInt<unsigned long long>>();
    case AOTRUN_FB_ACC_BOOL: return f.template run<OpBool>();
    case AOTRUN_FB_ACC_C64: return f.template run<OpComplex<float2>>();
    case AOTRUN_FB_ACC_C128: return f.template run<OpComplex<double2>>();
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotrun_fb

#endif  // AOTRUN_FALLBACK_ACC_OPS_CUH
