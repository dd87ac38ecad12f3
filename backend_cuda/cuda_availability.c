/* cuda_availability.c: see cuda_availability.h. */
#include "backend_cuda/cuda_availability.h"

#include <stdio.h>

#include <cuda_runtime_api.h>

/* Device count, or -1 with the reason. */
static int device_count(char *reason, size_t size) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(reason, size, "cudaGetDeviceCount failed: %s (%s, error %d)",
             cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
    (void)cudaGetLastError(); /* leave no sticky error behind */
    return -1;
  }
  if (n == 0) snprintf(reason, size, "no CUDA device");
  return n;
}

int aotrun_cuda_available(char *reason, size_t reason_size) {
  char buf[256];
  int n = device_count(buf, sizeof buf);
  if (n > 0) buf[0] = '\0';
  if (reason != NULL && reason_size > 0) snprintf(reason, reason_size, "%s", buf);
  return n > 0;
}

aotrun_status aotrun_cuda_use_device(int index, aotrun_error *err) {
  char reason[256];
  int n = device_count(reason, sizeof reason);
  if (n <= 0)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "CUDA is not available: %s", reason);
  if (index < 0 || index >= n)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "CUDA device %d does not exist (%d device%s)",
                            index, n, n == 1 ? "" : "s");
  cudaError_t e = cudaSetDevice(index);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaSetDevice(%d) failed: %s", index,
                            cudaGetErrorString(e));
  }
  return AOTRUN_OK;
}
