/*
 * sort_kernels.h: C entry points of the sort kernels (segmented_sort.cu,
 * sort_keys.cu) and the description of one "sort the rows" job they share.
 * Each entry point queues work on `stream` and returns the launch status;
 * none of them synchronises. Self-contained (nvcc compiles it).
 *
 * A job sorts `rows` rows of `n` elements. Element j of row r is read at
 * in + (row_offset(r, in_strides) + j * in_dim_stride) * elem_size, where
 * row_offset unravels r row-major over `sizes` (the dims other than the
 * sorted one). The rank-q element of row r is written to
 * values/indices + row_offset(r, out_strides) + q * out_dim_stride (both
 * outputs share one layout, in elements).
 */
#ifndef AOTRUN_FALLBACK_SORT_KERNELS_H
#define AOTRUN_FALLBACK_SORT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the element bits are read as numbers. */
enum {
  AOTRUN_FB_KIND_UNSIGNED = 0, /* uint8/16/32/64, bool */
  AOTRUN_FB_KIND_SIGNED = 1,   /* int8/16/32/64 */
  AOTRUN_FB_KIND_FLOAT = 2,    /* float16, bfloat16, float32, float64 */
};

/* Orders of floating-point elements (integers have only one order). */
enum {
  /* ATen's radix sorts (CUB's float order): -NaN < -inf < ... < -0.0 ==
   * +0.0 < ... < +inf < +NaN; NaNs of one sign ordered by their bits. */
  AOTRUN_FB_ORDER_SORT = 0,
  /* ATen's topk selection: every NaN is the largest value; -0.0 < +0.0. */
  AOTRUN_FB_ORDER_TOPK = 1,
  /* ATen's comparison sorts (the unstable bitonic sort of <= 32 elements):
   * every NaN is the largest value; -0.0 == +0.0. */
  AOTRUN_FB_ORDER_NAN_LARGEST = 2,
};

/* Which elements are being sorted and how. */
typedef struct aotrun_fb_sort_elems {
  int32_t elem_size; /* 1, 2, 4 or 8 */
  int32_t kind;      /* AOTRUN_FB_KIND_* */
  /* Float kinds: the bits of +inf (a NaN is any larger magnitude). */
  uint64_t inf_bits;
  int32_t order;      /* AOTRUN_FB_ORDER_* */
  int32_t descending; /* largest first (ties still keep index order) */
} aotrun_fb_sort_elems;

/* Where the rows are in the input and go in the outputs. */
typedef struct aotrun_fb_rows_layout {
  int32_t ndim; /* dims other than the sorted one, outermost first */
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t in_strides[AOTRUN_FB_MAX_DIMS];
  int64_t out_strides[AOTRUN_FB_MAX_DIMS];
  int64_t in_dim_stride;
  int64_t out_dim_stride;
} aotrun_fb_rows_layout;

/* Block path (segmented_sort.cu): rows of at most AOTRUN_FB_BLOCK_SORT_MAX
 * elements, one thread block per row piece, CUB BlockRadixSort in shared
 * memory. Each row is cut into `chunks` pieces of `chunk_len` elements (the
 * last one shorter); piece c keeps its first min(k, piece length) elements
 * in order and writes them at ranks c * k, c * k + 1, ... of its row (topk
 * candidates; a plain sort has chunks = 1, chunk_len = k = n). */
#define AOTRUN_FB_BLOCK_SORT_MAX 4096

typedef struct aotrun_fb_block_sort_job {
  const void *in;
  void *values;
  int64_t *indices;
  /* NULL, or contiguous [rows, n]: the index reported for element j of row
   * r is idx_map[r * n + j] instead of j. */
  const int64_t *idx_map;
  int64_t rows, n;
  int64_t chunk_len, chunks, k;
  aotrun_fb_sort_elems elems;
  aotrun_fb_rows_layout layout;
} aotrun_fb_block_sort_job;

AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_block_sort_rows(
    const aotrun_fb_block_sort_job *job, cudaStream_t stream);

/* Selection (radix_select.cu): the same job (k <= chunk_len), but each
 * piece's first min(k, piece length) elements are written in index order,
 * not sorted: exactly the elements a block sort would keep. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_block_select_rows(
    const aotrun_fb_block_sort_job *job, cudaStream_t stream);

/* Long path (sort_keys.cu), around cub::DeviceRadixSort (radix_sort.h):
 * 1. keys: key[p] = (row(p) << key_bits) | key of element p, pay[p] = p for
 *    every work position p = r * n + j (row_shift = key_bits; 0 and no row
 *    bits when row_bits is 0: one row, or rows sorted by a second pass).
 * 2. (64-bit elements of several rows only) row keys of the sorted
 *    positions: rkey[q] = pay[q] / n, perm[q] = q, sorted stably next.
 * 3. scatter: output rank q < k of row r takes sorted slot
 *    s = perm ? perm[r * n + q] : r * n + q, i.e. key[s] and pay[s]. */
typedef struct aotrun_fb_long_sort_job {
  const void *in;
  void *values;
  int64_t *indices;
  const int64_t *idx_map; /* as in aotrun_fb_block_sort_job */
  int64_t rows, n, k;
  int32_t key_bytes; /* 4 or 8: width of key[] */
  int32_t pay_bytes; /* 4 or 8: width of pay[] and perm[] */
  int32_t row_bits;  /* row bits above the element key in key[] */
  aotrun_fb_sort_elems elems;
  aotrun_fb_rows_layout layout;
} aotrun_fb_long_sort_job;

AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_long_sort_keys(
    const aotrun_fb_long_sort_job *job, void *keys, void *pay,
    cudaStream_t stream);
/* rkey: 4 bytes when rows <= 2^32, else 8 (rkey_bytes); perm: pay_bytes. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_long_sort_row_keys(
    const aotrun_fb_long_sort_job *job, const void *sorted_pay, void *rkey,
    int rkey_bytes, void *perm, cudaStream_t stream);
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_long_sort_scatter(
    const aotrun_fb_long_sort_job *job, const void *sorted_keys,
    const void *sorted_pay, const void *perm, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_SORT_KERNELS_H */
