/* index_args.c: reading and checking the index list of advanced indexing
 * (index_tensor.h) against self. No CUDA calls, so every argument error is
 * reported on a machine without a GPU too. */
#include <string.h>

#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char *const kNames[AOTRUN_FB_MAX_DIMS] = {
    "indices[0]",  "indices[1]",  "indices[2]",  "indices[3]",
    "indices[4]",  "indices[5]",  "indices[6]",  "indices[7]",
    "indices[8]",  "indices[9]",  "indices[10]", "indices[11]",
    "indices[12]", "indices[13]", "indices[14]", "indices[15]"};

const char *aotrun_fb_index_name(int64_t i) {
  return i >= 0 && i < AOTRUN_FB_MAX_DIMS ? kNames[i] : "an index tensor";
}

/* Reads indices[i] and decides its kind (dtype, device). */
static AOTITorchError read_entry(const char *op, const aotrun_fb_tensor *self,
                                 AtenTensorHandle h, int64_t i,
                                 aotrun_fb_index_entry *e) {
  AOTITorchError err = aotrun_fb_tensor_read(op, aotrun_fb_index_name(i), h,
                                             &e->t);
  if (err) return err;
  char buf[24];
  int32_t dt = e->t.dtype;
  if (dt == AOTRUN_FB_BOOL || dt == AOTRUN_FB_UINT8) {
    e->is_mask = 1;
    e->ndims = e->t.ndim;
  } else if (dt == AOTRUN_FB_INT64 || dt == AOTRUN_FB_INT32) {
    e->is_mask = 0;
    e->ndims = 1;
  } else {
    return aotrun_shim_fail(
        "%s: %s has dtype %s; index tensors must be bool, uint8, int32 or "
        "int64",
        op, e->t.name, aotrun_fb_dtype_name(dt, buf));
  }
  err = aotrun_fb_require_cuda(op, &e->t, self->device_index, "self");
  if (err) return err;
  if (e->is_mask && e->t.ndim == 0)
    return aotrun_shim_fail(
        "%s: the 0-d mask %s is not supported (it selects no dim of 'self')",
        op, e->t.name);
  return AOTI_TORCH_SUCCESS;
}

/* Shape checks of one entry against the dims of self it indexes. */
static AOTITorchError check_entry_dims(const char *op,
                                       const aotrun_fb_tensor *s,
                                       const aotrun_fb_index_entry *e) {
  const aotrun_fb_tensor *m = &e->t;
  if (e->is_mask) {
    for (int64_t j = 0; j < m->ndim; j++) {
      int64_t d = e->first_dim + j;
      if (m->sizes[j] == s->sizes[d]) continue;
      char sm[128], ss[128];
      return aotrun_shim_fail(
          "%s: the mask %s has size %lld in dim %lld but 'self' has size "
          "%lld in dim %lld (mask %s, self %s)",
          op, m->name, (long long)m->sizes[j], (long long)j,
          (long long)s->sizes[d], (long long)d,
          aotrun_fb_shape_str(m->sizes, m->ndim, sm, sizeof sm),
          aotrun_fb_shape_str(s->sizes, s->ndim, ss, sizeof ss));
    }
    return AOTI_TORCH_SUCCESS;
  }
  int overflow = 0;
  if (s->sizes[e->first_dim] == 0 &&
      aotrun_fb_numel(m->sizes, m->ndim, &overflow) > 0)
    return aotrun_shim_fail(
        "%s: %s indexes dim %lld of 'self', which has size 0", op, m->name,
        (long long)e->first_dim);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError broadcast_integers(const char *op,
                                         aotrun_fb_index_plan *p) {
  p->int_ndim = 0;
  for (int k = 0; k < p->n; k++) {
    const aotrun_fb_tensor *t = &p->e[k].t;
    if (p->e[k].is_mask) continue;
    char sa[128], sb[128];
    aotrun_fb_shape_str(p->int_sizes, p->int_ndim, sb, sizeof sb);
    if (aotrun_fb_broadcast_into(&p->int_ndim, p->int_sizes, t->sizes,
                                 t->ndim) != 0)
      return aotrun_shim_fail(
          "%s: shape mismatch: %s of shape %s does not broadcast with the "
          "index shape %s of the index tensors before it",
          op, t->name, aotrun_fb_shape_str(t->sizes, t->ndim, sa, sizeof sa),
          sb);
  }
  return AOTI_TORCH_SUCCESS;
}

/* Which dims of self are indexed, and whether they form one run. */
static void mark_picked(aotrun_fb_index_plan *p) {
  int64_t first = -1, last = -1;
  for (int k = 0; k < p->n; k++) {
    const aotrun_fb_index_entry *e = &p->e[k];
    for (int64_t j = 0; j < e->ndims; j++) p->picked[e->first_dim + j] = 1;
    if (first < 0) first = e->first_dim;
    last = e->first_dim + e->ndims - 1;
  }
  p->pick_first = first;
  p->pick_ndim = 0;
  p->adjacent = 1;
  for (int64_t d = first; d <= last; d++) {
    if (p->picked[d])
      p->pick_ndim++;
    else
      p->adjacent = 0;
  }
}

AOTITorchError aotrun_fb_index_plan_build(const char *op,
                                          const aotrun_fb_tensor *self,
                                          const AtenTensorHandle *indices,
                                          int64_t num_indices,
                                          aotrun_fb_index_plan *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->self = *self;
  if (num_indices < 0 || (num_indices > 0 && indices == NULL))
    return aotrun_shim_fail("%s: bad index list (%lld entries at %p)", op,
                            (long long)num_indices, (const void *)indices);
  char ss[128];
  if (num_indices > self->ndim)
    return aotrun_shim_fail(
        "%s: too many indices for 'self' %s of dimension %lld (got %lld)", op,
        aotrun_fb_shape_str(self->sizes, self->ndim, ss, sizeof ss),
        (long long)self->ndim, (long long)num_indices);
  int64_t dim = 0;
  for (int64_t i = 0; i < num_indices; i++) {
    if (indices[i] == NULL) {
      dim++;
      continue;
    }
    aotrun_fb_index_entry *e = &p->e[p->n];
    AOTITorchError err = read_entry(op, self, indices[i], i, e);
    if (err) return err;
    e->first_dim = dim;
    dim += e->ndims;
    p->num_masks += e->is_mask;
    p->n++;
  }
  if (p->n == 0)
    return aotrun_shim_fail("%s: no index tensor (all %lld indices are None)",
                            op, (long long)num_indices);
  if (dim > self->ndim)
    return aotrun_shim_fail(
        "%s: too many indices for 'self' %s of dimension %lld (the indices "
        "consume %lld dims)",
        op, aotrun_fb_shape_str(self->sizes, self->ndim, ss, sizeof ss),
        (long long)self->ndim, (long long)dim);
  for (int k = 0; k < p->n; k++) {
    AOTITorchError err = check_entry_dims(op, self, &p->e[k]);
    if (err) return err;
  }
  mark_picked(p);
  return broadcast_integers(op, p);
}

void aotrun_fb_index_plan_full_mask(const char *op,
                                    const aotrun_fb_tensor *self,
                                    const aotrun_fb_tensor *mask,
                                    aotrun_fb_index_plan *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->self = *self;
  p->n = 1;
  p->e[0].t = *mask;
  p->e[0].is_mask = 1;
  p->e[0].first_dim = 0;
  p->e[0].ndims = self->ndim;
  p->num_masks = 1;
  mark_picked(p);
}
