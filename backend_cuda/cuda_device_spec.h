/*
 * cuda_device_spec.h: the "device" compile spec of the CUDA backend: which
 * GPU a method runs on ("N", "cuda:N" or "cuda"; default 0), checked
 * against the devices this process sees.
 */
#ifndef AOTRUN_CUDA_DEVICE_SPEC_H
#define AOTRUN_CUDA_DEVICE_SPEC_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "plugin_api/aotrun_plugin.h"

/* *device from the specs. AOTRUN_ERR_INVALID_ARGUMENT for a value that is
 * not a device ("compile spec device \"x\" is not N, \"cuda\" or
 * \"cuda:N\"") or names a device that does not exist ("... device \"3\":
 * CUDA device 3 does not exist (this machine has 1 device)");
 * AOTRUN_ERR_ACCESS_FAILED when CUDA is not available (no driver, no
 * device), with the reason. Creates no device context. */
aotrun_status aotrun_cuda_spec_device(const aotrun_key_value *specs,
                                      size_t num_specs, int *device,
                                      aotrun_error *err);

#endif /* AOTRUN_CUDA_DEVICE_SPEC_H */
