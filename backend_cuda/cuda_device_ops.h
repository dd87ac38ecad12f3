/*
 * cuda_device_ops.h: how the method runner and the weight cache reach CUDA
 * memory: stream-ordered copies (cudaMemcpyAsync), stream synchronisation,
 * and cudaMalloc / cudaFree / cudaMemcpy for constants.
 */
#ifndef AOTRUN_CUDA_DEVICE_OPS_H
#define AOTRUN_CUDA_DEVICE_OPS_H

#include "aot_loader/method_runner.h"
#include "aot_loader/weight_cache.h"
#include "backend_cuda/cuda_done_flag.h"
#include "backend_cuda/cuda_timing.h"

/* Device memory for the weight cache (static table). */
const aotrun_device_ops *aotrun_cuda_memory_ops(void);

/* What a method's runner ops reach (either may be NULL): the timing gets
 * its stop event before each synchronisation; the done counter replaces
 * cudaStreamSynchronize where armed (cuda_done_flag.h). */
typedef struct aotrun_cuda_sync_ctx {
  aotrun_cuda_timing *timing;
  aotrun_cuda_done_flag *done;
} aotrun_cuda_sync_ctx;

/* The runner's device ops over CUDA (memory = aotrun_cuda_memory_ops());
 * sync (may be NULL) must outlive the runner. */
aotrun_runner_device_ops aotrun_cuda_runner_ops(aotrun_cuda_sync_ctx *sync);

/* One stream-ordered contiguous copy; also used by the graph ops. */
aotrun_status aotrun_cuda_copy(void *dst, const void *src, size_t bytes,
                               aotrun_copy_kind kind, void *stream,
                               aotrun_error *err);
aotrun_status aotrun_cuda_synchronize(void *stream, aotrun_error *err);
/* The error a fallback kernel left for the current device, if any (what
 * aotrun_cuda_synchronize checks after the stream). */
aotrun_status aotrun_cuda_check_device_error(aotrun_error *err);

#endif /* AOTRUN_CUDA_DEVICE_OPS_H */
