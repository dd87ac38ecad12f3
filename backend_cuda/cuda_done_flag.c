/* cuda_done_flag.c: see cuda_done_flag.h. */
#include "backend_cuda/cuda_done_flag.h"

#include <string.h>

#include <cuda_runtime_api.h>

#include "backend_cuda/cuda_device_ops.h"
#include "backend_cuda/done_flag_kernel.h"
#include "backend_cuda/done_wait.h"

/* Reads between two cudaStreamQuery calls: a few microseconds of spinning,
 * so a wait behind a failed kernel ends soon. */
#define SPINS_PER_QUERY 8192u

void aotrun_cuda_done_flag_init(aotrun_cuda_done_flag *f) {
  memset(f, 0, sizeof *f);
}

void aotrun_cuda_done_flag_destroy(aotrun_cuda_done_flag *f) {
  /* The device memory first: cudaFree waits for the device, so a replay
   * still in flight (an async call) has written the host word before that
   * word is freed. */
  if (f->count != NULL) (void)cudaFree(f->count);
  if (f->host != NULL) (void)cudaFreeHost((void *)f->host);
  aotrun_cuda_done_flag_init(f);
}

static aotrun_status make_memory(aotrun_cuda_done_flag *f, aotrun_error *err) {
  void *host = NULL, *on_device = NULL, *count = NULL;
  cudaError_t e = cudaHostAlloc(&host, sizeof(uint32_t), cudaHostAllocMapped);
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&on_device, host, 0);
  if (e == cudaSuccess) e = cudaMalloc(&count, sizeof(uint32_t));
  if (e == cudaSuccess) e = cudaMemset(count, 0, sizeof(uint32_t));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (host != NULL) (void)cudaFreeHost(host);
    if (count != NULL) (void)cudaFree(count);
    f->failed = 1;
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cuda_graph_done_flag: the counter's memory "
                            "(mapped host and device) could not be made: %s",
                            cudaGetErrorString(e));
  }
  f->host = host;
  f->host_on_device = on_device;
  f->count = count;
  *f->host = 0;
  f->launched = 0;
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_done_flag_add_node(aotrun_cuda_done_flag *f,
                                             void *graph, void *const *leaves,
                                             size_t num_leaves, int *added,
                                             aotrun_error *err) {
  *added = 0;
  if (f->failed) return AOTRUN_OK; /* said once, when the memory failed */
  if (f->host == NULL && make_memory(f, err) != AOTRUN_OK) return AOTRUN_OK;
  aotrun_done_flag_kernel_args args;
  struct cudaKernelNodeParams params;
  aotrun_done_flag_kernel_params(&args, f->count, f->host_on_device, &params);
  cudaGraphNode_t node = NULL;
  cudaError_t e =
      cudaGraphAddKernelNode(&node, (cudaGraph_t)graph,
                             (const cudaGraphNode_t *)leaves, num_leaves,
                             &params);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cuda_graph_done_flag: adding the graph's last "
                            "node failed: %s",
                            cudaGetErrorString(e));
  }
  *added = 1;
  return AOTRUN_OK;
}

void aotrun_cuda_done_flag_launched(aotrun_cuda_done_flag *f, int awaitable) {
  f->launched++;
  f->armed = awaitable;
}

void aotrun_cuda_done_flag_disarm(aotrun_cuda_done_flag *f) { f->armed = 0; }

static aotrun_stream_query query_stream(void *stream) {
  cudaError_t e = cudaStreamQuery((cudaStream_t)stream);
  if (e == cudaSuccess) return AOTRUN_STREAM_IDLE;
  if (e == cudaErrorNotReady) return AOTRUN_STREAM_BUSY;
  return AOTRUN_STREAM_FAILED;
}

aotrun_status aotrun_cuda_done_flag_sync(aotrun_cuda_done_flag *f,
                                         void *stream, aotrun_error *err) {
  int armed = f != NULL && f->armed && f->host != NULL;
  if (f != NULL) f->armed = 0;
  if (!armed) return aotrun_cuda_synchronize(stream, err);
  aotrun_done_wait_result r = aotrun_done_wait(
      f->host, f->launched, SPINS_PER_QUERY, query_stream, stream, NULL);
  if (r == AOTRUN_DONE_SEEN) {
    f->waits++;
    return aotrun_cuda_check_device_error(err);
  }
  /* The stream's error (or, idle without the count, none: the work is
   * done; the count is taken as it is so the next wait compares right). */
  aotrun_status st = aotrun_cuda_synchronize(stream, err);
  if (r == AOTRUN_DONE_MISSING) f->launched = *f->host;
  return st;
}
