/*
 * cuda_context.h: the calling thread's current CUDA device and per-device
 * current stream (set by the guards), and helpers to run CUDA calls on a
 * given device.
 */
#ifndef AOTRUN_SHIM_CUDA_CONTEXT_H
#define AOTRUN_SHIM_CUDA_CONTEXT_H

#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

/* Device indices the shim tracks streams for. */
#define AOTRUN_SHIM_MAX_DEVICES 64

/* The thread's current stream for device (NULL: the legacy default stream
 * or an out-of-range device). */
void *aotrun_cuda_stream_for(int32_t device);

/* Resolves -1 to the current device; fails for other negative or too
 * large indices. fn names the calling shim in the message. */
AOTITorchError aotrun_cuda_resolve_device(const char *fn, int32_t device,
                                          int32_t *out);

/* Makes device the CUDA runtime's current device until the scope exits
 * (restores the previous one). Fails with a message naming fn when CUDA is
 * unusable (no driver, no such device). */
typedef struct aotrun_device_scope {
  int prev;
  int switched;
} aotrun_device_scope;
AOTITorchError aotrun_cuda_device_enter(const char *fn, int32_t device,
                                        aotrun_device_scope *scope);
void aotrun_cuda_device_exit(const aotrun_device_scope *scope);

/* Records "fn: what failed: <cuda error name>: <cuda message> (code)". */
AOTITorchError aotrun_cuda_fail(const char *fn, const char *what, int err);

#endif /* AOTRUN_SHIM_CUDA_CONTEXT_H */
