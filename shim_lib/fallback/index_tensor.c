/* index_tensor.c: aoti_torch_cuda_index_Tensor, eager torch's
 * `self[indices]` (aten.index.Tensor; see index_tensor.h for the rules).
 *
 * Integer indices: one gather kernel reads, wraps and bounds-checks the
 * index values inline (out-of-range values go to the device error slot),
 * so nothing synchronises and the call captures into a CUDA graph.
 * Masks: their True counts decide the result shape, so they are read back
 * (the call refuses to run inside a capture); then either CUB compacts the
 * values directly (one mask over all of a contiguous self: x[m]) or the
 * True positions feed the same gather as integer indices. */
#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/mask_positions.h"

static const char kOp[] = "aoti_torch_cuda_index_Tensor";

static AOTITorchError cuda_fail(const char *op, const char *what,
                                cudaError_t e) {
  return aotrun_shim_fail("%s: %s failed: %s", op, what,
                          cudaGetErrorString(e));
}

/* x[m] with m covering every dim of a contiguous self: CUB selects the
 * values straight into the 1-D result. */
static int is_direct_select(const aotrun_fb_index_plan *p) {
  return p->n == 1 && p->e[0].is_mask && p->e[0].ndims == p->self.ndim &&
         aotrun_fb_is_contiguous(p->self.sizes, p->self.strides,
                                 p->self.ndim);
}

static AOTITorchError direct_select(aotrun_fb_temps *temps,
                                    const aotrun_fb_index_plan *p,
                                    const aotrun_fb_index_masks *m, void *out,
                                    cudaStream_t stream) {
  int64_t one = 1;
  void *d_count = NULL;
  AOTITorchError err =
      aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &one, &d_count);
  if (err) return err;
  aotrun_fb_mask_args a = {0};
  a.data = p->self.data;
  a.flags = (const uint8_t *)m->flags[0];
  a.elem_size = (int32_t)p->self.elem_size;
  a.n = m->numel[0];
  a.out = out;
  a.count = (int64_t *)d_count;
  return aotrun_fb_mask_op(temps, "the mask", AOTRUN_FB_MASK_SELECT, &a,
                           stream);
}

static AOTITorchError gather(aotrun_fb_temps *temps,
                             const aotrun_fb_index_plan *p,
                             const aotrun_fb_index_geom *g,
                             aotrun_fb_index_masks *m, const int64_t *strides,
                             void *out, cudaStream_t stream) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (p->num_masks > 0) err = aotrun_fb_index_mask_positions(temps, p, stream, m);
  aotrun_device_error *slot = NULL;
  if (!err && p->n > p->num_masks)  /* integer indices can be out of range */
    err = aotrun_fb_error_slot(p->op, p->self.device_index, &slot);
  if (err) return err;
  aotrun_fb_ix_items items;
  aotrun_fb_ix_cols cols;
  aotrun_fb_index_items_fill(p, g, m->positions, m->counts, p->self.strides,
                             &items);
  aotrun_fb_index_gather_cols(p, g, strides, &cols);
  cudaError_t e = aotrun_fb_index_gather(out, p->self.data, p->self.elem_size,
                                         &items, &cols, slot, stream);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                          : cuda_fail(p->op, "the gather kernel", e);
}

AOTITorchError aotrun_fb_index_run(const aotrun_fb_index_plan *p,
                                   aotrun_fb_temps *temps,
                                   cudaStream_t stream,
                                   AtenTensorHandle *ret0) {
  aotrun_fb_index_masks m = {0};
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (p->num_masks > 0) err = aotrun_fb_index_mask_counts(temps, p, stream, &m);
  aotrun_fb_index_geom g;
  if (!err) err = aotrun_fb_index_geom_build(p, m.counts, &g);
  if (err) return err;
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_index_result_strides(p, &g, strides);
  AtenTensorHandle result = NULL;
  if (aoti_torch_empty_strided(g.ndim, g.sizes, strides, p->self.dtype,
                               AOTRUN_FB_DEVICE_CUDA, p->self.device_index,
                               &result) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", p->op,
                            aotrun_shim_last_error());
  void *out = NULL;
  if (aoti_torch_get_data_ptr(result, &out) != AOTI_TORCH_SUCCESS)
    err = aotrun_shim_fail("%s: cannot read the result's data", p->op);
  if (!err && g.numel > 0)
    err = is_direct_select(p) ? direct_select(temps, p, &m, out, stream)
                              : gather(temps, p, &g, &m, strides, out, stream);
  if (err) {
    aoti_torch_delete_tensor_object(result);
    return err;
  }
  *ret0 = result;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError read_self(AtenTensorHandle self, aotrun_fb_tensor *s) {
  AOTITorchError err = aotrun_fb_tensor_read(kOp, "self", self, s);
  if (!err) err = aotrun_fb_require_cuda(kOp, s, -1, NULL);
  if (!err && s->elem_size == 0) {
    char buf[24];
    err = aotrun_shim_fail("%s: 'self' has unsupported dtype %s", kOp,
                           aotrun_fb_dtype_name(s->dtype, buf));
  }
  return err;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_Tensor(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  aotrun_fb_tensor s;
  AOTITorchError err = read_self(self, &s);
  if (err) return err;
  if (indices_len_ < 0 || (indices_len_ > 0 && indices == NULL))
    return aotrun_shim_fail("%s: bad index list (%lld entries at %p)", kOp,
                            (long long)indices_len_, (const void *)indices);
  /* Tensor?[]: a NULL pointer or a NULL handle is None. A list longer
   * than any self's dims is refused by the plan before it reads list. */
  AtenTensorHandle list[AOTRUN_FB_MAX_DIMS];
  for (int64_t i = 0; i < indices_len_ && i < AOTRUN_FB_MAX_DIMS; i++)
    list[i] = indices[i] != NULL ? *indices[i] : NULL;
  aotrun_fb_index_plan plan;
  err = aotrun_fb_index_plan_build(kOp, &s, list, indices_len_, &plan);
  if (err) return err;
  if (plan.num_masks > 0) {
    /* The count is read back: fail cleanly inside a capture, before any
     * device work. */
    err = aotrun_shim_refuse_if_capturing(
        "aoti_torch_cuda_index_Tensor (boolean mask)");
    if (err) return err;
  }
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, s.device_index, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, kOp, s.device_index);
  err = aotrun_fb_index_run(&plan, &temps, stream, ret0);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}
