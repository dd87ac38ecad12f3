/*
 * index_tensor.h: the plan of one aoti_torch_cuda_index_Tensor call
 * (advanced indexing `self[None..., index]`), built and checked by
 * index_args.c without CUDA calls, then run by index_tensor.c.
 *
 * Supported: one index tensor after any number of None entries (slices),
 * trailing Nones allowed. A bool/uint8 mask of k dims picks the True
 * positions of dims pos..pos+k-1 in row-major order (the result has
 * [count] in their place); an int32/int64 index picks along dim pos (the
 * result has the index's shape there). Negative integers count from the end.
 */
#ifndef AOTRUN_FALLBACK_INDEX_TENSOR_H
#define AOTRUN_FALLBACK_INDEX_TENSOR_H

#include "shim_lib/fallback/fallback_tensor.h"

typedef struct aotrun_fb_index_plan {
  aotrun_fb_tensor self;
  aotrun_fb_tensor index;
  int64_t pos;       /* first dim of self the index applies to */
  int64_t pick_ndim; /* dims of self the index consumes: k or 1 */
  int is_mask;
} aotrun_fb_index_plan;

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_index_plan_build(
    const char *op, AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t num_indices, aotrun_fb_index_plan *plan);

#endif /* AOTRUN_FALLBACK_INDEX_TENSOR_H */
