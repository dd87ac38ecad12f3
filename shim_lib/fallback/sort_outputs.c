/* sort_outputs.c: the outputs of sort/topk and their row layout. */
#include "shim_lib/fallback/sort_plan.h"
#include "shim_lib/fallback/sort_rows.h"

static AOTITorchError new_output(const char *op, const aotrun_fb_sort_plan *p,
                                 int32_t dtype, const char *what,
                                 AtenTensorHandle *h, void **data) {
  *h = NULL;
  if (aoti_torch_empty_strided(p->self.ndim, p->out_sizes, p->out_strides,
                               dtype, AOTRUN_FB_DEVICE_CUDA,
                               p->self.device_index, h) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the %s: %s", op, what,
                            aotrun_shim_last_error());
  if (aoti_torch_get_data_ptr(*h, data) != AOTI_TORCH_SUCCESS) {
    aoti_torch_delete_tensor_object(*h);
    *h = NULL;
    return aotrun_shim_fail("%s: cannot read the %s' data pointer", op, what);
  }
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_sort_outputs_new(const char *op,
                                          const aotrun_fb_sort_plan *p,
                                          AtenTensorHandle *values,
                                          AtenTensorHandle *indices,
                                          void **values_data,
                                          int64_t **indices_data) {
  void *idata = NULL;
  AOTITorchError err =
      new_output(op, p, p->self.dtype, "values", values, values_data);
  if (err) return err;
  err = new_output(op, p, AOTRUN_FB_INT64, "indices", indices, &idata);
  if (err) {
    aoti_torch_delete_tensor_object(*values);
    *values = NULL;
    return err;
  }
  *indices_data = idata;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_sort_plan_layout(const aotrun_fb_sort_plan *p,
                                aotrun_fb_rows_layout *l) {
  if (p->self.ndim == 0) { /* one row of one element */
    aotrun_fb_rows_layout_contiguous(1, 1, 1, l);
    return;
  }
  aotrun_fb_rows_layout_of(p->self.sizes, p->self.strides, p->out_strides,
                           p->self.ndim, p->dim, l);
}
