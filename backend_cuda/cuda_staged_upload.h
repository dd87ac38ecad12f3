/*
 * cuda_staged_upload.h: a host-to-device copy of one weight through a
 * bounded pinned staging buffer, double-buffered (docs/loading.md,
 * "Weights"; the plan is aot_loader/upload_chunks.h).
 *
 * Why: the weights usually come straight from the host's mapping of the
 * weights file. A pageable cudaMemcpy of such memory faults the pages in
 * and stages them through the driver's own buffer, one after the other;
 * here the host copy of chunk i + 1 into one pinned buffer (the page
 * faults) overlaps the DMA of chunk i from the other. Small copies (under
 * two chunks) stay one cudaMemcpy.
 */
#ifndef AOTRUN_CUDA_STAGED_UPLOAD_H
#define AOTRUN_CUDA_STAGED_UPLOAD_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"

/* Pinned memory of one staged upload, both buffers together. */
#define AOTRUN_CUDA_STAGING_BYTES ((size_t)16 << 20)
#define AOTRUN_CUDA_STAGING_ALIGN ((size_t)4096)

/* Copies bytes from host src to device dst (on the current device) and
 * returns when the copy is complete. On failure nothing is left queued or
 * allocated, and the message names the chunk and the CUDA error. */
aotrun_status aotrun_cuda_staged_upload(void *dst, const void *src,
                                        size_t bytes, aotrun_error *err);

#endif /* AOTRUN_CUDA_STAGED_UPLOAD_H */
