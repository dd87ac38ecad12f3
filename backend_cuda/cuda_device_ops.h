/*
 * cuda_device_ops.h: how the method runner and the weight cache reach CUDA
 * memory: stream-ordered copies (cudaMemcpyAsync), stream synchronisation,
 * and cudaMalloc / cudaFree / cudaMemcpy for constants.
 */
#ifndef AOTRUN_CUDA_DEVICE_OPS_H
#define AOTRUN_CUDA_DEVICE_OPS_H

#include "aot_loader/method_runner.h"
#include "aot_loader/weight_cache.h"
#include "backend_cuda/cuda_timing.h"

/* Device memory for the weight cache (static table). */
const aotrun_device_ops *aotrun_cuda_memory_ops(void);

/* The runner's device ops over CUDA (memory = aotrun_cuda_memory_ops());
 * timing (may be NULL) gets its stop event before each synchronisation. */
aotrun_runner_device_ops aotrun_cuda_runner_ops(aotrun_cuda_timing *timing);

/* One stream-ordered contiguous copy; also used by the graph ops. */
aotrun_status aotrun_cuda_copy(void *dst, const void *src, size_t bytes,
                               aotrun_copy_kind kind, void *stream,
                               aotrun_error *err);
aotrun_status aotrun_cuda_synchronize(void *stream, aotrun_error *err);

#endif /* AOTRUN_CUDA_DEVICE_OPS_H */
