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

/* Idx: uint32_t when numel fits (32-bit division and modulo per element:
 * 64-bit ones are emulated and made this kernel several times slower than
 * a copy), else int64_t. Each thread handles 4 consecutive elements. */
template <typename T, typename Idx>
__global__ void add_bias_kernel(T *__restrict__ y, const T *__restrict__ bias,
                                Idx n, Idx c, Idx inner, int channels_last) {
  Idx step = (Idx)gridDim.x * blockDim.x * 4;
  for (Idx base = ((Idx)blockIdx.x * blockDim.x + threadIdx.x) * 4; base < n;
       base += step) {
    /* Channels-last: the channel advances every element; NCHW: every
     * `inner` elements. left: elements still in the current channel run. */
    Idx run = channels_last ? 1 : inner;
    Idx ch = channels_last ? base % c : (base / inner) % c;
    Idx left = channels_last ? 1 : inner - base % inner;
#pragma unroll
    for (int j = 0; j < 4; j++) {
      Idx i = base + j;
      if (i >= n) break;
      if (left == 0) {
        ch = ch + 1 == c ? 0 : ch + 1;
        left = run;
      }
      y[i] = from_acc<T>(to_acc(y[i]) + to_acc(bias[ch]));
      left--;
    }
  }
}

template <typename Idx>
__global__ void add_bias_kernel_d(double *__restrict__ y,
                                  const double *__restrict__ bias, Idx n,
                                  Idx c, Idx inner, int channels_last) {
  Idx step = (Idx)gridDim.x * blockDim.x;
  for (Idx i = (Idx)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    Idx ch = channels_last ? i % c : (i / inner) % c;
    y[i] = from_acc_d(y[i] + bias[ch]);
  }
}

template <typename T, typename Idx>
void launch_bias(void *y, const void *bias, int64_t numel, int64_t channels,
                 int64_t inner, int channels_last, unsigned blocks,
                 int threads, cudaStream_t stream) {
  add_bias_kernel<T, Idx><<<blocks, threads, 0, stream>>>(
      static_cast<T *>(y), static_cast<const T *>(bias), (Idx)numel,
      (Idx)channels, (Idx)inner, channels_last);
}

template <typename T>
void launch_bias_any(void *y, const void *bias, int64_t numel,
                     int64_t channels, int64_t inner, int channels_last,
                     cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (numel + 4 * threads - 1) / (4 * threads);
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  /* Room for base + step without wrapping in 32 bits. */
  if (numel < ((int64_t)1 << 30))
    launch_bias<T, uint32_t>(y, bias, numel, channels, inner, channels_last,
                             (unsigned)blocks, threads, stream);
  else
    launch_bias<T, int64_t>(y, bias, numel, channels, inner, channels_last,
                            (unsigned)blocks, threads, stream);
}

}  // namespace

extern "C" cudaError_t aotrun_fb_conv_add_bias(void *y, const void *bias,
                                               int32_t dtype, int64_t numel,
                                               int64_t channels, int64_t inner,
                                               int channels_last,
                                               cudaStream_t stream) {
  if (numel == 0) return cudaSuccess;
  if (inner < 1) inner = 1;
  switch (dtype) {
    case 5:
      launch_bias_any<__half>(y, bias, numel, channels, inner, channels_last,
                              stream);
      break;
    case 15:
      launch_bias_any<__nv_bfloat16>(y, bias, numel, channels, inner,
                                     channels_last, stream);
      break;
    case 6:
      launch_bias_any<float>(y, bias, numel, channels, inner, channels_last,
                             stream);
      break;
    case 7: {
      const int threads = 256;
      int64_t blocks = (numel + threads - 1) / threads;
      if (blocks > 65535 * 8) blocks = 65535 * 8;
      if (numel < ((int64_t)1 << 30))
        add_bias_kernel_d<uint32_t><<<(unsigned)blocks, threads, 0, stream>>>(
            static_cast<double *>(y), static_cast<const double *>(bias),
            (uint32_t)numel, (uint32_t)channels, (uint32_t)inner,
            channels_last);
      else
        add_bias_kernel_d<int64_t><<<(unsigned)blocks, threads, 0, stream>>>(
            static_cast<double *>(y), static_cast<const double *>(bias),
            numel, channels, inner, channels_last);
      break;
    }
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
