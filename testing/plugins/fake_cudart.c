/*
 * fake_cudart.c: the four CUDA runtime functions `aotrun bench --device-io`
 * and `aotrun demo` resolve (cli_device_io.c), over host memory, so the
 * demo's CUDA part can be tested on a machine without a GPU
 * (AOTRUN_CUDART=libfake_cudart.so, with the _fake_cuda minimal plugin).
 * Not a CUDA runtime: only what cli_device_io.c calls.
 */
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define FAKE_ERROR_MEMORY_ALLOCATION 2 /* cudaErrorMemoryAllocation */

API int cudaMalloc(void **ptr, size_t bytes) {
  *ptr = malloc(bytes);
  return *ptr != NULL ? 0 : FAKE_ERROR_MEMORY_ALLOCATION;
}

API int cudaFree(void *ptr) {
  free(ptr);
  return 0;
}

API int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) {
  (void)kind;
  memcpy(dst, src, bytes);
  return 0;
}

API const char *cudaGetErrorString(int error) {
  return error == 0 ? "no error" : "fake_cudart error";
}
