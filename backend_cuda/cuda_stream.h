/*
 * cuda_stream.h: the stream a method handle runs on. By default every
 * handle gets its own non-blocking stream; with shared_stream the handles
 * of one device share one (refcounted) stream, so one method's outputs can
 * feed another's inputs without extra synchronisation.
 */
#ifndef AOTRUN_CUDA_STREAM_H
#define AOTRUN_CUDA_STREAM_H

#include "aot_loader/aotrun_error.h"

typedef struct aotrun_cuda_stream aotrun_cuda_stream;

/* device must be current. Thread-safe. */
aotrun_status aotrun_cuda_stream_acquire(int device, int shared,
                                         aotrun_cuda_stream **out,
                                         aotrun_error *err);
/* One more reference (a backend-allocated output whose memory goes back
 * to the allocator on this stream when its deleter runs). Thread-safe. */
void aotrun_cuda_stream_retain(aotrun_cuda_stream *s);
/* Synchronises and drops the reference (the stream is destroyed with the
 * last one). Accepts NULL. Thread-safe. */
void aotrun_cuda_stream_release(aotrun_cuda_stream *s);
/* The cudaStream_t. */
void *aotrun_cuda_stream_handle(const aotrun_cuda_stream *s);
int aotrun_cuda_stream_is_shared(const aotrun_cuda_stream *s);

#endif /* AOTRUN_CUDA_STREAM_H */
