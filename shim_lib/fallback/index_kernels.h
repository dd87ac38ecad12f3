/*
 * index_kernels.h: the device side of advanced indexing (index_Tensor and
 * index_put), shared by C and the .cu files (plain C structs).
 *
 * The broadcast index shape B enumerates "items" b (row-major). Item b picks
 * one position in the indexed ("pick") dims of self: every index component
 * (an integer index tensor, or the True positions of a boolean mask) gives
 * the coordinates of its pick dims. The remaining dims of self are the
 * "columns" of an item, walked in row-major order of self's dims.
 */
#ifndef AOTRUN_FALLBACK_INDEX_KERNELS_H
#define AOTRUN_FALLBACK_INDEX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/device_error.h"
#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  AOTRUN_FB_IX_INT64 = 0,     /* int64 index values (may be negative) */
  AOTRUN_FB_IX_INT32 = 1,     /* int32 index values (may be negative) */
  AOTRUN_FB_IX_POSITIONS = 2, /* int64 row-major positions in the mask's
                                 dims (always in range) */
};

/* One index component, its shape right-aligned with B. */
typedef struct aotrun_fb_ix_comp {
  const void *data;
  int32_t kind;
  int32_t ndim;       /* dims of the component (<= B's) */
  int32_t pick_first; /* first of its pick dims */
  int32_t pick_ndim;  /* 1, or the mask's dim count */
  uint64_t arg;       /* address of its static name ("indices[1]") */
  int64_t strides[AOTRUN_FB_MAX_DIMS]; /* element strides; 0 where the
                                          component broadcasts */
} aotrun_fb_ix_comp;

/* How item b maps to a pick offset sum_k coord_k * pick_mul[k]. */
typedef struct aotrun_fb_ix_items {
  int32_t ncomp, b_ndim, pick_ndim, pad;
  int64_t b_numel;
  uint64_t op; /* address of the op's static name, for reports */
  int64_t b_sizes[AOTRUN_FB_MAX_DIMS];
  int64_t pick_sizes[AOTRUN_FB_MAX_DIMS];
  int64_t pick_mul[AOTRUN_FB_MAX_DIMS];
  int32_t pick_dim[AOTRUN_FB_MAX_DIMS]; /* the dim of self, for reports */
  aotrun_fb_ix_comp comp[AOTRUN_FB_MAX_DIMS];
} aotrun_fb_ix_items;

/* The columns of an item (merged dims) and the item-level strides of the
 * read ("src") and written ("dst") operands. */
typedef struct aotrun_fb_ix_cols {
  int32_t ndim, pad;
  int64_t numel;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t src[AOTRUN_FB_MAX_DIMS];
  int64_t dst[AOTRUN_FB_MAX_DIMS];
  int64_t item_src[AOTRUN_FB_MAX_DIMS]; /* index_put: values over B */
  int64_t item_dst[AOTRUN_FB_MAX_DIMS]; /* gather: out over B */
  int64_t pick_dst[AOTRUN_FB_MAX_DIMS]; /* index_put: out over pick dims */
} aotrun_fb_ix_cols;

/* out[item_dst(b) + dst(q)] = self[pick(b) + src(q)] for every item b and
 * column q (pick_mul = self's strides). An out-of-range index is reported
 * through err (when not NULL) and reads coordinate 0 instead. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_index_gather(
    void *out, const void *self, size_t elem_size,
    const aotrun_fb_ix_items *items, const aotrun_fb_ix_cols *cols,
    aotrun_device_error *err, cudaStream_t stream);

/* ---- index_put: sort items by target, then write or accumulate ---- */

/* keys[b] = the pick offset of item b (pick_mul = linear multipliers of the
 * pick dims, so keys are in [0, invalid)), or `invalid` for an item with an
 * out-of-range index (reported through err); iota[b] = b. Keys and iota
 * are 4-byte (key_bytes 4) or 8-byte unsigned. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_index_keys(
    void *keys, void *iota, int key_bytes, uint64_t invalid,
    const aotrun_fb_ix_items *items, aotrun_device_error *err,
    cudaStream_t stream);

/* Accumulation kinds (the dtype's arithmetic). */
enum {
  AOTRUN_FB_ACC_F16 = 0, /* float16, summed in float */
  AOTRUN_FB_ACC_BF16,    /* bfloat16, summed in float */
  AOTRUN_FB_ACC_F32,
  AOTRUN_FB_ACC_F64,
  AOTRUN_FB_ACC_I8, /* any 1-byte integer (wraps) */
  AOTRUN_FB_ACC_I16,
  AOTRUN_FB_ACC_I32,
  AOTRUN_FB_ACC_I64,
  AOTRUN_FB_ACC_BOOL, /* logical or */
  AOTRUN_FB_ACC_C64,  /* complex64 */
  AOTRUN_FB_ACC_C128, /* complex128 */
  AOTRUN_FB_ACC_COUNT
};

/* Sorted positions per chunk of the accumulating kernel: runs of equal keys
 * inside one chunk are summed in index order by one thread; a run crossing
 * chunks is finished from per-chunk partial sums. */
#define AOTRUN_FB_ACC_CHUNK 32

typedef struct aotrun_fb_put_rows_args {
  void *out;
  const void *values;
  size_t elem_size;
  const void *keys;    /* sorted ascending; invalid ones last */
  const void *items;   /* the item b of each sorted key */
  int key_bytes;       /* 4 or 8, for both arrays */
  int64_t n;           /* number of items */
  uint64_t invalid;
  int accumulate;
  int acc_kind;        /* AOTRUN_FB_ACC_*, with accumulate */
  void *partial_head;  /* accumulate: chunks * cols.numel accumulators */
  void *partial_tail;  /* each (see aotrun_fb_acc_bytes) */
} aotrun_fb_put_rows_args;

/* Bytes of one accumulator of `acc_kind` (0 for an unknown kind). */
AOTRUN_FB_HIDDEN size_t aotrun_fb_acc_bytes(int acc_kind);

/* Without accumulate: the last item (in index order) of each key writes
 * out[key target + dst(q)] = values[item_src(b) + src(q)]. With it:
 * out[target] = out[target] + values... in index order. items gives B's
 * sizes (b_ndim, b_sizes) and the pick sizes; cols the strides. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_index_put_rows(
    const aotrun_fb_put_rows_args *a, const aotrun_fb_ix_items *items,
    const aotrun_fb_ix_cols *cols, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_INDEX_KERNELS_H */
