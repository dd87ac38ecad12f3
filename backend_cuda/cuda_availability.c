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
