/* index_geometry.c: the index shape B, the result shape R and its strides,
 * and the item / column descriptions the indexing kernels walk (see
 * index_tensor.h and index_kernels.h). No CUDA calls. */
#include <string.h>

#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/tensor_layout.h"

static AOTITorchError broadcast_masks(const aotrun_fb_index_plan *p,
                                      const int64_t *counts,
                                      aotrun_fb_index_geom *g) {
  int k = 0;
  for (int i = 0; i < p->n; i++) {
    if (!p->e[i].is_mask) continue;
    int64_t c = counts[k++];
    char sb[128];
    aotrun_fb_shape_str(g->b_sizes, g->b_ndim, sb, sizeof sb);
    if (aotrun_fb_broadcast_into(&g->b_ndim, g->b_sizes, &c, 1) != 0)
      return aotrun_shim_fail(
          "%s: shape mismatch: the mask %s selects %lld elements, which does "
          "not broadcast with the index shape %s of the other index tensors",
          p->op, p->e[i].t.name, (long long)c, sb);
  }
  return AOTI_TORCH_SUCCESS;
}

/* Appends the sliced dims of self in [from, to) to R. */
static void append_sliced(const aotrun_fb_index_plan *p, int64_t from,
                          int64_t to, aotrun_fb_index_geom *g) {
  for (int64_t d = from; d < to; d++) {
    if (p->picked[d]) continue;
    g->rpos[d] = g->ndim;
    g->sizes[g->ndim++] = p->self.sizes[d];
  }
}

AOTITorchError aotrun_fb_index_geom_build(const aotrun_fb_index_plan *p,
                                          const int64_t *counts,
                                          aotrun_fb_index_geom *g) {
  memset(g, 0, sizeof *g);
  g->b_ndim = p->int_ndim;
  memcpy(g->b_sizes, p->int_sizes, sizeof(int64_t) * (size_t)p->int_ndim);
  AOTITorchError err = broadcast_masks(p, counts, g);
  if (err) return err;
  int overflow = 0;
  g->b_numel = aotrun_fb_numel(g->b_sizes, g->b_ndim, &overflow);
  if (overflow)
    return aotrun_shim_fail("%s: the index shape has more than 2^63 elements",
                            p->op);
  int64_t sliced = p->self.ndim - p->pick_ndim;
  if (sliced + g->b_ndim > AOTRUN_FB_MAX_DIMS) {
    char sb[128];
    return aotrun_shim_fail(
        "%s: the result would have %lld dims (index shape %s and %lld "
        "sliced dims); at most %d are supported",
        p->op, (long long)(sliced + g->b_ndim),
        aotrun_fb_shape_str(g->b_sizes, g->b_ndim, sb, sizeof sb),
        (long long)sliced, AOTRUN_FB_MAX_DIMS);
  }
  for (int64_t d = 0; d < AOTRUN_FB_MAX_DIMS; d++) g->rpos[d] = -1;
  g->ndim = 0;
  if (p->adjacent) append_sliced(p, 0, p->pick_first, g);
  g->b_pos = g->ndim;
  for (int64_t j = 0; j < g->b_ndim; j++) g->sizes[g->ndim++] = g->b_sizes[j];
  append_sliced(p, p->adjacent ? p->pick_first : 0, p->self.ndim, g);
  g->numel = aotrun_fb_numel(g->sizes, g->ndim, &overflow);
  if (overflow)
    return aotrun_shim_fail("%s: the result has more than 2^63 elements",
                            p->op);
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_index_result_strides(const aotrun_fb_index_plan *p,
                                    const aotrun_fb_index_geom *g,
                                    int64_t *strides) {
  int overflow = 0;
  if (aotrun_fb_numel(p->self.sizes, p->self.ndim, &overflow) == 0) {
    aotrun_fb_contiguous_strides(g->sizes, g->ndim, strides);
    return;
  }
  /* meta_index_Tensor's restrided self: self's strides on the sliced dims,
   * 0 on B; TensorIterator orders the output like it. */
  int64_t restrided[AOTRUN_FB_MAX_DIMS];
  if (g->b_ndim == 0) {
    /* Only 0-d index tensors: the meta's empty replacement shape is falsy,
     * so it takes every sliced dim as "before" and restrides with the
     * first R.ndim strides of self (indexed dims first when they are not
     * adjacent). Eager differs; the compiled model assumes the meta's. */
    int64_t r = 0;
    for (int64_t d = 0; d < p->self.ndim && !p->adjacent; d++)
      if (p->picked[d] && r < g->ndim) restrided[r++] = p->self.strides[d];
    for (int64_t d = 0; d < p->self.ndim && r < g->ndim; d++)
      if (p->adjacent || !p->picked[d]) restrided[r++] = p->self.strides[d];
    aotrun_fb_elementwise_strides(g->sizes, restrided, g->ndim, strides);
    return;
  }
  for (int64_t j = 0; j < g->b_ndim; j++) restrided[g->b_pos + j] = 0;
  for (int64_t d = 0; d < p->self.ndim; d++)
    if (g->rpos[d] >= 0) restrided[g->rpos[d]] = p->self.strides[d];
  aotrun_fb_elementwise_strides(g->sizes, restrided, g->ndim, strides);
}

void aotrun_fb_index_items_fill(const aotrun_fb_index_plan *p,
                                const aotrun_fb_index_geom *g,
                                const int64_t *const *positions,
                                const int64_t *counts, const int64_t *mul,
                                aotrun_fb_ix_items *it) {
  memset(it, 0, sizeof *it);
  it->op = (uint64_t)(uintptr_t)p->op;
  it->b_ndim = (int32_t)g->b_ndim;
  it->b_numel = g->b_numel;
  memcpy(it->b_sizes, g->b_sizes, sizeof(int64_t) * (size_t)g->b_ndim);
  int32_t npick = 0;
  int mask = 0;
  for (int i = 0; i < p->n; i++) {
    const aotrun_fb_index_entry *e = &p->e[i];
    aotrun_fb_ix_comp *c = &it->comp[i];
    c->pick_first = npick;
    c->pick_ndim = (int32_t)e->ndims;
    c->arg = (uint64_t)(uintptr_t)e->t.name;
    for (int64_t j = 0; j < e->ndims; j++) {
      int64_t d = e->first_dim + j;
      it->pick_sizes[npick] = p->self.sizes[d];
      it->pick_mul[npick] = mul[d];
      it->pick_dim[npick] = (int32_t)d;
      npick++;
    }
    if (e->is_mask) {
      /* [count] right-aligned with B; a count of 1 broadcasts. */
      c->kind = AOTRUN_FB_IX_POSITIONS;
      c->data = positions[mask];
      c->ndim = 1;
      c->strides[0] = counts[mask] == 1 ? 0 : 1;
      mask++;
      continue;
    }
    c->kind = e->t.dtype == AOTRUN_FB_INT32 ? AOTRUN_FB_IX_INT32
                                            : AOTRUN_FB_IX_INT64;
    c->data = e->t.data;
    c->ndim = (int32_t)e->t.ndim;
    for (int64_t j = 0; j < e->t.ndim; j++)
      c->strides[j] = e->t.sizes[j] == 1 ? 0 : e->t.strides[j];
  }
  it->ncomp = p->n;
  it->pick_ndim = npick;
}

int64_t aotrun_fb_index_linear_mul(const aotrun_fb_index_plan *p,
                                   int64_t *mul) {
  int64_t acc = 1;
  for (int64_t d = p->self.ndim - 1; d >= 0; d--) {
    mul[d] = 0;
    if (!p->picked[d]) continue;
    mul[d] = acc;
    if (__builtin_mul_overflow(acc, p->self.sizes[d], &acc)) return -1;
  }
  return acc;
}

void aotrun_fb_index_gather_cols(const aotrun_fb_index_plan *p,
                                 const aotrun_fb_index_geom *g,
                                 const int64_t *out_strides,
                                 aotrun_fb_ix_cols *cols) {
  memset(cols, 0, sizeof *cols);
  int32_t nd = 0;
  for (int64_t d = 0; d < p->self.ndim; d++) {
    if (p->picked[d]) continue;
    cols->sizes[nd] = p->self.sizes[d];
    cols->src[nd] = p->self.strides[d];
    cols->dst[nd] = out_strides[g->rpos[d]];
    nd++;
  }
  int64_t *const strides[2] = {cols->src, cols->dst};
  aotrun_fb_collapse_dims(&nd, cols->sizes, strides, 2);
  cols->ndim = nd;
  int overflow = 0;
  cols->numel = aotrun_fb_numel(cols->sizes, nd, &overflow);
  for (int64_t j = 0; j < g->b_ndim; j++)
    cols->item_dst[j] = out_strides[g->b_pos + j];
}

void aotrun_fb_index_put_cols(const aotrun_fb_index_plan *p,
                              const aotrun_fb_index_geom *g,
                              const int64_t *dst_strides,
                              const int64_t *vstrides,
                              aotrun_fb_ix_cols *cols) {
  memset(cols, 0, sizeof *cols);
  int32_t nd = 0, np = 0;
  for (int64_t d = 0; d < p->self.ndim; d++) {
    if (p->picked[d]) {
      cols->pick_dst[np++] = dst_strides[d];
      continue;
    }
    cols->sizes[nd] = p->self.sizes[d];
    cols->src[nd] = vstrides[g->rpos[d]];
    cols->dst[nd] = dst_strides[d];
    nd++;
  }
  int64_t *const strides[2] = {cols->src, cols->dst};
  aotrun_fb_collapse_dims(&nd, cols->sizes, strides, 2);
  cols->ndim = nd;
  int overflow = 0;
  cols->numel = aotrun_fb_numel(cols->sizes, nd, &overflow);
  for (int64_t j = 0; j < g->b_ndim; j++)
    cols->item_src[j] = vstrides[g->b_pos + j];
}
