/* index_put_mask.c: index_put with one boolean mask and no other index
 * tensor, `out[..., mask, ...] = values` (see index_put.h): an exclusive
 * scan of the mask gives each True position its rank k, which takes
 * values[k] along the mask's dim of the indexing result. No host
 * synchronisation: the True count is checked against values on the device.
 */
#include <stdint.h>

#include "shim_lib/fallback/index_put.h"
#include "shim_lib/fallback/mask_positions.h"
#include "shim_lib/fallback/masked_write.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char kValues[] = "values";

/* values over R = [lead, N, rest]: strides of the other dims, and along N
 * either one value for all (rank_stride 0) or V values checked against the
 * count. */
typedef struct mask_values {
  int64_t rstrides[AOTRUN_FB_MAX_DIMS];
  int64_t rank_stride, rank_limit;
  int check;       /* values has V != 1 along N */
  int64_t v;       /* V */
  int32_t v_dim;   /* its dim in values */
} mask_values;

static void values_layout(const aotrun_fb_put_call *c, mask_values *mv) {
  const aotrun_fb_tensor *v = &c->values;
  int64_t f = c->plan.e[0].first_dim;
  int64_t rnd = c->self.ndim - c->plan.e[0].ndims + 1;
  mv->rank_stride = 0;
  mv->rank_limit = INT64_MAX;
  mv->check = 0;
  mv->v = 0;
  mv->v_dim = 0;
  for (int64_t r = 0; r < rnd; r++) {
    int64_t j = r - (rnd - v->ndim);
    mv->rstrides[r] = 0;
    if (j < 0) continue;
    if (r != f) {
      mv->rstrides[r] = v->sizes[j] == 1 ? 0 : v->strides[j];
    } else if (v->sizes[j] != 1) {
      mv->check = 1;
      mv->v = v->sizes[j];
      mv->v_dim = (int32_t)j;
      mv->rank_stride = v->strides[j];
      mv->rank_limit = v->sizes[j];
    }
  }
}

/* The walk over self's dims: out, self, values and flags strides. */
static void describe(const aotrun_fb_put_call *c, const aotrun_fb_put_dest *dest,
                     const mask_values *mv, aotrun_fb_masked_write *d) {
  const aotrun_fb_tensor *s = &c->self;
  int64_t f = c->plan.e[0].first_dim, k = c->plan.e[0].ndims;
  int64_t mstr[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(s->sizes + f, k, mstr);
  int32_t nd = (int32_t)s->ndim;
  for (int32_t i = 0; i < nd; i++) {
    int in_mask = i >= f && i < f + k;
    d->sizes[i] = s->sizes[i];
    d->out[i] = dest->strides[i];
    d->self[i] = s->strides[i];
    d->values[i] = in_mask ? 0 : mv->rstrides[i < f ? i : i - k + 1];
    d->flags[i] = in_mask ? mstr[i - f] : 0;
  }
  int64_t *const strides[4] = {d->out, d->self, d->values, d->flags};
  aotrun_fb_collapse_dims(&nd, d->sizes, strides, 4);
  d->ndim = nd;
  int overflow = 0;
  d->numel = aotrun_fb_numel(s->sizes, s->ndim, &overflow);
  d->has_self = !c->in_place;
  d->accumulate = c->accumulate;
  d->acc_kind = c->acc_kind;
  d->rank_stride = mv->rank_stride;
  d->rank_limit = mv->rank_limit;
}

/* The mask's flags (dense) and their exclusive-scan ranks. */
static AOTITorchError ranks_of(const aotrun_fb_put_call *c, int64_t n,
                               aotrun_fb_temps *temps, cudaStream_t stream,
                               const uint8_t **flags, void **ranks,
                               int *rank_bytes) {
  const aotrun_fb_tensor *m = &c->plan.e[0].t;
  *rank_bytes = n <= INT32_MAX ? 4 : 8;
  int dense = aotrun_fb_is_contiguous(m->sizes, m->strides, m->ndim);
  size_t sizes[2] = {dense ? 0 : (size_t)n, (size_t)n * (size_t)*rank_bytes};
  void *b[2];
  AOTITorchError err = aotrun_fb_temp_blocks(temps, 2, sizes, b);
  const void *f = NULL;
  if (!err)
    err = aotrun_fb_dense_or_copy(temps, m->name, m->data, m->sizes,
                                  m->strides, m->ndim, 1, b[0], stream, &f);
  if (err) return err;
  aotrun_fb_mask_args a = {0};
  a.flags = (const uint8_t *)f;
  a.rank_bytes = *rank_bytes;
  a.n = n;
  a.out = b[1];
  *flags = (const uint8_t *)f;
  *ranks = b[1];
  return aotrun_fb_mask_op(temps, "the mask", AOTRUN_FB_MASK_RANKS, &a, stream);
}

AOTITorchError aotrun_fb_put_mask_run(const aotrun_fb_put_call *c,
                                      const aotrun_fb_put_dest *dest,
                                      aotrun_fb_temps *temps,
                                      cudaStream_t stream) {
  const aotrun_fb_tensor *m = &c->plan.e[0].t;
  mask_values mv;
  values_layout(c, &mv);
  int overflow = 0;
  int64_t n = aotrun_fb_numel(m->sizes, m->ndim, &overflow);
  if (n == 0) {
    /* No True position, and self has no element. */
    if (mv.check && mv.v != 0)
      return aotrun_shim_fail(
          "%s: shape mismatch: the mask selects 0 elements but 'values' has "
          "%lld in dim %d",
          c->op, (long long)mv.v, (int)mv.v_dim);
    return AOTI_TORCH_SUCCESS;
  }
  const uint8_t *flags = NULL;
  void *ranks = NULL;
  int rank_bytes = 4;
  AOTITorchError err = ranks_of(c, n, temps, stream, &flags, &ranks,
                                &rank_bytes);
  if (err) return err;
  if (mv.check) {
    aotrun_device_error *slot = NULL;
    err = aotrun_fb_error_slot(c->op, c->self.device_index, &slot);
    if (err) return err;
    cudaError_t e = aotrun_fb_mask_count_check(
        flags, ranks, rank_bytes, n, mv.v, 1, slot, (uint64_t)(uintptr_t)c->op,
        (uint64_t)(uintptr_t)kValues, mv.v_dim, stream);
    if (e != cudaSuccess)
      return aotrun_shim_fail("%s: the mask count check failed: %s", c->op,
                              cudaGetErrorString(e));
  }
  aotrun_fb_masked_write d;
  describe(c, dest, &mv, &d);
  cudaError_t e = aotrun_fb_masked_write_run(dest->data, c->self.data,
                                             c->values.data, flags, ranks,
                                             rank_bytes, c->self.elem_size, &d,
                                             stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the masked write kernel failed: %s", c->op,
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}
