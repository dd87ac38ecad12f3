/*
 * mask_positions.h: host side of "mask -> count / positions / ranks"
 * (mask_kernels.h), with scratch from an aotrun_fb_temps: the boolean-mask
 * index, nonzero, masked_select, masked_scatter and the masked index_put
 * all go through it.
 */
#ifndef AOTRUN_FALLBACK_MASK_POSITIONS_H
#define AOTRUN_FALLBACK_MASK_POSITIONS_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/mask_kernels.h"

/* The non-zero test of dtype (element size and the bits to test, see
 * mask_kernels.h): NaN is non-zero, -0.0 is zero. Returns 0 for a dtype
 * without one. */
AOTRUN_FB_HIDDEN int aotrun_fb_nonzero_test(int32_t dtype, int32_t *elem_size,
                                            uint64_t *nz_bits);

/* Runs one mask kernel (sizing its CUB scratch, allocating it from t,
 * running it); a failure is an error of t->op naming `what`. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_mask_op(
    aotrun_fb_temps *t, const char *what, int kind,
    const aotrun_fb_mask_args *a, cudaStream_t stream);

/* The CUB scratch bytes `kind` needs, and running it with given scratch:
 * for several mask kernels that share one scratch allocation. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_mask_op_bytes(
    const aotrun_fb_temps *t, const char *what, int kind,
    const aotrun_fb_mask_args *a, cudaStream_t stream, size_t *bytes);
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_mask_op_run(
    const aotrun_fb_temps *t, const char *what, int kind,
    const aotrun_fb_mask_args *a, void *scratch, size_t bytes,
    cudaStream_t stream);

/* Queues a row-major contiguous copy of a (possibly broadcast) strided
 * box into dst, or sets *data to src itself when it is already contiguous
 * (then dst is unused). elem_size bytes per element. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_dense_or_copy(
    const aotrun_fb_temps *t, const char *what, const void *src,
    const int64_t *sizes, const int64_t *strides, int64_t ndim,
    size_t elem_size, void *dst, cudaStream_t stream, const void **data);

/* The one host synchronisation of the mask ops: copies n device int64
 * counts to host and waits for the stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_read_counts(const char *op,
                                                      const int64_t *d_counts,
                                                      int n, int64_t *host,
                                                      cudaStream_t stream);

/* One scratch allocation cut into n blocks of bytes[i] (256-byte aligned;
 * a 0-byte block gets a valid pointer too). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_temp_blocks(aotrun_fb_temps *t,
                                                      int n,
                                                      const size_t *bytes,
                                                      void **blocks);

#endif /* AOTRUN_FALLBACK_MASK_POSITIONS_H */
