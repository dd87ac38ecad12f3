/* index_put_args.c: argument checks of index_put (see index_put.h). No CUDA
 * calls. */
#include <stdio.h>
#include <string.h>

#include "shim_lib/fallback/index_put.h"
#include "shim_lib/fallback/tensor_layout.h"

/* The arithmetic of accumulate for dtype, or -1. */
static int acc_kind_of(int32_t dtype) {
  switch (dtype) {
    case 5: return AOTRUN_FB_ACC_F16;
    case 15: return AOTRUN_FB_ACC_BF16;
    case 6: return AOTRUN_FB_ACC_F32;
    case 7: return AOTRUN_FB_ACC_F64;
    case 0: case 1: return AOTRUN_FB_ACC_I8;
    case 2: case 27: return AOTRUN_FB_ACC_I16;
    case 3: case 28: return AOTRUN_FB_ACC_I32;
    case 4: case 29: return AOTRUN_FB_ACC_I64;
    case 11: return AOTRUN_FB_ACC_BOOL;
    case 9: return AOTRUN_FB_ACC_C64;
    case 10: return AOTRUN_FB_ACC_C128;
    default: return -1;
  }
}

static AOTITorchError read_tensors(aotrun_fb_put_call *c, int has_out,
                                   AtenTensorHandle out, AtenTensorHandle self,
                                   AtenTensorHandle values) {
  const char *op = c->op;
  char buf[24];
  AOTITorchError err = aotrun_fb_tensor_read(op, "self", self, &c->self);
  if (!err) err = aotrun_fb_require_cuda(op, &c->self, -1, NULL);
  if (!err && c->self.elem_size == 0)
    err = aotrun_shim_fail("%s: 'self' has unsupported dtype %s", op,
                           aotrun_fb_dtype_name(c->self.dtype, buf));
  if (!err) err = aotrun_fb_tensor_read(op, "values", values, &c->values);
  if (!err)
    err = aotrun_fb_require_cuda(op, &c->values, c->self.device_index, "self");
  if (!err) err = aotrun_fb_require_same_dtype(op, &c->values, &c->self);
  if (err || !has_out) return err;
  c->has_out = 1;
  err = aotrun_fb_tensor_read(op, "out", out, &c->out);
  if (!err) err = aotrun_fb_require_cuda(op, &c->out, c->self.device_index, "self");
  if (!err) err = aotrun_fb_require_same_dtype(op, &c->out, &c->self);
  if (err) return err;
  int same = c->out.ndim == c->self.ndim;
  for (int64_t d = 0; same && d < c->self.ndim; d++)
    same = c->out.sizes[d] == c->self.sizes[d];
  if (!same) {
    char so[128], ss[128];
    return aotrun_shim_fail(
        "%s: 'out' has shape %s but 'self' has shape %s", op,
        aotrun_fb_shape_str(c->out.sizes, c->out.ndim, so, sizeof so),
        aotrun_fb_shape_str(c->self.sizes, c->self.ndim, ss, sizeof ss));
  }
  c->in_place = c->out.data == c->self.data;
  for (int64_t d = 0; c->in_place && d < c->self.ndim; d++)
    c->in_place = c->out.strides[d] == c->self.strides[d];
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError shape_mismatch(const aotrun_fb_put_call *c,
                                     const char *result_shape,
                                     const char *note) {
  char sv[128];
  return aotrun_shim_fail(
      "%s: shape mismatch: 'values' of shape %s cannot be broadcast to the "
      "indexing result of shape %s%s",
      c->op,
      aotrun_fb_shape_str(c->values.sizes, c->values.ndim, sv, sizeof sv),
      result_shape, note);
}

AOTITorchError aotrun_fb_put_values_strides(const aotrun_fb_put_call *c,
                                            const aotrun_fb_index_geom *g,
                                            int64_t *vstrides) {
  if (aotrun_fb_expand_strides(c->values.sizes, c->values.strides,
                               c->values.ndim, g->sizes, g->ndim,
                               vstrides) == 0)
    return AOTI_TORCH_SUCCESS;
  char sr[128];
  return shape_mismatch(c, aotrun_fb_shape_str(g->sizes, g->ndim, sr, sizeof sr),
                        "");
}

AOTITorchError aotrun_fb_put_mask_values_check(const aotrun_fb_put_call *c) {
  const aotrun_fb_index_entry *e = &c->plan.e[0];
  const aotrun_fb_tensor *s = &c->self, *v = &c->values;
  /* R = [self dims before the mask, N (the True count), dims after]. */
  int64_t rnd = s->ndim - e->ndims + 1, f = e->first_dim;
  int ok = v->ndim <= rnd;
  for (int64_t j = 0; ok && j < v->ndim; j++) {
    int64_t r = j + (rnd - v->ndim);
    if (r == f) continue;
    int64_t want = s->sizes[r < f ? r : r + e->ndims - 1];
    ok = v->sizes[j] == 1 || v->sizes[j] == want;
  }
  if (ok) return AOTI_TORCH_SUCCESS;
  char sr[160];
  size_t n = 0;
  n += (size_t)snprintf(sr + n, sizeof sr - n, "[");
  for (int64_t r = 0; r < rnd && n < sizeof sr; r++) {
    const char *sep = r ? ", " : "";
    if (r == f)
      n += (size_t)snprintf(sr + n, sizeof sr - n, "%sN", sep);
    else
      n += (size_t)snprintf(sr + n, sizeof sr - n, "%s%lld", sep,
                            (long long)s->sizes[r < f ? r : r + e->ndims - 1]);
  }
  if (n < sizeof sr) snprintf(sr + n, sizeof sr - n, "]");
  return shape_mismatch(c, sr, " (N: the mask's True count)");
}

AOTITorchError aotrun_fb_put_args(const char *op, int has_out,
                                  AtenTensorHandle out, AtenTensorHandle self,
                                  const AtenTensorHandle *indices,
                                  int64_t num_indices, AtenTensorHandle values,
                                  int accumulate, aotrun_fb_put_call *c) {
  memset(c, 0, sizeof *c);
  c->op = op;
  c->accumulate = accumulate != 0;
  AOTITorchError err = read_tensors(c, has_out, out, self, values);
  if (err) return err;
  if (c->accumulate) {
    c->acc_kind = acc_kind_of(c->self.dtype);
    if (c->acc_kind < 0) {
      char buf[24];
      return aotrun_shim_fail("%s: accumulate is not supported for dtype %s",
                              op, aotrun_fb_dtype_name(c->self.dtype, buf));
    }
  }
  err = aotrun_fb_index_plan_build(op, &c->self, indices, num_indices,
                                   &c->plan);
  if (err) return err;
  c->mask_path = c->plan.num_masks == 1 && c->plan.n == 1;
  if (c->mask_path) return aotrun_fb_put_mask_values_check(c);
  if (c->plan.num_masks > 0) return AOTI_TORCH_SUCCESS; /* after the counts */
  aotrun_fb_index_geom g;
  int64_t vstrides[AOTRUN_FB_MAX_DIMS];
  err = aotrun_fb_index_geom_build(&c->plan, NULL, &g);
  if (!err) err = aotrun_fb_put_values_strides(c, &g, vstrides);
  return err;
}
