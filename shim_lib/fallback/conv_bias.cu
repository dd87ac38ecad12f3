// conv_bias.cu: adds a convolution's bias to its dense result, per channel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "shim_lib/fallback/fallback_kernels.h"

namespace {

__device__ inline float to_acc(__half x) { return __half2float(x); }
__device__ inline float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float to_acc(float x) { return x; }
template <typename T> __device__ inline T from_acc(float x);
template <> __device__ inline __half from_acc<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ inline __nv_bfloat16 from_acc<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ inline float from_acc<float>(float x) { return x; }
__device__ inline double from_acc_d(double x) { return x; }

template <typename T>
__global__ void add_bias_kernel(T *y, const T *bias, int64_t n, int64_t c,
                                int64_t inner, int channels_last) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t ch = channels_last ? i % c : (i / inner) % c;
    y[i] = from_acc<T>(to_acc(y[i]) + to_acc(bias[ch]));
  }
}

__global__ void add_bias_kernel_d(double *y, const double *bias, int64_t n,
                                  int64_t c, int64_t inner,
                                  int channels_last) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t ch = channels_last ? i % c : (i / inner) % c;
    y[i] = from_acc_d(y[i] + bias[ch]);
  }
}

}  // namespace

extern "C" cudaError_t aotrun_fb_conv_add_bias(void *y, const void *bias,
                                               int32_t dtype, int64_t numel,
                                               int64_t channels, int64_t inner,
                                               int channels_last,
                                               cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  const int threads = 256;
  int64_t blocks = (numel + threads - 1) / threads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  unsigned b = (unsigned)blocks;
  if (inner < 1) inner = 1;
  switch (dtype) {
    case 5:
      add_bias_kernel<__half><<<b, threads, 0, stream>>>(
          static_cast<__half *>(y), static_cast<const __half *>(bias), numel,
          channels, inner, channels_last);
      break;
    case 15:
      add_bias_kernel<__nv_bfloat16><<<b, threads, 0, stream>>>(
          static_cast<__nv_bfloat16 *>(y),
          static_cast<const __nv_bfloat16 *>(bias), numel, channels, inner,
          channels_last);
      break;
    case 6:
      add_bias_kernel<float><<<b, threads, 0, stream>>>(
          static_cast<float *>(y), static_cast<const float *>(bias), numel,
          channels, inner, channels_last);
      break;
    case 7:
      add_bias_kernel_d<<<b, threads, 0, stream>>>(
          static_cast<double *>(y), static_cast<const double *>(bias), numel,
          channels, inner, channels_last);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
