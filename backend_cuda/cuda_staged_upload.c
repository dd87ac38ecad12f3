/*
 * cuda_staged_upload.c: see cuda_staged_upload.h.
 */
#include "backend_cuda/cuda_staged_upload.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "aot_loader/upload_chunks.h"

typedef struct staging {
  void *buf[2];
  cudaEvent_t done[2]; /* the DMA out of buf[i] has finished */
  cudaStream_t stream;
} staging;

static aotrun_status cuda_failed(aotrun_error *err, const char *what,
                                 cudaError_t e, size_t bytes) {
  (void)cudaGetLastError();
  return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                          "uploading %zu bytes of weights: %s failed: %s",
                          bytes, what, cudaGetErrorString(e));
}

static void staging_free(staging *s) {
  if (s->stream != NULL) (void)cudaStreamSynchronize(s->stream);
  for (int i = 0; i < 2; i++) {
    if (s->done[i] != NULL) (void)cudaEventDestroy(s->done[i]);
    if (s->buf[i] != NULL) (void)cudaFreeHost(s->buf[i]);
  }
  if (s->stream != NULL) (void)cudaStreamDestroy(s->stream);
  (void)cudaGetLastError();
}

static aotrun_status staging_make(staging *s, size_t chunk, size_t bytes,
                                  aotrun_error *err) {
  memset(s, 0, sizeof *s);
  cudaError_t e =
      cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) return cuda_failed(err, "cudaStreamCreate", e, bytes);
  for (int i = 0; i < 2; i++) {
    e = cudaHostAlloc(&s->buf[i], chunk, cudaHostAllocDefault);
    if (e == cudaSuccess)
      e = cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming);
    if (e != cudaSuccess)
      return cuda_failed(err, "pinned staging buffer", e, bytes);
  }
  return AOTRUN_OK;
}

/* The loop of upload_chunks.h: wait until the buffer's previous DMA is
 * done, fill it, queue its DMA, mark it. */
static aotrun_status copy_chunks(staging *s, const aotrun_upload_plan *p,
                                 char *dst, const char *src,
                                 aotrun_error *err) {
  for (size_t i = 0; i < p->count; i++) {
    uint64_t off = 0;
    size_t size = 0;
    int b = 0;
    aotrun_upload_plan_chunk(p, i, &off, &size, &b);
    cudaError_t e = i >= 2 ? cudaEventSynchronize(s->done[b]) : cudaSuccess;
    if (e != cudaSuccess)
      return cuda_failed(err, "waiting for a staging buffer", e, p->bytes);
    memcpy(s->buf[b], src + off, size);
    e = cudaMemcpyAsync(dst + off, s->buf[b], size, cudaMemcpyHostToDevice,
                        s->stream);
    if (e == cudaSuccess) e = cudaEventRecord(s->done[b], s->stream);
    if (e != cudaSuccess)
      return cuda_failed(err, "cudaMemcpyAsync of a chunk", e, p->bytes);
  }
  cudaError_t e = cudaStreamSynchronize(s->stream);
  return e == cudaSuccess ? AOTRUN_OK
                          : cuda_failed(err, "the last chunk", e, p->bytes);
}

aotrun_status aotrun_cuda_staged_upload(void *dst, const void *src,
                                        size_t bytes, aotrun_error *err) {
  aotrun_upload_plan p;
  (void)aotrun_upload_plan_make(bytes, AOTRUN_CUDA_STAGING_BYTES,
                                AOTRUN_CUDA_STAGING_ALIGN, &p);
  if (p.count == 0) return AOTRUN_OK;
  if (!p.staged) {
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? AOTRUN_OK
                            : cuda_failed(err, "cudaMemcpy", e, bytes);
  }
  staging s;
  aotrun_status st = staging_make(&s, p.chunk, bytes, err);
  if (st == AOTRUN_OK) st = copy_chunks(&s, &p, dst, src, err);
  staging_free(&s); /* synchronizes first: no DMA reads a freed buffer */
  return st;
}
