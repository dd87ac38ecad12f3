/* topk.c: aoti_torch_cuda_topk.
 *
 * Which k elements, and in which order, follows ATen's CUDA topk, a radix
 * selection that orders every NaN above +inf and -0.0 below +0.0
 * (ORDER_TOPK), for any number and length of rows (ATen sorts instead only
 * on ROCm; measured on the H200, torch 2.11: the smallest of a 100000-long
 * row holding -NaN and -inf is -inf). We take the first k of a stable sort
 * in that order (aotrun_fb_select_rows: block radix selections over pieces
 * of <= 4096 elements, then a sort of the k left). With sorted=True ATen
 * then sorts those k: a comparison sort for k <= 32 (every NaN largest,
 * -0.0 == +0.0: our selection order is one of its valid outcomes), its
 * radix sort above (-NaN smallest): for floats with k > 32 the selection
 * is re-sorted in ORDER_SORT. sorted=False leaves ATen's order
 * unspecified; ours is the selection order.
 * Ties: the lowest indices win, in index order. Outputs are contiguous.
 * No host synchronisation: usable inside a CUDA graph capture. */
#include <string.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/sort_plan.h"
#include "shim_lib/fallback/sort_rows.h"

static const char kOp[] = "aoti_torch_cuda_topk";

static AOTITorchError run(const aotrun_fb_sort_plan *p, int largest,
                          int sorted, void *values, int64_t *indices,
                          aotrun_fb_temps *temps, cudaStream_t stream) {
  aotrun_fb_sort_rows_args a;
  memset(&a, 0, sizeof a);
  a.in = p->self.data;
  a.dtype = p->self.dtype;
  a.rows = p->rows;
  a.n = p->n;
  a.k = p->k;
  a.descending = largest;
  a.values = values;
  a.indices = indices;
  aotrun_fb_sort_plan_layout(p, &a.layout);
  a.order = AOTRUN_FB_ORDER_TOPK;
  const int resort =
      sorted && p->elems.kind == AOTRUN_FB_KIND_FLOAT && p->k > 32;
  if (!resort) return aotrun_fb_select_rows(temps, &a, stream);

  /* Select into scratch [rows, k], then sort that into the outputs. */
  const int64_t count = p->rows * p->k;
  void *sel_values = NULL, *sel_indices = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(
      temps, (size_t)count * (size_t)p->elems.elem_size, &sel_values);
  if (!err) err = aotrun_fb_temp_bytes(temps, (size_t)count * 8, &sel_indices);
  if (err) return err;
  aotrun_fb_sort_rows_args sel = a;
  sel.values = sel_values;
  sel.indices = sel_indices;
  aotrun_fb_rows_layout_set_contiguous(&sel.layout, p->k, 1);
  err = aotrun_fb_select_rows(temps, &sel, stream);
  if (err) return err;

  aotrun_fb_sort_rows_args re = a;
  re.in = sel_values;
  re.idx_map = sel_indices;
  re.n = p->k;
  re.order = AOTRUN_FB_ORDER_SORT;
  aotrun_fb_rows_layout_set_contiguous(&re.layout, p->k, 0);
  return aotrun_fb_sort_rows(temps, &re, stream);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_topk(
    AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
    int32_t sorted, AtenTensorHandle *ret0, AtenTensorHandle *ret1) {
  aotrun_fb_sort_plan plan;
  AOTITorchError err =
      aotrun_fb_topk_plan_build(kOp, self, k, dim, ret0, ret1, &plan);
  if (err) return err;
  *ret0 = *ret1 = NULL;
  /* A 0-d self has one output element whatever k (0 or 1) is: fill it. */
  if (plan.self.ndim == 0) plan.k = 1;
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, plan.self.device_index, &scope);
  if (err) return err;
  AtenTensorHandle v = NULL, i = NULL;
  void *vdata = NULL;
  int64_t *idata = NULL;
  err = aotrun_fb_sort_outputs_new(kOp, &plan, &v, &i, &vdata, &idata);
  if (!err && plan.out_numel > 0) {
    aotrun_fb_temps temps;
    aotrun_fb_temps_init(&temps, kOp, plan.self.device_index);
    err = run(&plan, largest != 0, sorted != 0, vdata, idata, &temps,
              (cudaStream_t)aotrun_shim_current_stream());
    aotrun_fb_temps_release(&temps);
  }
  aotrun_fb_device_leave(&scope);
  if (err) {
    aoti_torch_delete_tensor_object(v);
    aoti_torch_delete_tensor_object(i);
    return err;
  }
  *ret0 = v;
  *ret1 = i;
  return AOTI_TORCH_SUCCESS;
}
