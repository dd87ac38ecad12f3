/* cuda_stream.c: see cuda_stream.h. */
#include "backend_cuda/cuda_stream.h"

#include <pthread.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "aot_loader/fault_point.h"

#define MAX_DEVICES 64

struct aotrun_cuda_stream {
  cudaStream_t stream;
  int device;
  int shared;
  int refs; /* methods and managed outputs holding it; under g_mu */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static aotrun_cuda_stream *g_shared[MAX_DEVICES];

static aotrun_status create(int device, int shared, aotrun_cuda_stream **out,
                            aotrun_error *err) {
  aotrun_cuda_stream *s = calloc(1, sizeof *s);
  if (s == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory creating a stream");
  cudaError_t e = aotrun_fault_point("cuda_stream.create")
                      ? cudaErrorMemoryAllocation
                      : cudaStreamCreateWithFlags(&s->stream,
                                                  cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    free(s);
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaStreamCreateWithFlags on device %d failed: "
                            "%s",
                            device, cudaGetErrorString(e));
  }
  s->device = device;
  s->shared = shared;
  s->refs = 1;
  *out = s;
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_stream_acquire(int device, int shared,
                                         aotrun_cuda_stream **out,
                                         aotrun_error *err) {
  *out = NULL;
  if (!shared) return create(device, 0, out, err);
  if (device < 0 || device >= MAX_DEVICES)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "device %d is out of range for a shared stream",
                            device);
  pthread_mutex_lock(&g_mu);
  aotrun_status st = AOTRUN_OK;
  if (g_shared[device] != NULL)
    g_shared[device]->refs++;
  else
    st = create(device, 1, &g_shared[device], err);
  if (st == AOTRUN_OK) *out = g_shared[device];
  pthread_mutex_unlock(&g_mu);
  return st;
}

static void destroy(aotrun_cuda_stream *s) {
  (void)cudaStreamSynchronize(s->stream);
  (void)cudaStreamDestroy(s->stream);
  free(s);
}

void aotrun_cuda_stream_retain(aotrun_cuda_stream *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&g_mu);
  s->refs++;
  pthread_mutex_unlock(&g_mu);
}

void aotrun_cuda_stream_release(aotrun_cuda_stream *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&g_mu);
  int last = --s->refs == 0;
  if (last && s->shared) g_shared[s->device] = NULL;
  pthread_mutex_unlock(&g_mu);
  if (last)
    destroy(s);
  else
    (void)cudaStreamSynchronize(s->stream);
}

void *aotrun_cuda_stream_handle(const aotrun_cuda_stream *s) {
  return s ? (void *)s->stream : NULL;
}

int aotrun_cuda_stream_is_shared(const aotrun_cuda_stream *s) {
  return s != NULL && s->shared;
}
