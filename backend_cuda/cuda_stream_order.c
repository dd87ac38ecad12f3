/* cuda_stream_order.c: see cuda_stream_order.h. */
#include "backend_cuda/cuda_stream_order.h"

#include <cuda_runtime_api.h>

static aotrun_status failed(aotrun_error *err, const char *what,
                            cudaError_t e) {
  (void)cudaGetLastError();
  return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                          "ordering against the caller's stream: %s failed: "
                          "%s (%s)",
                          what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static aotrun_status event_for(void **slot, aotrun_error *err) {
  if (*slot != NULL) return AOTRUN_OK;
  cudaEvent_t e = NULL;
  cudaError_t rc = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (rc != cudaSuccess) return failed(err, "cudaEventCreateWithFlags", rc);
  *slot = e;
  return AOTRUN_OK;
}

/* `to` waits for what is queued on `from` now. */
static aotrun_status wait_for(void **slot, void *from, void *to,
                              aotrun_error *err) {
  aotrun_status st = event_for(slot, err);
  if (st != AOTRUN_OK) return st;
  cudaError_t rc = cudaEventRecord((cudaEvent_t)*slot, (cudaStream_t)from);
  if (rc != cudaSuccess) return failed(err, "cudaEventRecord", rc);
  rc = cudaStreamWaitEvent((cudaStream_t)to, (cudaEvent_t)*slot, 0);
  if (rc != cudaSuccess) return failed(err, "cudaStreamWaitEvent", rc);
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_order_before(aotrun_cuda_stream_order *o,
                                       void *caller, void *method_stream,
                                       aotrun_error *err) {
  return wait_for(&o->before, caller, method_stream, err);
}

aotrun_status aotrun_cuda_order_after(aotrun_cuda_stream_order *o,
                                      void *caller, void *method_stream,
                                      aotrun_error *err) {
  return wait_for(&o->after, method_stream, caller, err);
}

void aotrun_cuda_stream_order_destroy(aotrun_cuda_stream_order *o) {
  if (o->before != NULL) (void)cudaEventDestroy((cudaEvent_t)o->before);
  if (o->after != NULL) (void)cudaEventDestroy((cudaEvent_t)o->after);
  o->before = o->after = NULL;
}
