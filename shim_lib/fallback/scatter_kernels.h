/*
 * scatter_kernels.h: C entry points of the nvcc-compiled kernels of the
 * scatter family (scatter src/value, scatter_reduce). Each queues work on
 * `stream` and returns the launch status; none synchronises, so all of them
 * can be captured into a CUDA graph.
 *
 * The items of a call are the positions p of index's shape in row-major
 * order ("index order"). Item p names the target out[p with dim replaced by
 * index[p]] and reads src[p]. An index outside [0, dim_size) is reported
 * through the device error slot and the item is skipped.
 */
#ifndef AOTRUN_FALLBACK_SCATTER_KERNELS_H
#define AOTRUN_FALLBACK_SCATTER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The items and the three tensors they touch. Dims of size 1 other than
 * `dim` are dropped; strides are in elements. */
typedef struct aotrun_fb_scatter_items {
  const void *index; /* first element of index (int32 or int64) */
  const char *src;   /* first element of src (NULL: no src) */
  char *out;         /* first element of out */
  int32_t ndim;      /* >= 1 */
  int32_t dim;       /* the scatter dim, in [0, ndim) */
  int32_t index_is_int32;
  int32_t narrow;    /* numel < 2^31: positions unravel in 32 bits */
  int64_t numel;     /* items, > 0 */
  int64_t dim_size;  /* self.size(dim): the valid index range */
  int64_t sizes[AOTRUN_FB_MAX_DIMS]; /* index's sizes */
  int64_t index_strides[AOTRUN_FB_MAX_DIMS];
  int64_t src_strides[AOTRUN_FB_MAX_DIMS];
  int64_t out_strides[AOTRUN_FB_MAX_DIMS]; /* [dim]: step per index value */
} aotrun_fb_scatter_items;

/* Where kernels report an out-of-range index (shim_lib/device_error.h). */
typedef struct aotrun_fb_scatter_report {
  void *slot;   /* device address of the aotrun_device_error slot */
  uint64_t op;  /* host address of the op's static name */
  uint64_t arg; /* host address of the static argument name */
  int32_t dim;  /* the dim of self that index addresses */
} aotrun_fb_scatter_report;

/* out[target(p)] = the element at `value` (elem_size bytes: 1, 2, 4, 8 or
 * 16) for every item: scatter with a value, and the identity fill of
 * scatter_reduce without self. Writers of one target write the same bits. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_fill(
    const aotrun_fb_scatter_items *it, const void *value, size_t elem_size,
    const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* Largest dim_size aotrun_fb_scatter_lines takes (its winners live in
 * 48 KiB of shared memory). */
#define AOTRUN_FB_SCATTER_LINE_MAX 12288

/* scatter src, last write in index order wins: one block per line (the
 * items that share every coordinate but dim's) keeps, per target of the
 * line, the largest position along dim in shared memory; that item writes.
 * Needs dim_size <= AOTRUN_FB_SCATTER_LINE_MAX and sizes[dim] < 2^32 - 1. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_lines(
    const aotrun_fb_scatter_items *it, size_t elem_size,
    const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* scatter_reduce amax (is_min 0) / amin (1) into out in place with
 * compare-and-swap under the total order of scatter_math.h (NaN wins,
 * -0.0 < +0.0): exact and independent of the order of the updates. dtype:
 * uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_extreme(
    const aotrun_fb_scatter_items *it, int32_t dtype, int is_min,
    const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* ---- the tile engine (order-dependent reductions on short lines) ----
 * A block takes `lines` whole lines (every position along dim), sorts their
 * items by (line, target) in shared memory (stable: index order within a
 * target) and folds each run in order, like the sort engine without its
 * global sort. Needs lines * ceil(sizes[dim] / (ITEMS / THREADS)) <=
 * THREADS, lines <= MAX_LINES, lines * dim_size < 2^30, elem_size <= 4;
 * reduce sum, prod or mean on uint8, int8, int16, int32, float16, bfloat16
 * or float32. out already holds self (include_self reads it). */
#define AOTRUN_FB_SCATTER_TILE_THREADS 512
#define AOTRUN_FB_SCATTER_TILE_ITEMS 8192
#define AOTRUN_FB_SCATTER_TILE_MAX_LINES 64

AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_tiles(
    const aotrun_fb_scatter_items *it, int32_t reduce, int32_t dtype,
    int64_t elem_size, int include_self, int lines,
    const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* ---- the sort engine (order-dependent reductions) ----
 * Items become (key, value) pairs, a stable radix sort groups them by target
 * keeping index order, and each run of equal keys is folded in that order.
 *
 * General mode: key = the target's element offset in out (`sentinel` for a
 * bad index: it sorts last and is skipped), value = the src element's bits
 * (carried, elem_size <= 8) or its element offset in src. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_item_keys(
    const aotrun_fb_scatter_items *it, size_t elem_size, uint64_t sentinel,
    int carried, void *keys, int key64, void *vals, int val64,
    const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* Row mode (index constant along every dim but dim, e.g. an expanded edge
 * list): one pair per position e along dim: key = index value (dim_size for
 * a bad one), value = e. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_row_keys(
    const aotrun_fb_scatter_items *it, void *keys, int key64, void *vals,
    int val64, const aotrun_fb_scatter_report *r, cudaStream_t stream);

/* Row mode: for each column q (row-major over index's dims but dim, q <
 * numel / sizes[dim]) the element offsets of its first item in src and of
 * its first target in out. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_columns(
    const aotrun_fb_scatter_items *it, int64_t *src_off, int64_t *out_off,
    cudaStream_t stream);

/* Reductions of the sort engine. */
enum {
  AOTRUN_FB_SEG_ASSIGN = 0, /* last value wins (scatter src) */
  AOTRUN_FB_SEG_SUM = 1,
  AOTRUN_FB_SEG_PROD = 2,
  AOTRUN_FB_SEG_MEAN = 3,
};

#define AOTRUN_FB_SEG_MAX_LEVELS 10

/* The folding of sorted runs. The sorted items are cut into chunks of
 * `chunk` items; item s, column q contributes to out[qout[q] + key(s) *
 * out_step] the value at src[qsrc[q] + val(s) * src_step] (or the carried
 * bits val(s)). A run is folded in order from out's value (include_self) or
 * the identity, chunk by chunk: runs longer than a chunk leave a partial
 * per chunk, and partials of `fan` consecutive chunks are folded again per
 * level, so a run of any length is finished in at most levels * fan steps.
 * The association is fixed by the sizes alone: results are deterministic. */
typedef struct aotrun_fb_segments {
  const void *keys; /* sorted */
  const void *vals;
  int32_t key64, val64, carried;
  int32_t reduce; /* AOTRUN_FB_SEG_* */
  int32_t dtype;
  int32_t include_self;
  int64_t elem_size;
  int64_t n;     /* items */
  int64_t chunk; /* items per chunk */
  int64_t q;     /* columns (1 in general mode) */
  uint64_t sentinel;
  const char *src;
  int64_t src_step;
  const int64_t *qsrc; /* NULL: all 0 */
  char *out;
  int64_t out_step;
  const int64_t *qout; /* NULL: all 0 */
  int32_t levels;      /* >= 1; level 0 has one entry per chunk */
  int32_t fan;
  int64_t count[AOTRUN_FB_SEG_MAX_LEVELS];     /* entries per level */
  void *part[AOTRUN_FB_SEG_MAX_LEVELS];        /* count * q accumulators */
  int64_t *part_n[AOTRUN_FB_SEG_MAX_LEVELS];   /* items in each partial */
  uint8_t *part_more[AOTRUN_FB_SEG_MAX_LEVELS]; /* run goes on after it */
  void *tail;      /* per chunk * q: the open run's accumulator */
  int64_t *tail_n; /* per chunk: its items (0: no open run) */
} aotrun_fb_segments;

/* Bytes of one accumulator of `reduce` on `dtype` (assign: on an element
 * of elem_size bytes, any dtype); 0 when unsupported. Sum, prod and mean
 * take uint8, int8, int16, int32, int64, float16, bfloat16, float32 and
 * float64; sum also takes bool. */
AOTRUN_FB_HIDDEN size_t aotrun_fb_segment_acc_size(int32_t reduce,
                                                   int32_t dtype,
                                                   int64_t elem_size);

/* Folds every run and writes its result into out. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_scatter_segments(
    const aotrun_fb_segments *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_SCATTER_KERNELS_H */
