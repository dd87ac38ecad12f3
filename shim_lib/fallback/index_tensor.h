/*
 * index_tensor.h: advanced indexing `self[indices]` as aten.index.Tensor
 * and aten.index_put define it, shared by index_Tensor, index_put(_out) and
 * masked_select.
 *
 * indices[i] is None (NULL), an int32/int64 index tensor (picks along one
 * dim of self, negative values count from the end) or a bool/uint8 mask of
 * k dims (picks the True positions of k dims of self, in row-major order;
 * it is the same as its k nonzero() columns as integer indices). All index
 * tensors broadcast together to the index shape B (a mask counts as a 1-D
 * [True count]). Dims of self after the listed entries are sliced whole.
 *
 * The result has B in place of the indexed dims when they are adjacent
 * (no None between two index tensors), otherwise B first and the sliced
 * dims after it (ATen's rule). Its strides are those of torch's
 * meta_index_Tensor (TensorIterator's order of the "restrided" self), which
 * the compiled model assumes.
 *
 * Integer indices are checked on the device: an out-of-range value is
 * reported through the device error slot (aotrun_shim_take_device_error)
 * and never read or written; nothing synchronises, so integer indexing
 * works inside a CUDA graph capture. A mask's True count decides the result
 * shape, so it is read back to the host: those calls refuse to run inside a
 * capture.
 *
 * The plan (index_args.c) is built and checked without CUDA calls; the
 * geometry (index_geometry.c) follows once the mask counts are known.
 */
#ifndef AOTRUN_FALLBACK_INDEX_TENSOR_H
#define AOTRUN_FALLBACK_INDEX_TENSOR_H

#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/fallback_tensor.h"
#include "shim_lib/fallback/index_kernels.h"

typedef struct aotrun_fb_index_entry {
  aotrun_fb_tensor t; /* the index tensor (sizes/strides point into it) */
  int is_mask;
  int64_t first_dim; /* first dim of self it indexes */
  int64_t ndims;     /* dims of self it consumes: 1, or the mask's dims */
} aotrun_fb_index_entry;

typedef struct aotrun_fb_index_plan {
  const char *op;
  aotrun_fb_tensor self;
  int n; /* index tensors (Nones not counted) */
  aotrun_fb_index_entry e[AOTRUN_FB_MAX_DIMS];
  int num_masks;
  int adjacent;             /* the indexed dims form one run */
  int64_t pick_first;       /* first indexed dim of self */
  int64_t pick_ndim;        /* indexed dims of self */
  uint8_t picked[AOTRUN_FB_MAX_DIMS]; /* per dim of self */
  /* Broadcast shape of the integer index tensors alone. */
  int64_t int_ndim;
  int64_t int_sizes[AOTRUN_FB_MAX_DIMS];
} aotrun_fb_index_plan;

/* The result shape R = [lead..., B..., rest...] (adjacent) or [B..., sliced
 * dims...], and where each dim of self lands in it. */
typedef struct aotrun_fb_index_geom {
  int64_t b_ndim;
  int64_t b_sizes[AOTRUN_FB_MAX_DIMS];
  int64_t b_numel;
  int64_t b_pos; /* first dim of B in R */
  int64_t ndim;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t numel;
  int64_t rpos[AOTRUN_FB_MAX_DIMS]; /* dim of R of each sliced dim of self
                                       (-1 for indexed dims) */
} aotrun_fb_index_geom;

/* "indices[i]" (a static string). */
AOTRUN_FB_HIDDEN const char *aotrun_fb_index_name(int64_t i);

/* Reads and checks the index list against self (already read): dtypes,
 * devices, mask shapes, dims consumed, broadcasting between the integer
 * indices. indices[i] == NULL is None. No CUDA calls. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_plan_build(
    const char *op, const aotrun_fb_tensor *self,
    const AtenTensorHandle *indices, int64_t num_indices,
    aotrun_fb_index_plan *plan);

/* A plan with one mask covering every dim of self (masked_select). */
AOTRUN_FB_HIDDEN void aotrun_fb_index_plan_full_mask(
    const char *op, const aotrun_fb_tensor *self, const aotrun_fb_tensor *mask,
    aotrun_fb_index_plan *plan);

/* B and R given the True count of each mask (counts[k] for the k-th mask
 * entry; NULL when there is none). Fails when the masks' counts do not
 * broadcast with the integer indices or R has too many dims. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_geom_build(
    const aotrun_fb_index_plan *plan, const int64_t *counts,
    aotrun_fb_index_geom *geom);

/* The strides meta_index_Tensor gives R (dense). */
AOTRUN_FB_HIDDEN void aotrun_fb_index_result_strides(
    const aotrun_fb_index_plan *plan, const aotrun_fb_index_geom *geom,
    int64_t *strides);

/* Item description for the kernels: positions[k] is the device array of
 * the k-th mask's True positions and counts[k] their number (both unused
 * without masks); mul[d] is the multiplier of dim d of self (its stride for
 * a gather; see aotrun_fb_index_linear_mul for index_put keys). */
AOTRUN_FB_HIDDEN void aotrun_fb_index_items_fill(
    const aotrun_fb_index_plan *plan, const aotrun_fb_index_geom *geom,
    const int64_t *const *positions, const int64_t *counts,
    const int64_t *mul, aotrun_fb_ix_items *items);

/* Linear multipliers of the indexed dims (row-major over them only) into
 * mul[dim of self]; returns their product (the key range), or -1 when it
 * overflows int64. */
AOTRUN_FB_HIDDEN int64_t aotrun_fb_index_linear_mul(
    const aotrun_fb_index_plan *plan, int64_t *mul);

/* Columns of a gather into out (R with out_strides). */
AOTRUN_FB_HIDDEN void aotrun_fb_index_gather_cols(
    const aotrun_fb_index_plan *plan, const aotrun_fb_index_geom *geom,
    const int64_t *out_strides, aotrun_fb_ix_cols *cols);

/* Columns of index_put: writing dst (self's shape, dst_strides) from values
 * expanded to R (vstrides, one per dim of R, 0 where broadcast). */
AOTRUN_FB_HIDDEN void aotrun_fb_index_put_cols(
    const aotrun_fb_index_plan *plan, const aotrun_fb_index_geom *geom,
    const int64_t *dst_strides, const int64_t *vstrides,
    aotrun_fb_ix_cols *cols);

/* The masks of a plan on the device (index_masks.c). */
typedef struct aotrun_fb_index_masks {
  int n;
  const void *flags[AOTRUN_FB_MAX_DIMS]; /* contiguous bytes, !0 = True */
  int64_t numel[AOTRUN_FB_MAX_DIMS];
  int64_t counts[AOTRUN_FB_MAX_DIMS];    /* True counts (host) */
  const int64_t *positions[AOTRUN_FB_MAX_DIMS];
} aotrun_fb_index_masks;

/* Makes each mask's flags contiguous, counts its True elements and reads
 * the counts back: one host synchronisation (refuse captures first). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_mask_counts(
    aotrun_fb_temps *temps, const aotrun_fb_index_plan *plan,
    cudaStream_t stream, aotrun_fb_index_masks *masks);

/* The True positions of each mask (after aotrun_fb_index_mask_counts). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_mask_positions(
    aotrun_fb_temps *temps, const aotrun_fb_index_plan *plan,
    cudaStream_t stream, aotrun_fb_index_masks *masks);

/* self[indices] of a plan into a new tensor *ret0 (index_tensor.c): the
 * mask counts (a host synchronisation: refuse captures first when the plan
 * has masks), the result allocation, then a CUB compaction or the gather
 * kernel on stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_run(
    const aotrun_fb_index_plan *plan, aotrun_fb_temps *temps,
    cudaStream_t stream, AtenTensorHandle *ret0);

/* The device error slot of the plan's device. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_error_slot(
    const char *op, int32_t device, aotrun_device_error **slot);

#endif /* AOTRUN_FALLBACK_INDEX_TENSOR_H */
