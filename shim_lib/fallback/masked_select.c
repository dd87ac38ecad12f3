/* masked_select.c: aoti_torch_cuda_masked_select(self, mask): self and the
 * bool mask broadcast together (a 0-d one counts as 1-D), and the result is
 * the 1-D contiguous list of self's elements where the mask is True, in
 * row-major order of the broadcast shape: ATen's index(self_b, [mask_b]),
 * run by the same plan as index_Tensor. Reads the True count back, so it
 * refuses to run inside a capture. */
#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char kOp[] = "aoti_torch_cuda_masked_select";

/* self and mask viewed with the broadcast shape (stride 0 where they
 * broadcast); the arrays back the views' sizes and strides. */
typedef struct broadcast_views {
  aotrun_fb_tensor self, mask;
  int64_t ndim;
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t self_strides[AOTRUN_FB_MAX_DIMS];
  int64_t mask_strides[AOTRUN_FB_MAX_DIMS];
} broadcast_views;

static AOTITorchError read_args(AtenTensorHandle self, AtenTensorHandle mask,
                                aotrun_fb_tensor *s, aotrun_fb_tensor *m) {
  char buf[24];
  AOTITorchError err = aotrun_fb_tensor_read(kOp, "self", self, s);
  if (!err) err = aotrun_fb_require_cuda(kOp, s, -1, NULL);
  if (!err && s->elem_size == 0)
    err = aotrun_shim_fail("%s: 'self' has unsupported dtype %s", kOp,
                           aotrun_fb_dtype_name(s->dtype, buf));
  if (!err) err = aotrun_fb_tensor_read(kOp, "mask", mask, m);
  if (!err) err = aotrun_fb_require_cuda(kOp, m, s->device_index, "self");
  if (!err && m->dtype != AOTRUN_FB_BOOL)
    err = aotrun_shim_fail("%s: 'mask' has dtype %s; masked_select needs a "
                           "bool mask",
                           kOp, aotrun_fb_dtype_name(m->dtype, buf));
  return err;
}

static AOTITorchError broadcast(const aotrun_fb_tensor *s,
                                const aotrun_fb_tensor *m,
                                broadcast_views *v) {
  static const int64_t one = 1;
  /* 0-d operands act as 1-D (ATen unsqueezes them). */
  const int64_t *ss = s->ndim ? s->sizes : &one, *sst = s->ndim ? s->strides : &one;
  const int64_t *ms = m->ndim ? m->sizes : &one, *mst = m->ndim ? m->strides : &one;
  int64_t sn = s->ndim ? s->ndim : 1, mn = m->ndim ? m->ndim : 1;
  v->ndim = 0;
  char a[128], b[128];
  if (aotrun_fb_broadcast_into(&v->ndim, v->sizes, ss, sn) != 0 ||
      aotrun_fb_broadcast_into(&v->ndim, v->sizes, ms, mn) != 0)
    return aotrun_shim_fail(
        "%s: shape mismatch: 'self' of shape %s and 'mask' of shape %s do not "
        "broadcast",
        kOp, aotrun_fb_shape_str(s->sizes, s->ndim, a, sizeof a),
        aotrun_fb_shape_str(m->sizes, m->ndim, b, sizeof b));
  aotrun_fb_expand_strides(ss, sst, sn, v->sizes, v->ndim, v->self_strides);
  aotrun_fb_expand_strides(ms, mst, mn, v->sizes, v->ndim, v->mask_strides);
  v->self = *s;
  v->self.ndim = v->ndim;
  v->self.sizes = v->sizes;
  v->self.strides = v->self_strides;
  v->mask = *m;
  v->mask.ndim = v->ndim;
  v->mask.sizes = v->sizes;
  v->mask.strides = v->mask_strides;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_masked_select(
    AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  aotrun_fb_tensor s, m;
  broadcast_views v;
  AOTITorchError err = read_args(self, mask, &s, &m);
  if (!err) err = broadcast(&s, &m, &v);
  if (!err) err = aotrun_shim_refuse_if_capturing(kOp);
  if (err) return err;
  aotrun_fb_index_plan plan;
  aotrun_fb_index_plan_full_mask(kOp, &v.self, &v.mask, &plan);
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
