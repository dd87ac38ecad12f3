/* cuda_device_ops.c: see cuda_device_ops.h. */
#include "backend_cuda/cuda_device_ops.h"

#include <cuda_runtime_api.h>

#include "backend_cuda/cuda_device_scope.h"
#include "backend_cuda/cuda_staged_upload.h"
#include "shim_lib/aotrun_shim.h"

static const char *kind_name(aotrun_copy_kind kind) {
  switch (kind) {
    case AOTRUN_COPY_HOST_TO_DEVICE: return "host to device";
    case AOTRUN_COPY_DEVICE_TO_HOST: return "device to host";
    case AOTRUN_COPY_DEVICE_TO_DEVICE: return "device to device";
    default: return "host to host";
  }
}

static enum cudaMemcpyKind cuda_kind(aotrun_copy_kind kind) {
  switch (kind) {
    case AOTRUN_COPY_HOST_TO_DEVICE: return cudaMemcpyHostToDevice;
    case AOTRUN_COPY_DEVICE_TO_HOST: return cudaMemcpyDeviceToHost;
    case AOTRUN_COPY_DEVICE_TO_DEVICE: return cudaMemcpyDeviceToDevice;
    default: return cudaMemcpyHostToHost;
  }
}

aotrun_status aotrun_cuda_copy(void *dst, const void *src, size_t bytes,
                               aotrun_copy_kind kind, void *stream,
                               aotrun_error *err) {
  if (bytes == 0) return AOTRUN_OK;
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cuda_kind(kind),
                                  (cudaStream_t)stream);
  if (e != cudaSuccess)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaMemcpyAsync (%zu bytes, %s) failed: %s",
                            bytes, kind_name(kind), cudaGetErrorString(e));
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_synchronize(void *stream, aotrun_error *err) {
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  if (e != cudaSuccess)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaStreamSynchronize failed: %s",
                            cudaGetErrorString(e));
  return aotrun_cuda_check_device_error(err);
}

aotrun_status aotrun_cuda_check_device_error(aotrun_error *err) {
  /* Bad data the fallback kernels found (an index out of range) is
   * reported here, at the first synchronisation after it was written. */
  int device = 0;
  char msg[512];
  if (cudaGetDevice(&device) == cudaSuccess &&
      aotrun_shim_take_device_error(device, msg, sizeof msg))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT, "%s", msg);
  return AOTRUN_OK;
}

/* A copy queued after a graph's launch: the call's synchronisation must
 * wait for it, so the done counter is not awaited (cuda_done_flag.h). */
static aotrun_status runner_copy(void *ctx, void *dst, const void *src,
                                 size_t bytes, aotrun_copy_kind kind,
                                 void *stream, aotrun_error *err) {
  const aotrun_cuda_sync_ctx *c = ctx;
  if (c != NULL && c->done != NULL) aotrun_cuda_done_flag_disarm(c->done);
  return aotrun_cuda_copy(dst, src, bytes, kind, stream, err);
}

/* The timing's stop event goes in just before the call's final
 * synchronisation, which is the done counter's wait where armed. */
static aotrun_status runner_sync(void *ctx, void *stream, aotrun_error *err) {
  const aotrun_cuda_sync_ctx *c = ctx;
  if (c != NULL && c->timing != NULL)
    aotrun_cuda_timing_mark_end(c->timing, stream);
  return aotrun_cuda_done_flag_sync(c != NULL ? c->done : NULL, stream, err);
}

/* ---- constants' memory (weight cache: codes only, no messages) ---- */

static aotrun_status mem_alloc(void *ctx, size_t bytes, void **ptr) {
  (void)ctx;
  *ptr = NULL;
  if (cudaMalloc(ptr, bytes ? bytes : 1) != cudaSuccess) {
    (void)cudaGetLastError();
    *ptr = NULL;
    return AOTRUN_ERR_OUT_OF_MEMORY;
  }
  return AOTRUN_OK;
}

static void mem_free(void *ctx, void *ptr) {
  (void)ctx;
  if (ptr != NULL) (void)cudaFree(ptr);
}

/* Large weights go through pinned staging (cuda_staged_upload.h). The op
 * has no error out: the weight cache names the FQN and both sizes. */
static aotrun_status mem_upload(void *ctx, void *dst, const void *src,
                                size_t bytes) {
  (void)ctx;
  aotrun_error err;
  return aotrun_cuda_staged_upload(dst, src, bytes, &err);
}

const aotrun_device_ops *aotrun_cuda_memory_ops(void) {
  static const aotrun_device_ops kOps = {NULL, mem_alloc, mem_free,
                                         mem_upload};
  return &kOps;
}

/* ---- load-time checks (docs/loading.md) ---- */

/* cudaMemGetInfo reports on the current device: `device` is made current
 * for the query and the caller's device given back. */
static aotrun_status runner_free_memory(void *ctx, int32_t device,
                                        uint64_t *free_bytes,
                                        aotrun_error *err) {
  (void)ctx;
  size_t free_b = 0, total = 0;
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(device, &scope, err);
  if (st != AOTRUN_OK) return st;
  cudaError_t e = cudaMemGetInfo(&free_b, &total);
  aotrun_cuda_device_leave(&scope);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaMemGetInfo on cuda:%d failed: %s",
                            (int)device, cudaGetErrorString(e));
  }
  *free_bytes = free_b;
  return AOTRUN_OK;
}

static aotrun_status runner_compute_capability(void *ctx, int32_t device,
                                               uint32_t *arch,
                                               aotrun_error *err) {
  (void)ctx;
  int major = 0, minor = 0;
  cudaError_t e =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                               device);
  if (e != cudaSuccess || major <= 0 || minor < 0) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cannot read the compute capability of cuda:%d: "
                            "%s",
                            (int)device, cudaGetErrorString(e));
  }
  *arch = (uint32_t)(major * 10 + minor);
  return AOTRUN_OK;
}

static aotrun_status runner_driver_version(void *ctx, int *version,
                                           aotrun_error *err) {
  (void)ctx;
  cudaError_t e = cudaDriverGetVersion(version);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cannot read the CUDA driver version: %s",
                            cudaGetErrorString(e));
  }
  return AOTRUN_OK;
}

aotrun_runner_device_ops aotrun_cuda_runner_ops(aotrun_cuda_sync_ctx *sync) {
  aotrun_runner_device_ops ops = {sync,
                                  runner_copy,
                                  runner_sync,
                                  aotrun_cuda_memory_ops(),
                                  runner_free_memory,
                                  runner_compute_capability,
                                  runner_driver_version};
  return ops;
}
