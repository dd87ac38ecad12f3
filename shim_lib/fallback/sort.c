/* sort.c: aoti_torch_cuda_sort and aoti_torch_cuda_sort_stable.
 *
 * Always a stable sort (ties keep index order in both directions) through
 * aotrun_fb_sort_rows: rows of <= 4096 elements one thread block each
 * (cub::BlockRadixSort), longer rows one cub::DeviceRadixSort over
 * (row, key). Element order is ATen's CUDA order (sort_kernels.h): its
 * radix sorts' for every size, except that ATen's non-stable sort of at
 * most 32 elements is a comparison sort putting every NaN last (first when
 * descending), which is reproduced. Outputs are strided like
 * torch.empty_like(self), as the meta function promises. No host
 * synchronisation: usable inside a CUDA graph capture.
 *
 * argsort: torch 2.11's c_shim_cuda.h has no argsort entry (Inductor
 * lowers it to a Triton sort); where a fallback is emitted it is aten.sort,
 * whose indices output is the argsort. */
#include <string.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/sort_plan.h"
#include "shim_lib/fallback/sort_rows.h"

static AOTITorchError run(const char *op, const aotrun_fb_sort_plan *p,
                          int stable, int descending, void *values,
                          int64_t *indices, cudaStream_t stream) {
  aotrun_fb_sort_rows_args a;
  memset(&a, 0, sizeof a);
  a.in = p->self.data;
  a.dtype = p->self.dtype;
  a.rows = p->rows;
  a.n = p->n;
  a.k = p->n;
  a.order = !stable && p->n <= 32 ? AOTRUN_FB_ORDER_NAN_LARGEST
                                  : AOTRUN_FB_ORDER_SORT;
  a.descending = descending;
  a.values = values;
  a.indices = indices;
  aotrun_fb_sort_plan_layout(p, &a.layout);
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, op, p->self.device_index);
  AOTITorchError err = aotrun_fb_sort_rows(&temps, &a, stream);
  aotrun_fb_temps_release(&temps);
  return err;
}

static AOTITorchError sort_op(const char *op, AtenTensorHandle self,
                              int stable, int64_t dim, int32_t descending,
                              AtenTensorHandle *ret0, AtenTensorHandle *ret1) {
  aotrun_fb_sort_plan plan;
  AOTITorchError err = aotrun_fb_sort_plan_build(op, self, dim, ret0, ret1,
                                                 &plan);
  if (err) return err;
  *ret0 = *ret1 = NULL;
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(op, plan.self.device_index, &scope);
  if (err) return err;
  AtenTensorHandle v = NULL, i = NULL;
  void *vdata = NULL;
  int64_t *idata = NULL;
  err = aotrun_fb_sort_outputs_new(op, &plan, &v, &i, &vdata, &idata);
  if (!err && plan.out_numel > 0)
    err = run(op, &plan, stable, descending != 0, vdata, idata,
              (cudaStream_t)aotrun_shim_current_stream());
  aotrun_fb_device_leave(&scope);
  if (err) {
    aoti_torch_delete_tensor_object(v); /* NULL-safe */
    aoti_torch_delete_tensor_object(i);
    return err;
  }
  *ret0 = v;
  *ret1 = i;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_sort(AtenTensorHandle self,
                                                    int64_t dim,
                                                    int32_t descending,
                                                    AtenTensorHandle *ret0,
                                                    AtenTensorHandle *ret1) {
  /* aten::sort is sort.stable with stable=False. */
  return sort_op("aoti_torch_cuda_sort", self, 0, dim, descending, ret0,
                 ret1);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_sort_stable(
    AtenTensorHandle self, int32_t *stable, int64_t dim, int32_t descending,
    AtenTensorHandle *ret0, AtenTensorHandle *ret1) {
  /* stable=None means False (ATen: stable.value_or(false)). */
  return sort_op("aoti_torch_cuda_sort_stable", self,
                 stable != NULL && *stable != 0, dim, descending, ret0, ret1);
}
