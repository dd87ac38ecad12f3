// gemm_act.cu: the activation of _addmm_activation applied in place after a
// plain GEMM, where ATen does the same (the inputs it keeps off cuBLASLt:
// beta != 1, a 0-D or broadcast 1-D bias, m, k or n of 1). The arithmetic is
// ATen's: relu as clamp_min(x, 0) (NaN stays NaN), gelu(x, "tanh") as
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) in float for
// float16 / bfloat16 / float32 and in double for float64.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "shim_lib/fallback/fallback_kernels.h"

#include <math.h>
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif

namespace {

__device__ inline float to_op(__half x) { return __half2float(x); }
__device__ inline float to_op(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float to_op(float x) { return x; }
__device__ inline double to_op(double x) { return x; }
template <typename T, typename O> __device__ inline T from_op(O x);
template <> __device__ inline __half from_op<__half, float>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 from_op<__nv_bfloat16, float>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ inline float from_op<float, float>(float x) {
  return x;
}
template <> __device__ inline double from_op<double, double>(double x) {
  return x;
}

template <typename O> __device__ inline O gelu_tanh(O x) {
  const O kBeta = O(M_SQRT2 * M_2_SQRTPI * 0.5);
  const O kKappa = O(0.044715);
  O cube = x * x * x;
  O inner = kBeta * (x + kKappa * cube);
  return O(0.5) * x * (O(1) + tanh(inner));
}

template <typename O> __device__ inline O relu(O x) {
  return x < O(0) ? O(0) : x; /* NaN < 0 is false: NaN stays */
}

template <typename T, typename O>
__global__ void act_kernel(T *y, int64_t rows, int64_t cols, int64_t ld,
                           int gelu) {
  int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = i / cols, c = i - r * cols;
    T *p = y + r * ld + c;
    O x = to_op(*p);
    *p = from_op<T, O>(gelu ? gelu_tanh<O>(x) : relu<O>(x));
  }
}

template <typename T, typename O>
cudaError_t launch(void *y, int64_t rows, int64_t cols, int64_t ld, int gelu,
                   cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (rows * cols + threads - 1) / threads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  act_kernel<T, O><<<(unsigned)blocks, threads, 0, stream>>>(
      static_cast<T *>(y), rows, cols, ld, gelu);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t aotrun_fb_gemm_activation(void *y, int32_t dtype,
                                                 int64_t rows, int64_t cols,
                                                 int64_t ld, int gelu,
                                                 cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  switch (dtype) {
    case 5: return launch<__half, float>(y, rows, cols, ld, gelu, stream);
    case 15:
      return launch<__nv_bfloat16, float>(y, rows, cols, ld, gelu, stream);
    case 6: return launch<float, float>(y, rows, cols, ld, gelu, stream);
    case 7: return launch<double, double>(y, rows, cols, ld, gelu, stream);
    default: return cudaErrorInvalidValue;
  }
}
