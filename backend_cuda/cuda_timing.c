/* cuda_timing.c: see cuda_timing.h. */
#include "backend_cuda/cuda_timing.h"

#include <cuda_runtime_api.h>

void aotrun_cuda_timing_init(aotrun_cuda_timing *t) {
  t->enabled = 0;
  t->start = t->stop = NULL;
  t->started = t->stopped = 0;
  t->last_ns = -1;
}

void aotrun_cuda_timing_destroy(aotrun_cuda_timing *t) {
  if (t->start != NULL) (void)cudaEventDestroy((cudaEvent_t)t->start);
  if (t->stop != NULL) (void)cudaEventDestroy((cudaEvent_t)t->stop);
  aotrun_cuda_timing_init(t);
}

aotrun_status aotrun_cuda_timing_enable(aotrun_cuda_timing *t, int on,
                                        aotrun_error *err) {
  if (!on || t->enabled) {
    if (!on) aotrun_cuda_timing_destroy(t);
    return AOTRUN_OK;
  }
  cudaEvent_t a = NULL, b = NULL;
  cudaError_t e = cudaEventCreate(&a);
  if (e == cudaSuccess) e = cudaEventCreate(&b);
  if (e != cudaSuccess) {
    if (a != NULL) (void)cudaEventDestroy(a);
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "option 'gpu_timing': cudaEventCreate failed: %s",
                            cudaGetErrorString(e));
  }
  t->start = a;
  t->stop = b;
  t->enabled = 1;
  return AOTRUN_OK;
}

void aotrun_cuda_timing_begin(aotrun_cuda_timing *t, void *stream) {
  t->started = t->stopped = 0;
  if (!t->enabled) return;
  t->started = cudaEventRecord((cudaEvent_t)t->start, (cudaStream_t)stream) ==
               cudaSuccess;
}

void aotrun_cuda_timing_mark_end(aotrun_cuda_timing *t, void *stream) {
  if (!t->enabled || !t->started) return;
  t->stopped = cudaEventRecord((cudaEvent_t)t->stop, (cudaStream_t)stream) ==
               cudaSuccess;
}

void aotrun_cuda_timing_finish(aotrun_cuda_timing *t, int call_ok) {
  float ms = 0;
  t->last_ns = -1;
  if (t->enabled && call_ok && t->started && t->stopped &&
      cudaEventSynchronize((cudaEvent_t)t->stop) == cudaSuccess &&
      cudaEventElapsedTime(&ms, (cudaEvent_t)t->start,
                           (cudaEvent_t)t->stop) == cudaSuccess)
    t->last_ns = (int64_t)((double)ms * 1e6);
  else if (t->enabled)
    (void)cudaGetLastError();
  t->started = t->stopped = 0;
}
