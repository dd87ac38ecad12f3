/*
 * index_put.h: one index_put call (aoti_torch_cuda_index_put and the
 * generic aoti_torch_index_put_out): out = self with out[indices] = values,
 * or += values with accumulate, as Tensor.index_put_ defines it.
 *
 * values broadcast to the indexing result's shape (index_tensor.h). Without
 * accumulate, of several items naming one element the last in index order
 * wins (ATen's deterministic path); with it, out = self + v_1 + v_2 + ... in
 * index order (float16/bfloat16 summed in float and rounded once, integers
 * wrap). Integer indices are sorted by target with the shared stable radix
 * sort; nothing synchronises and an out-of-range index is reported through
 * the device error slot and skipped.
 *
 * One boolean mask and no other index tensor (`out[mask] = values`, what a
 * masked copy compiles to) takes the mask path: the k-th True position
 * takes values[k] through an exclusive scan of the mask, with no host
 * synchronisation either; values whose length along the mask dim is
 * neither 1 nor the True count are reported through the device error slot
 * (positions past the end of values are left unchanged). A mask mixed with
 * other index tensors needs its count on the host: refused in a capture.
 */
#ifndef AOTRUN_FALLBACK_INDEX_PUT_H
#define AOTRUN_FALLBACK_INDEX_PUT_H

#include "shim_lib/fallback/index_tensor.h"

typedef struct aotrun_fb_put_call {
  const char *op;
  aotrun_fb_tensor self, values, out; /* out: index_put_out only */
  int has_out;
  int in_place; /* out is self (same data and strides): no copy */
  int accumulate;
  int acc_kind; /* AOTRUN_FB_ACC_*, with accumulate */
  int mask_path;
  aotrun_fb_index_plan plan;
} aotrun_fb_put_call;

/* The destination being written: out, or the new result tensor. */
typedef struct aotrun_fb_put_dest {
  char *data;
  const int64_t *strides;
} aotrun_fb_put_dest;

/* Reads and checks every argument (no CUDA calls). has_out: out is an
 * argument (index_put_out). indices[i] == NULL is None. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_put_args(
    const char *op, int has_out, AtenTensorHandle out, AtenTensorHandle self,
    const AtenTensorHandle *indices, int64_t num_indices,
    AtenTensorHandle values, int accumulate, aotrun_fb_put_call *c);

/* values' strides expanded to the indexing result R of geom (0 on
 * broadcast dims); fails naming both shapes when they do not broadcast. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_put_values_strides(
    const aotrun_fb_put_call *c, const aotrun_fb_index_geom *geom,
    int64_t *vstrides);

/* The mask path's values check without the True count (its dim in R
 * accepts any size; the count is checked on the device). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_put_mask_values_check(
    const aotrun_fb_put_call *c);

/* Runs the call into dest (which already holds self unless c->mask_path
 * and dest is not self: the mask path copies self itself). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_put_run(aotrun_fb_put_call *c,
                                                 const aotrun_fb_put_dest *dest,
                                                 aotrun_fb_temps *temps,
                                                 cudaStream_t stream);

/* The mask path (index_put_mask.c); copies self into dest unless
 * c->in_place. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_put_mask_run(
    const aotrun_fb_put_call *c, const aotrun_fb_put_dest *dest,
    aotrun_fb_temps *temps, cudaStream_t stream);

#endif /* AOTRUN_FALLBACK_INDEX_PUT_H */
