/*
 * tensor_layout.h: layout rules the fallback ops share: the strides eager
 * PyTorch (and the meta functions a compiled model was traced with) gives
 * a new output, broadcasting of shapes, and merging of dims before a kernel
 * walks several strided operands. No CUDA calls.
 */
#ifndef AOTRUN_FALLBACK_TENSOR_LAYOUT_H
#define AOTRUN_FALLBACK_TENSOR_LAYOUT_H

#include <stdint.h>

#include "shim_lib/fallback/fallback_limits.h"

/* torch._prims_common.compute_elementwise_output_logical_to_physical_perm
 * for one tensor (sizes/strides), then dense strides in that order: the
 * output strides TensorIterator gives an op whose only input has this
 * layout (used by meta_index_Tensor on the "restrided" self). */
AOTRUN_FB_HIDDEN void aotrun_fb_elementwise_strides(const int64_t *sizes,
                                                    const int64_t *strides,
                                                    int64_t ndim,
                                                    int64_t *out);

/* c10's is_non_overlapping_and_dense (a tensor without elements counts as
 * contiguous, hence dense). */
AOTRUN_FB_HIDDEN int aotrun_fb_is_non_overlapping_and_dense(
    const int64_t *sizes, const int64_t *strides, int64_t ndim);

/* ATen's infer_dense_strides: dense strides that keep self's stride order
 * (stride-0 dims stay where they are, equal strides put the smaller size
 * inner). */
AOTRUN_FB_HIDDEN void aotrun_fb_infer_dense_strides(const int64_t *sizes,
                                                    const int64_t *strides,
                                                    int64_t ndim,
                                                    int64_t *out);

/* at::empty_like(self) with preserve_format: self's strides when self is
 * non-overlapping and dense, else at::infer_dense_strides (dense strides in
 * the order of self's strides). */
AOTRUN_FB_HIDDEN void aotrun_fb_empty_like_strides(const int64_t *sizes,
                                                   const int64_t *strides,
                                                   int64_t ndim, int64_t *out);

/* Broadcasts shape (b, nb) into (*nd, sizes) in place (right-aligned; a
 * size 1 stretches). Returns 0, or -1 when the shapes do not broadcast or
 * the result would have more than AOTRUN_FB_MAX_DIMS dims. */
AOTRUN_FB_HIDDEN int aotrun_fb_broadcast_into(int64_t *nd, int64_t *sizes,
                                              const int64_t *b, int64_t nb);

/* Strides of tensor (sizes, strides, ndim) expanded to shape (to, to_ndim)
 * (right-aligned; 0 on broadcast dims) into out[to_ndim]. Returns 0, or -1
 * when it does not expand to that shape. */
AOTRUN_FB_HIDDEN int aotrun_fb_expand_strides(const int64_t *sizes,
                                              const int64_t *strides,
                                              int64_t ndim, const int64_t *to,
                                              int64_t to_ndim, int64_t *out);

/* Removes size-1 dims and merges neighbours whose strides nest in every one
 * of the `nops` stride arrays (row-major iteration order is kept). Updates
 * *nd, sizes and each strides[k] in place. A size-0 dim is kept. */
AOTRUN_FB_HIDDEN void aotrun_fb_collapse_dims(int32_t *nd, int64_t *sizes,
                                              int64_t *const *strides,
                                              int nops);

#endif /* AOTRUN_FALLBACK_TENSOR_LAYOUT_H */
