/*
 * radix_sort.h: the one sort helper of the fallback ops: a stable CUB
 * radix sort of (key, value) pairs, used by sort/topk (keys are the values'
 * bits) and by index_put / scatter_reduce (keys are target positions, values
 * the positions of the items, so equal targets keep index order).
 *
 * Keys are unsigned 32- or 64-bit integers sorted on bits [0, end_bit);
 * values are 32- or 64-bit payloads carried along. Stable: equal keys keep
 * their input order, in both directions. Nothing synchronises.
 */
#ifndef AOTRUN_FALLBACK_RADIX_SORT_H
#define AOTRUN_FALLBACK_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotrun_fb_sort_pairs_args {
  const void *keys_in;
  void *keys_out;
  const void *vals_in; /* NULL: keys only (vals_out ignored) */
  void *vals_out;
  int key_bytes; /* 4 or 8 */
  int val_bytes; /* 4 or 8 */
  int64_t n;
  int end_bit;    /* sort on key bits [0, end_bit); 1..8*key_bytes */
  int descending; /* largest key first (still stable) */
} aotrun_fb_sort_pairs_args;

/* cub::DeviceRadixSort::SortPairs / SortKeys (or the Descending variants).
 * With temp == NULL only sets *temp_bytes. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_radix_sort_pairs(
    void *temp, size_t *temp_bytes, const aotrun_fb_sort_pairs_args *a,
    cudaStream_t stream);

/* Bits needed to represent every key in [0, max_key] (at least 1). */
AOTRUN_FB_HIDDEN int aotrun_fb_key_bits(uint64_t max_key);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_RADIX_SORT_H */
