/*
 * cuda_identity.h: the CUDA backend's identity and devices (ABI 1.1
 * get_info, get_device_count, get_device_info) and can_run, over the CUDA
 * runtime. None of them aborts without a driver: they fail with
 * AOTRUN_ERR_ACCESS_FAILED and the runtime's reason. Thread-safe.
 */
#ifndef AOTRUN_CUDA_IDENTITY_H
#define AOTRUN_CUDA_IDENTITY_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "plugin_api/aotrun_plugin.h"

/* The backend's version and vendor, and a build string naming the CUDA
 * runtime it was built with and the runtime and driver it runs with ("CUDA
 * runtime 13.0 (built with 13.0), driver 13.0"; "driver none" without
 * one). Strings are static: valid until the plugin is unloaded. */
aotrun_status aotrun_cuda_get_info(aotrun_backend_info *out,
                                   aotrun_error *err);

/* cudaGetDeviceCount: no device context is created. No device: 0. */
aotrun_status aotrun_cuda_device_count(int32_t *count, aotrun_error *err);

/* Name, total memory and compute capability from
 * cudaGetDeviceProperties (no context); free memory from cudaMemGetInfo,
 * which needs the device's primary context (created if the process has
 * none yet; the caller's current device is restored). */
aotrun_status aotrun_cuda_device_info(int32_t device, aotrun_device_info *out,
                                      aotrun_error *err);

/* can_run: the specs' method and device (cuda_device_spec.h), and the
 * program checked against that GPU's compute capability without loading
 * it (aot_loader/method_check.h). */
aotrun_status aotrun_cuda_can_run(const aotrun_host_api *host,
                                  const void *processed, size_t size,
                                  const aotrun_key_value *specs,
                                  size_t num_specs, aotrun_error *err);

#endif /* AOTRUN_CUDA_IDENTITY_H */
