/* scatter_args.c: argument checks of the scatter family (no CUDA calls),
 * following ATen's scatter_meta_impl: scatter_gather_dtype_check,
 * scatter_shape_check (both skipped for an empty index, as in 2.11), the
 * overlap asserts and get_operator_enum. */
#include <string.h>

#include "shim_lib/fallback/scatter_math.h"
#include "shim_lib/fallback/scatter_plan.h"

/* ATen's ensure_nonempty_dim / ensure_nonempty_size: 0-d acts as [1]. */
static int64_t ne_dim(const aotrun_fb_tensor *t) {
  return t->ndim > 0 ? t->ndim : 1;
}

static int64_t ne_size(const aotrun_fb_tensor *t, int64_t d) {
  return t->ndim > 0 ? t->sizes[d] : 1;
}

static AOTITorchError read_tensors(const char *op,
                                   const aotrun_fb_scatter_call *c,
                                   aotrun_fb_scatter_plan *p) {
  AOTITorchError err = aotrun_fb_tensor_read(op, "out", c->out, &p->out);
  if (!err) err = aotrun_fb_tensor_read(op, "self", c->self, &p->self);
  if (!err) err = aotrun_fb_tensor_read(op, "index", c->index, &p->index);
  if (!err && c->has_src)
    err = aotrun_fb_tensor_read(op, "src", c->src, &p->src);
  return err;
}

static AOTITorchError parse_reduce(const char *op, const char *reduce,
                                   aotrun_fb_scatter_kind *kind) {
  static const struct {
    const char *name;
    aotrun_fb_scatter_kind kind;
  } names[] = {
      {"sum", AOTRUN_FB_SCATTER_SUM},   {"prod", AOTRUN_FB_SCATTER_PROD},
      {"mean", AOTRUN_FB_SCATTER_MEAN}, {"amax", AOTRUN_FB_SCATTER_AMAX},
      {"amin", AOTRUN_FB_SCATTER_AMIN},
  };
  if (reduce == NULL)
    return aotrun_shim_fail("%s: argument 'reduce' is NULL", op);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(reduce, names[i].name) == 0) {
      *kind = names[i].kind;
      return AOTI_TORCH_SUCCESS;
    }
  }
  return aotrun_shim_fail(
      "%s: reduce argument must be one of sum, prod, mean, amax, amin; got "
      "'%.64s'",
      op, reduce);
}

static AOTITorchError check_devices(const char *op,
                                    const aotrun_fb_scatter_plan *p) {
  int32_t dev = p->self.device_index;
  AOTITorchError err = aotrun_fb_require_cuda(op, &p->self, -1, NULL);
  if (!err) err = aotrun_fb_require_cuda(op, &p->out, dev, "self");
  if (!err) err = aotrun_fb_require_cuda(op, &p->index, dev, "self");
  if (!err && p->has_src)
    err = aotrun_fb_require_cuda(op, &p->src, dev, "self");
  return err;
}

static const char *kind_name(aotrun_fb_scatter_kind k) {
  switch (k) {
    case AOTRUN_FB_SCATTER_SUM: return "sum";
    case AOTRUN_FB_SCATTER_PROD: return "prod";
    case AOTRUN_FB_SCATTER_MEAN: return "mean";
    case AOTRUN_FB_SCATTER_AMAX: return "amax";
    case AOTRUN_FB_SCATTER_AMIN: return "amin";
    default: return "scatter";
  }
}

/* scatter_reduce: ATen's CUDA kernel handles uint8, int8, int16, int32,
 * int64, float16, bfloat16, float32, float64, and bool for "sum" only. */
static AOTITorchError check_dtype(const char *op,
                                  const aotrun_fb_scatter_plan *p) {
  char buf[24];
  int32_t dt = p->self.dtype;
  if (p->kind == AOTRUN_FB_SCATTER_SRC || p->kind == AOTRUN_FB_SCATTER_VALUE) {
    size_t e = p->self.elem_size;
    if (e == 1 || e == 2 || e == 4 || e == 8 || e == 16)
      return AOTI_TORCH_SUCCESS;
    return aotrun_shim_fail("%s: 'self' has unsupported dtype %s", op,
                            aotrun_fb_dtype_name(dt, buf));
  }
  if (dt == AOTRUN_SM_BOOL) {
    if (p->kind == AOTRUN_FB_SCATTER_SUM) return AOTI_TORCH_SUCCESS;
    return aotrun_shim_fail(
        "%s: reduce '%s' does not support dtype bool (only 'sum' does)", op,
        kind_name(p->kind));
  }
  switch (dt) {
    case AOTRUN_SM_U8: case AOTRUN_SM_I8: case AOTRUN_SM_I16:
    case AOTRUN_SM_I32: case AOTRUN_SM_I64: case AOTRUN_SM_F16:
    case AOTRUN_SM_BF16: case AOTRUN_SM_F32: case AOTRUN_SM_F64:
      return AOTI_TORCH_SUCCESS;
    default:
      return aotrun_shim_fail(
          "%s: reduce '%s' does not support dtype %s (supported: uint8, "
          "int8, int16, int32, int64, float16, bfloat16, float32, float64)",
          op, kind_name(p->kind), aotrun_fb_dtype_name(dt, buf));
  }
}

static AOTITorchError check_dim(const char *op, int64_t dim,
                                aotrun_fb_scatter_plan *p) {
  int64_t n = ne_dim(&p->self);
  if (dim < -n || dim >= n)
    return aotrun_shim_fail(
        "%s: dim %lld is out of range for 'self' with %lld dims (expected "
        "a dim in [%lld, %lld])",
        op, (long long)dim, (long long)p->self.ndim, (long long)-n,
        (long long)(n - 1));
  p->dim = dim < 0 ? dim + n : dim;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError check_out_shape(const char *op,
                                      const aotrun_fb_scatter_plan *p) {
  const aotrun_fb_tensor *o = &p->out, *s = &p->self;
  int same = o->ndim == s->ndim;
  for (int64_t d = 0; same && d < s->ndim; d++)
    same = o->sizes[d] == s->sizes[d];
  if (same) return AOTI_TORCH_SUCCESS;
  char so[128], ss[128];
  return aotrun_shim_fail(
      "%s: 'out' has shape %s but 'self' has shape %s", op,
      aotrun_fb_shape_str(o->sizes, o->ndim, so, sizeof so),
      aotrun_fb_shape_str(s->sizes, s->ndim, ss, sizeof ss));
}

/* ATen's scatter_shape_check for a non-empty index. */
static AOTITorchError check_index_shape(const char *op,
                                        const aotrun_fb_scatter_plan *p) {
  const aotrun_fb_tensor *ix = &p->index, *s = &p->self, *src = &p->src;
  char a[128], b[128];
  if (ne_dim(ix) != ne_dim(s))
    return aotrun_shim_fail("%s: 'index' has %lld dims but 'self' has %lld",
                            op, (long long)ix->ndim, (long long)s->ndim);
  if (p->has_src && ne_dim(src) != ne_dim(ix))
    return aotrun_shim_fail("%s: 'index' has %lld dims but 'src' has %lld",
                            op, (long long)ix->ndim, (long long)src->ndim);
  for (int64_t d = 0; d < ne_dim(s); d++) {
    if (d != p->dim && ne_size(ix, d) > ne_size(s, d))
      return aotrun_shim_fail(
          "%s: 'index' has size %lld in dim %lld but 'self' has size %lld "
          "(index %s, self %s; only dim %lld may be larger)",
          op, (long long)ne_size(ix, d), (long long)d,
          (long long)ne_size(s, d),
          aotrun_fb_shape_str(ix->sizes, ix->ndim, a, sizeof a),
          aotrun_fb_shape_str(s->sizes, s->ndim, b, sizeof b),
          (long long)p->dim);
    if (p->has_src && ne_size(ix, d) > ne_size(src, d))
      return aotrun_shim_fail(
          "%s: 'index' has size %lld in dim %lld but 'src' has size %lld "
          "(index %s, src %s)",
          op, (long long)ne_size(ix, d), (long long)d,
          (long long)ne_size(src, d),
          aotrun_fb_shape_str(ix->sizes, ix->ndim, a, sizeof a),
          aotrun_fb_shape_str(src->sizes, src->ndim, b, sizeof b));
  }
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError check_index(const char *op,
                                  aotrun_fb_scatter_plan *p) {
  int overflow = 0;
  p->index_numel = aotrun_fb_numel(p->index.sizes, p->index.ndim, &overflow);
  if (overflow)
    return aotrun_shim_fail("%s: 'index' has more than 2^63 elements", op);
  if (p->index_numel == 0) return AOTI_TORCH_SUCCESS; /* as ATen: no checks */
  if (p->index.dtype != AOTRUN_FB_INT64 && p->index.dtype != AOTRUN_FB_INT32) {
    char buf[24];
    return aotrun_shim_fail("%s: 'index' has dtype %s; expected int64 or "
                            "int32",
                            op, aotrun_fb_dtype_name(p->index.dtype, buf));
  }
  return check_index_shape(op, p);
}

/* ---- memory overlap (ATen's assert_no_internal_overlap / no_overlap) ---- */

typedef struct byte_range {
  uintptr_t lo, hi; /* [lo, hi); empty when lo == hi */
} byte_range;

static byte_range range_of(const aotrun_fb_tensor *t) {
  byte_range r = {(uintptr_t)t->data, (uintptr_t)t->data};
  int overflow = 0;
  if (aotrun_fb_numel(t->sizes, t->ndim, &overflow) == 0) return r;
  uint64_t last = 0;
  for (int64_t d = 0; d < t->ndim; d++)
    last += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
  r.hi = r.lo + (uintptr_t)((last + 1) * t->elem_size);
  return r;
}

static int ranges_meet(byte_range a, byte_range b) {
  return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

/* True when no two elements share memory: dims (size > 1) by increasing
 * stride each step over everything the smaller ones span. */
static int non_overlapping(const aotrun_fb_tensor *t) {
  int64_t order[AOTRUN_FB_MAX_DIMS];
  int64_t n = 0;
  for (int64_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] < 2) continue;
    int64_t k = n++;
    while (k > 0 && t->strides[order[k - 1]] > t->strides[d]) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = d;
  }
  uint64_t span = 0; /* (last element offset) of the dims so far */
  for (int64_t k = 0; k < n; k++) {
    int64_t d = order[k];
    if ((uint64_t)t->strides[d] <= span) return 0;
    span += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
  }
  return 1;
}

static int same_view(const aotrun_fb_tensor *a, const aotrun_fb_tensor *b) {
  if (a->data != b->data || a->ndim != b->ndim) return 0;
  for (int64_t d = 0; d < a->ndim; d++)
    if (a->sizes[d] > 1 && a->strides[d] != b->strides[d]) return 0;
  return 1;
}

static AOTITorchError check_overlap(const char *op,
                                    aotrun_fb_scatter_plan *p) {
  if (!non_overlapping(&p->out))
    return aotrun_shim_fail(
        "%s: 'out' has internally overlapping memory (elements share "
        "storage); write into a tensor without overlap",
        op);
  byte_range out = range_of(&p->out);
  if (p->index_numel > 0 && ranges_meet(out, range_of(&p->index)))
    return aotrun_shim_fail("%s: 'out' and 'index' overlap in memory", op);
  if (p->has_src && ranges_meet(out, range_of(&p->src)))
    return aotrun_shim_fail("%s: 'out' and 'src' overlap in memory", op);
  p->in_place = p->out.handle == p->self.handle || same_view(&p->out, &p->self);
  if (!p->in_place && ranges_meet(out, range_of(&p->self)))
    return aotrun_shim_fail(
        "%s: 'out' partially overlaps 'self' (pass the same tensor to "
        "update it in place)",
        op);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError check_types(const char *op,
                                  const aotrun_fb_scatter_plan *p) {
  AOTITorchError err = check_dtype(op, p);
  if (!err) err = aotrun_fb_require_same_dtype(op, &p->out, &p->self);
  if (!err && p->has_src)
    err = aotrun_fb_require_same_dtype(op, &p->src, &p->self);
  return err;
}

AOTITorchError aotrun_fb_scatter_plan_build(const char *op,
                                           const aotrun_fb_scatter_call *c,
                                           aotrun_fb_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->has_src = c->has_src;
  p->include_self = 1;
  p->kind = c->has_src ? AOTRUN_FB_SCATTER_SRC : AOTRUN_FB_SCATTER_VALUE;
  AOTITorchError err = read_tensors(op, c, p);
  if (!err && c->has_reduce) {
    err = parse_reduce(op, c->reduce, &p->kind);
    p->include_self = c->include_self != 0;
  }
  if (!err) err = check_devices(op, p);
  if (!err) err = check_types(op, p);
  if (!err) err = check_dim(op, c->dim, p);
  if (!err) err = check_out_shape(op, p);
  if (!err) err = check_index(op, p);
  if (!err) err = check_overlap(op, p);
  if (!err && !c->has_src)
    err = aotrun_fb_scalar_to_bits(op, c->value, p->self.dtype, p->value);
  return err;
}
