/* cuda_device_scope.c: see cuda_device_scope.h. */
#include "backend_cuda/cuda_device_scope.h"

#include <cuda_runtime_api.h>

aotrun_status aotrun_cuda_device_enter(int device,
                                       aotrun_cuda_device_scope *s,
                                       aotrun_error *err) {
  s->changed = 0;
  s->previous = 0;
  cudaError_t e = cudaGetDevice(&s->previous);
  if (e == cudaSuccess && s->previous == device) return AOTRUN_OK;
  if (e != cudaSuccess) (void)cudaGetLastError();
  e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaSetDevice(%d) failed: %s", device,
                            cudaGetErrorString(e));
  }
  s->changed = 1;
  return AOTRUN_OK;
}

void aotrun_cuda_device_leave(aotrun_cuda_device_scope *s) {
  if (!s->changed) return;
  if (cudaSetDevice(s->previous) != cudaSuccess) (void)cudaGetLastError();
  s->changed = 0;
}
