/* index_args.c: argument checks of aoti_torch_cuda_index_Tensor (no CUDA
 * calls). */
#include "shim_lib/fallback/index_tensor.h"

#include <string.h>

/* The one non-None entry of indices (a NULL entry or a NULL handle is None). */
static AOTITorchError find_index(const char *op,
                                 const AtenTensorHandle **indices,
                                 int64_t num_indices, int64_t *pos) {
  *pos = -1;
  for (int64_t i = 0; i < num_indices; i++) {
    if (indices[i] == NULL || *indices[i] == NULL) continue;
    if (*pos >= 0)
      return aotrun_shim_fail(
          "%s: only one index tensor is supported, got tensors at indices "
          "%lld and %lld",
          op, (long long)*pos, (long long)i);
    *pos = i;
  }
  if (*pos < 0)
    return aotrun_shim_fail("%s: no index tensor (all %lld indices are None)",
                            op, (long long)num_indices);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError check_mask_shape(const char *op,
                                       const aotrun_fb_index_plan *p) {
  const aotrun_fb_tensor *m = &p->index, *s = &p->self;
  for (int64_t j = 0; j < m->ndim; j++) {
    if (m->sizes[j] == s->sizes[p->pos + j]) continue;
    char sm[128], ss[128];
    return aotrun_shim_fail(
        "%s: the mask %s has size %lld in dim %lld but 'self' has size %lld "
        "in dim %lld (mask %s, self %s)",
        op, m->name, (long long)m->sizes[j], (long long)j,
        (long long)s->sizes[p->pos + j], (long long)(p->pos + j),
        aotrun_fb_shape_str(m->sizes, m->ndim, sm, sizeof sm),
        aotrun_fb_shape_str(s->sizes, s->ndim, ss, sizeof ss));
  }
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError check_index_tensor(const char *op,
                                         aotrun_fb_index_plan *p,
                                         int64_t num_indices) {
  aotrun_fb_tensor *ix = &p->index;
  char buf[24];
  if (ix->dtype == AOTRUN_FB_BOOL || ix->dtype == AOTRUN_FB_UINT8) {
    p->is_mask = 1;
    p->pick_ndim = ix->ndim;
  } else if (ix->dtype == AOTRUN_FB_INT64 || ix->dtype == AOTRUN_FB_INT32) {
    p->is_mask = 0;
    p->pick_ndim = 1;
  } else {
    return aotrun_shim_fail(
        "%s: %s has dtype %s; index tensors must be bool, uint8, int32 or "
        "int64",
        op, ix->name, aotrun_fb_dtype_name(ix->dtype, buf));
  }
  /* Each None consumes one dim of self, the index pick_ndim dims. */
  int64_t consumed = num_indices - 1 + p->pick_ndim;
  if (consumed > p->self.ndim) {
    char ss[128];
    return aotrun_shim_fail(
        "%s: too many indices for 'self' %s of dimension %lld (the indices "
        "consume %lld dims)",
        op, aotrun_fb_shape_str(p->self.sizes, p->self.ndim, ss, sizeof ss),
        (long long)p->self.ndim, (long long)consumed);
  }
  AOTITorchError err =
      aotrun_fb_require_cuda(op, ix, p->self.device_index, "self");
  if (err) return err;
  if (p->is_mask) return check_mask_shape(op, p);
  int overflow = 0;
  if (p->self.sizes[p->pos] == 0 &&
      aotrun_fb_numel(ix->sizes, ix->ndim, &overflow) > 0)
    return aotrun_shim_fail(
        "%s: %s indexes dim %lld of 'self', which has size 0", op, ix->name,
        (long long)p->pos);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_index_plan_build(const char *op,
                                          AtenTensorHandle self,
                                          const AtenTensorHandle **indices,
                                          int64_t num_indices,
                                          aotrun_fb_index_plan *p) {
  memset(p, 0, sizeof *p);
  AOTITorchError err = aotrun_fb_tensor_read(op, "self", self, &p->self);
  if (err) return err;
  if (num_indices < 0 || (num_indices > 0 && indices == NULL))
    return aotrun_shim_fail("%s: bad index list (%lld entries at %p)", op,
                            (long long)num_indices, (const void *)indices);
  err = aotrun_fb_require_cuda(op, &p->self, -1, NULL);
  if (err) return err;
  if (p->self.elem_size == 0) {
    char buf[24];
    return aotrun_shim_fail("%s: 'self' has unsupported dtype %s", op,
                            aotrun_fb_dtype_name(p->self.dtype, buf));
  }
  err = find_index(op, indices, num_indices, &p->pos);
  if (err) return err;
  /* Names like "indices[1]" must outlive the plan: keep them static. */
  static const char *const names[] = {
      "indices[0]",  "indices[1]",  "indices[2]",  "indices[3]",
      "indices[4]",  "indices[5]",  "indices[6]",  "indices[7]",
      "indices[8]",  "indices[9]",  "indices[10]", "indices[11]",
      "indices[12]", "indices[13]", "indices[14]", "indices[15]"};
  const char *name = p->pos < 16 ? names[p->pos] : "an index tensor";
  err = aotrun_fb_tensor_read(op, name, *indices[p->pos], &p->index);
  if (err) return err;
  return check_index_tensor(op, p, num_indices);
}
