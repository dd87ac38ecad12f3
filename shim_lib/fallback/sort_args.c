/* sort_args.c: argument checks and output geometry of sort, sort_stable
 * and topk (no CUDA calls). */
#include <string.h>

#include "shim_lib/fallback/tensor_layout.h"
#include "shim_lib/fallback/sort_plan.h"
#include "shim_lib/fallback/sort_rows.h"

static AOTITorchError check_results(const char *op,
                                    const AtenTensorHandle *ret0,
                                    const AtenTensorHandle *ret1) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' (values) is NULL",
                            op);
  if (ret1 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret1' (indices) is NULL",
                            op);
  return AOTI_TORCH_SUCCESS;
}

/* Reads self, requires CUDA and a sortable dtype, wraps dim (a 0-d tensor
 * takes dim -1 or 0, like ATen's maybe_wrap_dim with wrap_scalar). */
static AOTITorchError common(const char *op, AtenTensorHandle self,
                             int64_t dim, aotrun_fb_sort_plan *p) {
  memset(p, 0, sizeof *p);
  AOTITorchError err = aotrun_fb_tensor_read(op, "self", self, &p->self);
  if (err) return err;
  err = aotrun_fb_require_cuda(op, &p->self, -1, NULL);
  if (err) return err;
  if (!aotrun_fb_sort_elems_for(p->self.dtype, &p->elems)) {
    char buf[24];
    return aotrun_shim_fail(
        "%s: 'self' has dtype %s, which cannot be sorted (supported: bool, "
        "uint8, int8, int16, int32, int64, uint16, uint32, uint64, float16, "
        "bfloat16, float32, float64)",
        op, aotrun_fb_dtype_name(p->self.dtype, buf));
  }
  const int64_t nd = p->self.ndim;
  const int64_t span = nd > 0 ? nd : 1;
  if (dim < -span || dim >= span)
    return aotrun_shim_fail(
        "%s: dim %lld is out of range for 'self' with %lld dims (expected a "
        "dim in [%lld, %lld])",
        op, (long long)dim, (long long)nd, (long long)-span,
        (long long)(span - 1));
  p->dim = dim < 0 ? dim + span : dim;
  p->n = nd > 0 ? p->self.sizes[p->dim] : 1;
  int overflow = 0;
  int64_t numel = aotrun_fb_numel(p->self.sizes, nd, &overflow);
  if (overflow)
    return aotrun_shim_fail("%s: 'self' has more than 2^63 elements", op);
  p->rows = numel > 0 ? numel / p->n : 0;
  for (int64_t d = 0; d < nd; d++) p->out_sizes[d] = p->self.sizes[d];
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_sort_plan_build(const char *op, AtenTensorHandle self,
                                         int64_t dim,
                                         const AtenTensorHandle *ret0,
                                         const AtenTensorHandle *ret1,
                                         aotrun_fb_sort_plan *p) {
  AOTITorchError err = check_results(op, ret0, ret1);
  if (!err) err = common(op, self, dim, p);
  if (err) return err;
  p->k = p->n;
  p->out_numel = p->rows * p->n;
  aotrun_fb_empty_like_strides(p->self.sizes, p->self.strides, p->self.ndim,
                               p->out_strides);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_topk_plan_build(const char *op, AtenTensorHandle self,
                                         int64_t k, int64_t dim,
                                         const AtenTensorHandle *ret0,
                                         const AtenTensorHandle *ret1,
                                         aotrun_fb_sort_plan *p) {
  AOTITorchError err = check_results(op, ret0, ret1);
  if (!err) err = common(op, self, dim, p);
  if (err) return err;
  if (k < 0 || k > p->n)
    return aotrun_shim_fail(
        "%s: k = %lld is out of range for dim %lld of 'self' with size %lld "
        "(k must be in [0, %lld])",
        op, (long long)k, (long long)p->dim, (long long)p->n,
        (long long)p->n);
  p->k = k;
  if (p->self.ndim > 0) p->out_sizes[p->dim] = k;
  int overflow = 0;
  /* A 0-d self gives 0-d outputs (one element) whatever k is, as ATen. */
  p->out_numel = aotrun_fb_numel(p->out_sizes, p->self.ndim, &overflow);
  aotrun_fb_contiguous_strides(p->out_sizes, p->self.ndim, p->out_strides);
  return AOTI_TORCH_SUCCESS;
}
