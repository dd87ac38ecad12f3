/* cuda_device_spec.c: see cuda_device_spec.h. */
#include "backend_cuda/cuda_device_spec.h"

#include <stdlib.h>
#include <string.h>

#include "backend_cuda/cuda_availability.h"
#include <cuda_runtime_api.h>

/* The largest index accepted before asking CUDA (bounds the parse). */
#define MAX_DEVICE_INDEX 4096

/* "N", "cuda:N" or "cuda"; -1 when none of them. */
static long parse_device(const char *v) {
  if (strcmp(v, "cuda") == 0) return 0;
  const char *digits = strncmp(v, "cuda:", 5) == 0 ? v + 5 : v;
  if (*digits < '0' || *digits > '9') return -1;
  char *end = NULL;
  long idx = strtol(digits, &end, 10);
  if (end == NULL || *end != '\0' || idx < 0 || idx > MAX_DEVICE_INDEX)
    return -1;
  return idx;
}

aotrun_status aotrun_cuda_spec_device(const aotrun_key_value *specs,
                                      size_t num_specs, int *device,
                                      aotrun_error *err) {
  *device = 0;
  const char *given = NULL;
  for (size_t i = 0; specs != NULL && i < num_specs; i++) {
    if (specs[i].key == NULL || strcmp(specs[i].key, "device") != 0) continue;
    given = specs[i].value != NULL ? specs[i].value : "";
    long idx = parse_device(given);
    if (idx < 0)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "compile spec device \"%s\" is not N, "
                              "\"cuda\" or \"cuda:N\"",
                              given);
    *device = (int)idx;
  }
  char reason[256];
  if (!aotrun_cuda_available(reason, sizeof reason))
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "CUDA is not available: %s", reason);
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    n = 0;
  }
  if (*device < n) return AOTRUN_OK;
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "compile spec device \"%s\": CUDA device %d does "
                          "not exist (this machine has %d device%s)",
                          given != NULL ? given : "0", *device, n,
                          n == 1 ? "" : "s");
}
