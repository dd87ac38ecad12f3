/*
 * warm_up.c: aotrun_shim_warm_up (aotrun_shim.h): the one-time work of the
 * first GEMM / convolution / allocation done at a method's init instead of
 * inside its first call.
 *
 * Measured on the H200 (testing/gpu/profile/call_profile.c, first call of
 * an MLP and a transformer block): the first cublasGemmEx took 70 ms, the
 * first cublasLtMatmulAlgoGetHeuristic 72 ms, the first cudaMallocAsync
 * 10 ms (the pool's creation), against 40-90 us for a whole steady call.
 * That cost is per library or per device, not per shape, so one tiny call
 * of each op through the shim's own paths (the same handles, workspaces,
 * allocator and heuristic code a model's call takes) pays it.
 */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"

typedef struct warm_tensors {
  AtenTensorHandle t[4];
  int n;
  cudaStream_t stream;
} warm_tensors;

static void release(warm_tensors *w) {
  for (int i = 0; i < w->n; i++) aoti_torch_delete_tensor_object(w->t[i]);
  w->n = 0;
}

/* A float32 device tensor of `ndim` dims of size 1, kept in w, zeroed:
 * the GEMMs below read it, and compute-sanitizer's initcheck (rightly)
 * reports reads of memory nothing wrote. */
static AOTITorchError tiny(warm_tensors *w, int64_t ndim, int32_t device,
                           AtenTensorHandle *out) {
  static const int64_t ones[4] = {1, 1, 1, 1};
  AOTITorchError e = aoti_torch_empty_strided(
      ndim, ones, ones, aoti_torch_dtype_float32(),
      aoti_torch_device_type_cuda(), device, out);
  if (e != AOTI_TORCH_SUCCESS) return e;
  w->t[w->n++] = *out;
  void *data = NULL;
  e = aoti_torch_get_data_ptr(*out, &data);
  if (e != AOTI_TORCH_SUCCESS) return e;
  cudaError_t ce = cudaMemsetAsync(data, 0, sizeof(float), w->stream);
  if (ce != cudaSuccess)
    return aotrun_shim_fail("warm-up on cuda:%d: zeroing a tensor: %s",
                            (int)device, cudaGetErrorString(ce));
  return AOTI_TORCH_SUCCESS;
}

/* mm (cuBLAS GemmEx) and addmm with a vector bias (cuBLASLt, heuristic
 * query): the library initialisation of both. */
static AOTITorchError warm_gemm(int32_t device, cudaStream_t stream) {
  warm_tensors w = {.n = 0, .stream = stream};
  AtenTensorHandle a, b, out, bias;
  AOTITorchError e = tiny(&w, 2, device, &a);
  if (e == AOTI_TORCH_SUCCESS) e = tiny(&w, 2, device, &b);
  if (e == AOTI_TORCH_SUCCESS) e = tiny(&w, 2, device, &out);
  if (e == AOTI_TORCH_SUCCESS) e = tiny(&w, 1, device, &bias);
  if (e == AOTI_TORCH_SUCCESS) e = aoti_torch_cuda_mm_out(out, a, b);
  if (e == AOTI_TORCH_SUCCESS)
    e = aoti_torch_cuda_addmm_out(out, bias, a, b, 1.0, 1.0);
  release(&w);
  return e;
}

/* A 1x1x1x1 convolution: cuDNN loaded (dlopen), its handle, one algorithm
 * search. */
static AOTITorchError warm_conv(int32_t device, cudaStream_t stream) {
  warm_tensors w = {.n = 0, .stream = stream};
  AtenTensorHandle x, k, y = NULL;
  static const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  AOTITorchError e = tiny(&w, 4, device, &x);
  if (e == AOTI_TORCH_SUCCESS) e = tiny(&w, 4, device, &k);
  if (e == AOTI_TORCH_SUCCESS)
    e = aoti_torch_cuda_convolution(x, k, NULL, one, 2, zero, 2, one, 2, 0,
                                    zero, 2, 1, &y);
  if (y != NULL) aoti_torch_delete_tensor_object(y);
  release(&w);
  return e;
}

AOTITorchError aotrun_shim_warm_up(int32_t device, void *stream,
                                   uint32_t what) {
  CUDAStreamGuardHandle guard = NULL;
  AOTITorchError e = aoti_torch_create_cuda_stream_guard(stream, device,
                                                         &guard);
  if (e != AOTI_TORCH_SUCCESS) return e;
  if (what & AOTRUN_SHIM_WARM_ALLOC) {
    warm_tensors w = {.n = 0, .stream = (cudaStream_t)stream};
    AtenTensorHandle t;
    e = tiny(&w, 1, device, &t);
    release(&w);
  }
  if (e == AOTI_TORCH_SUCCESS && (what & AOTRUN_SHIM_WARM_GEMM))
    e = warm_gemm(device, (cudaStream_t)stream);
  if (e == AOTI_TORCH_SUCCESS && (what & AOTRUN_SHIM_WARM_CONV))
    e = warm_conv(device, (cudaStream_t)stream);
  /* The work is queued on `stream`; wait so a failure shows here. */
  if (e == AOTI_TORCH_SUCCESS) {
    cudaError_t ce = cudaStreamSynchronize((cudaStream_t)stream);
    if (ce != cudaSuccess)
      e = aotrun_shim_fail("warm-up on cuda:%d: %s", (int)device,
                           cudaGetErrorString(ce));
  }
  aoti_torch_delete_cuda_stream_guard(guard);
  return e;
}
