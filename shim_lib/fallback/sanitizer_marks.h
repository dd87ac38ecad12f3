/*
 * sanitizer_marks.h: tells compute-sanitizer's initcheck which bytes a
 * vendor kernel wrote.
 *
 * cuBLAS's Hopper GEMM kernels store their result with TMA, which initcheck
 * does not track: it reported every read of such an output as a read of
 * uninitialised memory (2.4 million reports for one T=2048 transformer
 * call, and the same for eager PyTorch; docs/reliability.md). After each
 * GEMM the shim marks the bytes of its result initialised through NVTX's
 * memory extension (nvtxMemCudaMarkInitialized, stream-ordered). Without a
 * tool attached (no NVTX_INJECTION64_PATH) nothing is done, about 5 ns per
 * GEMM; compute-sanitizer reads the marks with --nvtx yes, its default
 * since CUDA 12.0 (NVTX calls must come after the CUDA runtime is
 * initialised: these follow a GEMM). Only the result's own elements are
 * marked, never the gaps between rows of a strided result.
 */
#ifndef AOTRUN_FALLBACK_SANITIZER_MARKS_H
#define AOTRUN_FALLBACK_SANITIZER_MARKS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

typedef struct aotrun_fb_range {
  const char *ptr;
  size_t bytes;
} aotrun_fb_range;

/* The byte ranges of a row-major result of `batch` matrices of rows x cols
 * elements of elem_size bytes, rows ld elements apart, matrices
 * batch_stride elements apart: one range when all of it is back to back,
 * else one per matrix whose rows are back to back, else one per row.
 * Writes ranges first .. first + cap - 1 (of the whole list) to out and
 * returns how many ranges there are in all. */
AOTRUN_FB_HIDDEN size_t aotrun_fb_result_ranges(
    const char *data, int64_t batch, int64_t rows, int64_t cols, int64_t ld,
    int64_t batch_stride, size_t elem_size, size_t first,
    aotrun_fb_range *out, size_t cap);

/* Whether an NVTX tool is attached (NVTX_INJECTION64_PATH set when the
 * process first asks; read once). */
AOTRUN_FB_HIDDEN int aotrun_fb_nvtx_tool_attached(void);

/* Marks the result's bytes initialised for a sanitizer, ordered on
 * `stream` after the work queued before it; nothing without a tool. */
AOTRUN_FB_HIDDEN void aotrun_fb_mark_written(cudaStream_t stream,
                                             const char *data, int64_t batch,
                                             int64_t rows, int64_t cols,
                                             int64_t ld, int64_t batch_stride,
                                             size_t elem_size);

#endif /* AOTRUN_FALLBACK_SANITIZER_MARKS_H */
