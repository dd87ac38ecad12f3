/* device_error.c: the per-device report slots of device_error.h. */
#include "shim_lib/device_error.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/cuda_context.h"
#include "shim_lib/shim_release.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static aotrun_device_error *g_host[AOTRUN_SHIM_MAX_DEVICES];
static aotrun_device_error *g_dev[AOTRUN_SHIM_MAX_DEVICES];

/* Allocated once per device and kept until aotrun_device_error_release:
 * kernels of captured graphs hold its address. */
static AOTITorchError make_slot(const char *fn, int32_t device) {
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, device, &scope)) return AOTI_TORCH_FAILURE;
  void *host = NULL, *dev = NULL;
  cudaError_t e = cudaHostAlloc(&host, sizeof(aotrun_device_error),
                                cudaHostAllocMapped | cudaHostAllocPortable);
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&dev, host, 0);
  aotrun_cuda_device_exit(&scope);
  if (e != cudaSuccess) {
    if (host != NULL) (void)cudaFreeHost(host);
    return aotrun_cuda_fail(fn, "allocating the device error slot", e);
  }
  memset(host, 0, sizeof(aotrun_device_error));
  g_host[device] = host;
  g_dev[device] = dev;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_shim_device_error_slot(int32_t device, void **slot) {
  static const char fn[] = "aotrun_shim_device_error_slot";
  *slot = NULL;
  if (device < 0 || device >= AOTRUN_SHIM_MAX_DEVICES)
    return aotrun_shim_fail("%s: device %d is out of range [0, %d)", fn,
                            (int)device, AOTRUN_SHIM_MAX_DEVICES);
  pthread_mutex_lock(&g_lock);
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (g_dev[device] == NULL) err = make_slot(fn, device);
  *slot = g_dev[device];
  pthread_mutex_unlock(&g_lock);
  return err;
}

static const char *name_or(uint64_t addr, const char *fallback) {
  return addr != 0 ? (const char *)(uintptr_t)addr : fallback;
}

int aotrun_shim_take_device_error(int32_t device, char *msg, size_t cap) {
  if (device < 0 || device >= AOTRUN_SHIM_MAX_DEVICES) return 0;
  pthread_mutex_lock(&g_lock);
  volatile aotrun_device_error *e = g_host[device];
  int found = e != NULL && e->code != AOTRUN_DEVERR_NONE;
  if (found) {
    if (msg != NULL && cap > 0 && e->code == AOTRUN_DEVERR_COUNT_MISMATCH)
      snprintf(msg, cap,
               "%s: shape mismatch: the mask selects %lld elements but '%s' "
               "has %lld in dim %d (found on cuda:%d)",
               name_or(e->op, "a CUDA fallback op"), (long long)e->value,
               name_or(e->arg, "values"), (long long)e->bound, (int)e->dim,
               (int)device);
    else if (msg != NULL && cap > 0 && e->code == AOTRUN_DEVERR_PROBABILITY) {
      int64_t bits = e->value;
      double p;
      memcpy(&p, &bits, sizeof p);
      snprintf(msg, cap,
               "%s: '%s' holds the probability %g (for element %lld of "
               "'self'), outside [0, 1]; that element was set to 0 (found on "
               "cuda:%d)",
               name_or(e->op, "a CUDA fallback op"), name_or(e->arg, "p"), p,
               (long long)e->bound, (int)device);
    } else if (msg != NULL && cap > 0)
      snprintf(msg, cap,
               "%s: index %lld in '%s' is out of bounds for dim %d with size "
               "%lld (found on cuda:%d)",
               name_or(e->op, "a CUDA fallback op"),
               (long long)e->value, name_or(e->arg, "index"), (int)e->dim,
               (long long)e->bound, (int)device);
    e->op = e->arg = 0;
    e->value = e->bound = 0;
    e->dim = 0;
    e->code = AOTRUN_DEVERR_NONE; /* last: the slot is free again */
  }
  pthread_mutex_unlock(&g_lock);
  return found;
}

void aotrun_device_error_release(void) {
  pthread_mutex_lock(&g_lock);
  for (int d = 0; d < AOTRUN_SHIM_MAX_DEVICES; d++) {
    if (g_host[d] != NULL) (void)cudaFreeHost(g_host[d]);
    g_host[d] = NULL;
    g_dev[d] = NULL;
  }
  (void)cudaGetLastError();
  pthread_mutex_unlock(&g_lock);
}
