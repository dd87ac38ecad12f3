/* bench_gemm.c: times aoti_torch_cuda_mm_out (cuBLAS) for a few MLP-like
 * shapes and dtypes with CUDA events on the op's current stream.
 *   bench_gemm [iterations]   (default 200)
 * Prints one line per case: shape, dtype, microseconds per call (GPU time
 * between events), host microseconds per call (launch overhead) and TFLOP/s.
 * Without a GPU it prints why and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "testing/fallback/fallback_test_util.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int bench_case(cudaStream_t stream, int32_t dtype, int64_t m, int64_t k,
                      int64_t n, int iters) {
  fb_tensor a, b, out;
  const int64_t sa[2] = {m, k}, so[2] = {m, n};
  /* mat2 as a transposed [n, k] weight, the way nn.Linear calls mm. */
  const int64_t tb[2] = {1, k};
  const int64_t sbt[2] = {k, n};
  uint64_t seed = 42;
  if (fb_tensor_new(&a, dtype, 2, sa, NULL) ||
      fb_tensor_new(&b, dtype, 2, sbt, tb) ||
      fb_tensor_new(&out, dtype, 2, so, NULL))
    return -1;
  fb_tensor_fill_random(&a, &seed);
  fb_tensor_fill_random(&b, &seed);
  if (fb_tensor_upload(&a) || fb_tensor_upload(&b)) return -1;
  for (int i = 0; i < 10; i++)
    if (aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle)) {
      fprintf(stderr, "mm_out failed: %s\n", aotrun_shim_last_error());
      return -1;
    }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaStreamSynchronize(stream);
  double h0 = now_us();
  cudaEventRecord(e0, stream);
  for (int i = 0; i < iters; i++)
    aoti_torch_cuda_mm_out(out.handle, a.handle, b.handle);
  double h1 = now_us();
  cudaEventRecord(e1, stream);
  cudaEventSynchronize(e1);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, e0, e1);
  double us = ms * 1e3 / iters;
  double tflops = 2.0 * (double)m * (double)n * (double)k / (us * 1e-6) / 1e12;
  printf("%6lld x %6lld x %6lld  %-9s  %10.2f us/call  host %7.2f us/call  "
         "%8.2f TFLOP/s\n",
         (long long)m, (long long)k, (long long)n, fb_dtype_str(dtype), us,
         (h1 - h0) / iters, tflops);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  fb_tensor_free(&a);
  fb_tensor_free(&b);
  fb_tensor_free(&out);
  return 0;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  if (iters <= 0) iters = 200;
  char why[256];
  if (!fb_gpu_available(why, sizeof why)) {
    printf("bench_gemm: skipped: %s\n", why);
    return 0;
  }
  cudaStream_t stream;
  CUDAStreamGuardHandle guard;
  if (cudaStreamCreate(&stream) != cudaSuccess ||
      aoti_torch_create_cuda_stream_guard(stream, 0, &guard)) {
    fprintf(stderr, "bench_gemm: cannot set up a stream\n");
    return 1;
  }
  /* M x K x N: batch x in_features x out_features of MLP layers. */
  const int64_t shapes[][3] = {{1, 1024, 1024},   {8, 1024, 4096},
                               {64, 4096, 1024},  {256, 4096, 4096},
                               {2048, 1024, 1024}, {4096, 4096, 4096}};
  const int32_t dtypes[] = {FB_F32, FB_BF16, FB_F16, FB_F64};
  printf("    M  x      K x      N  dtype      (%d iterations each)\n", iters);
  int rc = 0;
  for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      if (dtypes[d] == FB_F64 && shapes[s][0] * shapes[s][2] > 256 * 4096)
        continue; /* float64 is slow; keep the run short */
      if (bench_case(stream, dtypes[d], shapes[s][0], shapes[s][1],
                     shapes[s][2], iters))
        rc = 1;
    }
  aoti_torch_delete_cuda_stream_guard(guard);
  cudaStreamDestroy(stream);
  return rc;
}
