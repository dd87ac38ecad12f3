/*
 * mask_kernels.h: "mask -> positions / ranks" on the device (CUB), shared by
 * the boolean-mask index, nonzero, masked_select, masked_scatter and the
 * masked index_put. Elements are tested for non-zero on their raw bits:
 * (word & nz_bits) != 0 for any 64-bit word of the element (the low bytes
 * for elements under 8 bytes), so float NaN counts as non-zero and -0.0 as
 * zero when nz_bits clears the sign bits.
 */
#ifndef AOTRUN_FALLBACK_MASK_KERNELS_H
#define AOTRUN_FALLBACK_MASK_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  AOTRUN_FB_MASK_COUNT = 0,     /* *count = number of non-zero elements */
  AOTRUN_FB_MASK_POSITIONS = 1, /* out (int64) = their positions, ascending */
  AOTRUN_FB_MASK_SELECT = 2,    /* out = data[i] for flags[i] != 0, in order */
  AOTRUN_FB_MASK_RANKS = 3,     /* out[i] = number of flags[j] != 0, j < i */
};

typedef struct aotrun_fb_mask_args {
  const void *data;     /* COUNT/POSITIONS: tested; SELECT: the values */
  const uint8_t *flags; /* SELECT/RANKS: one byte per element */
  int32_t elem_size;    /* of data: 1, 2, 4, 8 or 16 */
  int32_t rank_bytes;   /* RANKS: 4 (n < 2^31) or 8 */
  uint64_t nz_bits;     /* COUNT/POSITIONS: see above */
  int64_t n;            /* elements (> 0) */
  void *out;
  int64_t *count;       /* device int64 (COUNT, POSITIONS, SELECT) */
} aotrun_fb_mask_args;

/* Runs `kind` on stream; with temp == NULL only sets *temp_bytes. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_mask_run(int kind, void *temp,
                                                size_t *temp_bytes,
                                                const aotrun_fb_mask_args *a,
                                                cudaStream_t stream);

/* nonzero's columns: out[c] holds the flat position of hit c (c < count);
 * writes its coordinate in dim d (sizes[0..ndim)) to out[c + d * ld]. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_nonzero_coords(int64_t *out,
                                                      int64_t count,
                                                      int64_t ld,
                                                      const int64_t *sizes,
                                                      int32_t ndim,
                                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_MASK_KERNELS_H */
