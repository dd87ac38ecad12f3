/*
 * sort_rows.h: the one row-sort helper of the fallback ops (sort, topk, and
 * later kthvalue, median, unique): sorts `rows` rows of `n` elements of any
 * sortable dtype, stable (equal elements keep their index order, in both
 * directions), and writes the first k of each row as values (the input
 * elements' exact bits) and int64 indices.
 *
 * Which path runs (chosen here, see sort_rows.c):
 *   n <= 4096: one thread block per row, cub::BlockRadixSort in shared
 *              memory (segmented_sort.cu);
 *   n >  4096: cub::DeviceRadixSort (radix_sort.h) over all rows at once,
 *              keys (row, element key) (sort_keys.cu).
 * Queues work on `stream` only; never synchronises; scratch comes from t.
 */
#ifndef AOTRUN_FALLBACK_SORT_ROWS_H
#define AOTRUN_FALLBACK_SORT_ROWS_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/sort_kernels.h"

typedef struct aotrun_fb_sort_rows_args {
  const void *in;
  int32_t dtype;
  int64_t rows, n;
  int64_t k; /* outputs per row, 0..n */
  int32_t order;      /* AOTRUN_FB_ORDER_* (matters for floats only) */
  int32_t descending;
  /* NULL, or contiguous [rows, n] int64: reported index of element j of
   * row r is idx_map[r * n + j] (re-sorting earlier results). */
  const int64_t *idx_map;
  void *values;
  int64_t *indices;
  aotrun_fb_rows_layout layout; /* in/out addressing, see sort_kernels.h */
} aotrun_fb_sort_rows_args;

/* How elements of `dtype` sort (fills e->elem_size, kind, inf_bits; order
 * and descending are the caller's). 0 for a dtype that cannot be sorted
 * (complex, float8, ...). No CUDA calls. */
AOTRUN_FB_HIDDEN int aotrun_fb_sort_elems_for(int32_t dtype,
                                              aotrun_fb_sort_elems *e);

/* The layout of rows of a tensor sorted along `dim`: sizes/in_strides of
 * the input, out_strides of the outputs (same sizes except along dim).
 * Size-1 dims are dropped and dims that are contiguous in both the input
 * and the outputs merged, so fewer divisions find a row. */
AOTRUN_FB_HIDDEN void aotrun_fb_rows_layout_of(const int64_t *sizes,
                                               const int64_t *in_strides,
                                               const int64_t *out_strides,
                                               int64_t ndim, int64_t dim,
                                               aotrun_fb_rows_layout *l);
/* Contiguous [rows, in_len] in, contiguous [rows, out_len] out. */
AOTRUN_FB_HIDDEN void aotrun_fb_rows_layout_contiguous(
    int64_t rows, int64_t in_len, int64_t out_len, aotrun_fb_rows_layout *l);

/* Makes the input (out = 0) or output (out = 1) side of l address a
 * contiguous [rows, len] buffer over l's row sizes (scratch of earlier
 * steps), keeping the other side. */
AOTRUN_FB_HIDDEN void aotrun_fb_rows_layout_set_contiguous(
    aotrun_fb_rows_layout *l, int64_t len, int out);

/* Sorts; errors are reported as errors of t->op. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_sort_rows(
    aotrun_fb_temps *t, const aotrun_fb_sort_rows_args *a,
    cudaStream_t stream);

/* The first k of every row exactly as aotrun_fb_sort_rows gives them
 * (same elements, same order, ties in index order), cheaper when k is small:
 * rounds of block radix selections over pieces of <= 4096 elements keep
 * each piece's first k (every element of a row's first k is among its
 * piece's), until only k per row are left, which are then sorted
 * (topk_rows.c). Rows of more than 4096 with k > 1024, and rows where k is
 * not small next to n, are sorted whole. */
#define AOTRUN_FB_SELECT_MAX_K 1024
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_select_rows(
    aotrun_fb_temps *t, const aotrun_fb_sort_rows_args *a,
    cudaStream_t stream);

/* The long path alone (any n >= 1); aotrun_fb_sort_rows uses it above
 * AOTRUN_FB_BLOCK_SORT_MAX (sort_rows_long.c). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_sort_rows_long(
    aotrun_fb_temps *t, const aotrun_fb_sort_rows_args *a,
    const aotrun_fb_sort_elems *e, cudaStream_t stream);

#endif /* AOTRUN_FALLBACK_SORT_ROWS_H */
