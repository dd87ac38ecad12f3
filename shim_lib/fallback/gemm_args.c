/* gemm_args.c: argument checks of the GEMM family (no CUDA calls, so the
 * errors show on machines without a GPU too). */
#include "shim_lib/fallback/gemm.h"

#include <string.h>

static int gemm_dtype_supported(int32_t dtype) {
  return dtype == AOTRUN_FB_FLOAT32 || dtype == AOTRUN_FB_FLOAT64 ||
         dtype == AOTRUN_FB_FLOAT16 || dtype == AOTRUN_FB_BFLOAT16;
}

/* dtype and device of every tensor against the first one. */
static AOTITorchError check_dtypes_devices(const char *op,
                                           const aotrun_fb_tensor *const *ts,
                                           int n) {
  const aotrun_fb_tensor *ref = ts[0];
  if (!gemm_dtype_supported(ref->dtype)) {
    char buf[24];
    return aotrun_shim_fail(
        "%s: '%s' has dtype %s; supported: float32, float64, float16, "
        "bfloat16",
        op, ref->name, aotrun_fb_dtype_name(ref->dtype, buf));
  }
  for (int i = 1; i < n; i++) {
    AOTITorchError err = aotrun_fb_require_same_dtype(op, ts[i], ref);
    if (err != AOTI_TORCH_SUCCESS) return err;
  }
  AOTITorchError err = aotrun_fb_require_cuda(op, ref, -1, NULL);
  for (int i = 1; i < n && err == AOTI_TORCH_SUCCESS; i++)
    err = aotrun_fb_require_cuda(op, ts[i], ref->device_index, ref->name);
  return err;
}

/* a's dim da must equal b's dim db (the shared K or batch size). */
static AOTITorchError check_inner(const char *op, const aotrun_fb_tensor *a,
                                  int64_t da, const aotrun_fb_tensor *b,
                                  int64_t db) {
  if (a->sizes[da] == b->sizes[db]) return AOTI_TORCH_SUCCESS;
  char sa[128], sb[128];
  return aotrun_shim_fail(
      "%s: '%s' has size %lld in dim %lld but '%s' has size %lld in dim %lld "
      "(%s %s, %s %s)",
      op, a->name, (long long)a->sizes[da], (long long)da, b->name,
      (long long)b->sizes[db], (long long)db, a->name,
      aotrun_fb_shape_str(a->sizes, a->ndim, sa, sizeof sa), b->name,
      aotrun_fb_shape_str(b->sizes, b->ndim, sb, sizeof sb));
}

/* out must have exactly the result's sizes. */
static AOTITorchError check_out(const char *op, const aotrun_fb_tensor *out,
                                const int64_t *expected, int64_t ndim) {
  for (int64_t d = 0; d < ndim; d++) {
    if (out->sizes[d] == expected[d]) continue;
    char so[128], se[128];
    return aotrun_shim_fail(
        "%s: '%s' has size %lld in dim %lld, expected %lld (%s is %s, the "
        "result is %s)",
        op, out->name, (long long)out->sizes[d], (long long)d,
        (long long)expected[d], out->name,
        aotrun_fb_shape_str(out->sizes, out->ndim, so, sizeof so),
        aotrun_fb_shape_str(expected, ndim, se, sizeof se));
  }
  return AOTI_TORCH_SUCCESS;
}

/* A 2-D tensor, one of a batch of a 3-D one, or a 1-D one as a column. */
static void matrix_of(const aotrun_fb_tensor *t, aotrun_fb_matrix *m) {
  if (t->ndim == 1) {
    m->data = t->data;
    m->rows = t->sizes[0];
    m->cols = 1;
    m->row_stride = t->strides[0];
    m->col_stride = 1;
    m->batch_stride = 0;
    return;
  }
  int64_t o = t->ndim - 2; /* 0 for 2-D, 1 for 3-D */
  m->data = t->data;
  m->rows = t->sizes[o];
  m->cols = t->sizes[o + 1];
  m->row_stride = t->strides[o];
  m->col_stride = t->strides[o + 1];
  m->batch_stride = o ? t->strides[0] : 0;
}

static void gemm_init(aotrun_fb_gemm *g, const char *op,
                      const aotrun_fb_tensor *out, const aotrun_fb_tensor *a,
                      const aotrun_fb_tensor *b) {
  memset(g, 0, sizeof *g);
  g->op = op;
  g->dtype = a->dtype;
  g->device = a->device_index;
  g->elem_size = a->elem_size;
  g->out_dtype = out->dtype;
  g->out_elem_size = out->elem_size;
  g->batch = a->ndim == 3 ? a->sizes[0] : 1;
  matrix_of(a, &g->a);
  matrix_of(b, &g->b);
  matrix_of(out, &g->out);
  g->m = g->a.rows;
  g->k = g->a.cols;
  g->n = g->b.cols;
  g->alpha = 1.0;
  g->beta = 0.0;
}

/* Reads and checks the three tensors shared by mm and bmm. */
static AOTITorchError read_mm_like(const char *op, AtenTensorHandle out,
                                   AtenTensorHandle self, AtenTensorHandle mat2,
                                   const char *a_name, int64_t ndim,
                                   aotrun_fb_tensor *to, aotrun_fb_tensor *ta,
                                   aotrun_fb_tensor *tb) {
  AOTITorchError err = aotrun_fb_tensor_read(op, "out", out, to);
  if (!err) err = aotrun_fb_tensor_read(op, a_name, self, ta);
  if (!err) err = aotrun_fb_tensor_read(op, "mat2", mat2, tb);
  if (!err) err = aotrun_fb_require_ndim(op, ta, ndim);
  if (!err) err = aotrun_fb_require_ndim(op, tb, ndim);
  if (!err) err = aotrun_fb_require_ndim(op, to, ndim);
  if (err) return err;
  const aotrun_fb_tensor *all[3] = {ta, tb, to};
  return check_dtypes_devices(op, all, 3);
}

AOTITorchError aotrun_fb_gemm_mm_args(const char *op, AtenTensorHandle out,
                                      AtenTensorHandle self,
                                      AtenTensorHandle mat2,
                                      aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, ta, tb;
  AOTITorchError err = read_mm_like(op, out, self, mat2, "self", 2, &to, &ta,
                                    &tb);
  if (!err) err = check_inner(op, &ta, 1, &tb, 0);
  if (err) return err;
  const int64_t expected[2] = {ta.sizes[0], tb.sizes[1]};
  err = check_out(op, &to, expected, 2);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tb);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_gemm_bmm_args(const char *op, AtenTensorHandle out,
                                       AtenTensorHandle self,
                                       AtenTensorHandle mat2,
                                       aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, ta, tb;
  AOTITorchError err = read_mm_like(op, out, self, mat2, "self", 3, &to, &ta,
                                    &tb);
  if (!err) err = check_inner(op, &ta, 0, &tb, 0);
  if (!err) err = check_inner(op, &ta, 2, &tb, 1);
  if (err) return err;
  const int64_t expected[3] = {ta.sizes[0], ta.sizes[1], tb.sizes[2]};
  err = check_out(op, &to, expected, 3);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tb);
  return AOTI_TORCH_SUCCESS;
}

/* bias (at most rdim dims) broadcast from the right to the result's shape
 * result[0..rdim) ([m], [m, n] or [batch, m, n]): stride 0 where it is
 * broadcast. */
static AOTITorchError expand_bias(const char *op, const aotrun_fb_tensor *bias,
                                  const int64_t *result, int64_t rdim,
                                  aotrun_fb_gemm *g) {
  char sb[128], sr[128];
  if (bias->ndim > rdim)
    return aotrun_shim_fail(
        "%s: '%s' (bias) must have at most %lld dims, got %lld-D tensor %s",
        op, bias->name, (long long)rdim, (long long)bias->ndim,
        aotrun_fb_shape_str(bias->sizes, bias->ndim, sb, sizeof sb));
  int64_t strides[3] = {0, 0, 0};
  for (int64_t i = 0; i < bias->ndim; i++) {
    int64_t d = rdim - bias->ndim + i; /* aligned from the right */
    int64_t size = bias->sizes[i];
    if (size == result[d]) {
      strides[d] = size == 1 ? 0 : bias->strides[i];
    } else if (size != 1) {
      return aotrun_shim_fail(
          "%s: '%s' (bias) has size %lld in dim %lld, which does not "
          "broadcast to size %lld (bias %s, result %s)",
          op, bias->name, (long long)size, (long long)i, (long long)result[d],
          aotrun_fb_shape_str(bias->sizes, bias->ndim, sb, sizeof sb),
          aotrun_fb_shape_str(result, rdim, sr, sizeof sr));
    }
  }
  g->has_bias = 1;
  g->bias_data = bias->data;
  g->bias_ndim = bias->ndim;
  {
    /* ATen: self.is_contiguous() && (self.dim() == 1 ||
     * self.squeeze().dim() == 1) && self.sizes().back() == n. */
    int non_unit = 0, contiguous = 1;
    int64_t expect = 1;
    for (int64_t i = bias->ndim - 1; i >= 0; i--) {
      if (bias->sizes[i] != 1) non_unit++;
      if (bias->sizes[i] != 1 && bias->strides[i] != expect) contiguous = 0;
      expect *= bias->sizes[i];
    }
    g->bias_fusable = bias->ndim >= 1 && contiguous &&
                      (bias->ndim == 1 || non_unit == 1) &&
                      bias->sizes[bias->ndim - 1] == result[rdim - 1];
  }
  /* Result dims -> (batch, row, col); a 1-D result is one column. */
  if (rdim == 3) {
    g->bias_batch_stride = strides[0];
    g->bias_row_stride = strides[1];
    g->bias_col_stride = strides[2];
  } else if (rdim == 2) {
    g->bias_row_stride = strides[0];
    g->bias_col_stride = strides[1];
  } else {
    g->bias_row_stride = strides[0];
  }
  return AOTI_TORCH_SUCCESS;
}

/* The operands of addmm / _addmm_activation: 2-D mat1, mat2 and a bias of
 * at most 2 dims, one supported dtype, one device. */
static AOTITorchError read_addmm(const char *op, AtenTensorHandle self,
                                 AtenTensorHandle mat1, AtenTensorHandle mat2,
                                 aotrun_fb_tensor *tbias, aotrun_fb_tensor *ta,
                                 aotrun_fb_tensor *tb) {
  AOTITorchError err = aotrun_fb_tensor_read(op, "self", self, tbias);
  if (!err) err = aotrun_fb_tensor_read(op, "mat1", mat1, ta);
  if (!err) err = aotrun_fb_tensor_read(op, "mat2", mat2, tb);
  if (!err) err = aotrun_fb_require_ndim(op, ta, 2);
  if (!err) err = aotrun_fb_require_ndim(op, tb, 2);
  if (!err && tbias->ndim > 2) {
    char s[128];
    err = aotrun_shim_fail(
        "%s: 'self' (bias) must have at most 2 dims, got %lld-D tensor %s", op,
        (long long)tbias->ndim,
        aotrun_fb_shape_str(tbias->sizes, tbias->ndim, s, sizeof s));
  }
  if (err) return err;
  const aotrun_fb_tensor *all[3] = {ta, tb, tbias};
  err = check_dtypes_devices(op, all, 3);
  if (!err) err = check_inner(op, ta, 1, tb, 0);
  return err;
}

AOTITorchError aotrun_fb_gemm_addmm_args(const char *op, AtenTensorHandle out,
                                         AtenTensorHandle self,
                                         AtenTensorHandle mat1,
                                         AtenTensorHandle mat2, double beta,
                                         double alpha, aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, tbias, ta, tb;
  AOTITorchError err = aotrun_fb_tensor_read(op, "out", out, &to);
  if (!err) err = read_addmm(op, self, mat1, mat2, &tbias, &ta, &tb);
  if (!err) err = aotrun_fb_require_ndim(op, &to, 2);
  if (err) return err;
  const aotrun_fb_tensor *all[2] = {&ta, &to};
  err = check_dtypes_devices(op, all, 2);
  if (err) return err;
  const int64_t result[2] = {ta.sizes[0], tb.sizes[1]};
  err = check_out(op, &to, result, 2);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tb);
  err = expand_bias(op, &tbias, result, 2, g);
  if (err) return err;
  g->alpha = alpha;
  g->beta = beta;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_gemm_addmm_act_check(
    const char *op, AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, int64_t *out_sizes, int32_t *dtype,
    int32_t *device) {
  aotrun_fb_tensor tbias, ta, tb;
  AOTITorchError err = read_addmm(op, self, mat1, mat2, &tbias, &ta, &tb);
  if (err) return err;
  out_sizes[0] = ta.sizes[0];
  out_sizes[1] = tb.sizes[1];
  /* The bias must broadcast to the result (checked again with out). */
  aotrun_fb_gemm probe;
  memset(&probe, 0, sizeof probe);
  err = expand_bias(op, &tbias, out_sizes, 2, &probe);
  *dtype = ta.dtype;
  *device = ta.device_index;
  return err;
}

AOTITorchError aotrun_fb_gemm_baddbmm_args(const char *op, AtenTensorHandle out,
                                           AtenTensorHandle self,
                                           AtenTensorHandle batch1,
                                           AtenTensorHandle batch2, double beta,
                                           double alpha, aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, tbias, ta, tb;
  AOTITorchError err = aotrun_fb_tensor_read(op, "out", out, &to);
  if (!err) err = aotrun_fb_tensor_read(op, "self", self, &tbias);
  if (!err) err = aotrun_fb_tensor_read(op, "batch1", batch1, &ta);
  if (!err) err = aotrun_fb_tensor_read(op, "batch2", batch2, &tb);
  if (!err) err = aotrun_fb_require_ndim(op, &ta, 3);
  if (!err) err = aotrun_fb_require_ndim(op, &tb, 3);
  if (!err) err = aotrun_fb_require_ndim(op, &to, 3);
  if (err) return err;
  const aotrun_fb_tensor *all[4] = {&ta, &tb, &tbias, &to};
  err = check_dtypes_devices(op, all, 4);
  if (!err) err = check_inner(op, &ta, 0, &tb, 0);
  if (!err) err = check_inner(op, &ta, 2, &tb, 1);
  if (err) return err;
  const int64_t result[3] = {ta.sizes[0], ta.sizes[1], tb.sizes[2]};
  err = check_out(op, &to, result, 3);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tb);
  err = expand_bias(op, &tbias, result, 3, g);
  if (err) return err;
  g->alpha = alpha;
  g->beta = beta;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_gemm_mm_dtype_args(const char *op,
                                            AtenTensorHandle out,
                                            AtenTensorHandle self,
                                            AtenTensorHandle mat2,
                                            int32_t out_dtype,
                                            aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, ta, tb;
  AOTITorchError err = aotrun_fb_tensor_read(op, "out", out, &to);
  if (!err) err = aotrun_fb_tensor_read(op, "self", self, &ta);
  if (!err) err = aotrun_fb_tensor_read(op, "mat2", mat2, &tb);
  if (!err) err = aotrun_fb_require_ndim(op, &ta, 2);
  if (!err) err = aotrun_fb_require_ndim(op, &tb, 2);
  if (!err) err = aotrun_fb_require_ndim(op, &to, 2);
  if (err) return err;
  const aotrun_fb_tensor *ins[2] = {&ta, &tb};
  err = check_dtypes_devices(op, ins, 2);
  if (err) return err;
  char b1[24], b2[24];
  if (to.dtype != out_dtype)
    return aotrun_shim_fail(
        "%s: 'out' has dtype %s but out_dtype is %s (they must be the same)",
        op, aotrun_fb_dtype_name(to.dtype, b1),
        aotrun_fb_dtype_name(out_dtype, b2));
  int half_in = ta.dtype == AOTRUN_FB_FLOAT16 || ta.dtype == AOTRUN_FB_BFLOAT16;
  if (out_dtype != ta.dtype && !(out_dtype == AOTRUN_FB_FLOAT32 && half_in))
    return aotrun_shim_fail(
        "%s: out_dtype %s with 'self' of dtype %s: out_dtype must be the "
        "input dtype, or float32 for float16/bfloat16 inputs",
        op, aotrun_fb_dtype_name(out_dtype, b1),
        aotrun_fb_dtype_name(ta.dtype, b2));
  err = aotrun_fb_require_cuda(op, &to, ta.device_index, ta.name);
  if (!err) err = check_inner(op, &ta, 1, &tb, 0);
  if (err) return err;
  const int64_t expected[2] = {ta.sizes[0], tb.sizes[1]};
  err = check_out(op, &to, expected, 2);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tb);
  return AOTI_TORCH_SUCCESS;
}

/* addmv's operands: 2-D mat, 1-D vec, a bias of at most 1 dim. */
static AOTITorchError read_addmv(const char *op, AtenTensorHandle self,
                                 AtenTensorHandle mat, AtenTensorHandle vec,
                                 aotrun_fb_tensor *tbias, aotrun_fb_tensor *ta,
                                 aotrun_fb_tensor *tv) {
  AOTITorchError err = aotrun_fb_tensor_read(op, "self", self, tbias);
  if (!err) err = aotrun_fb_tensor_read(op, "mat", mat, ta);
  if (!err) err = aotrun_fb_tensor_read(op, "vec", vec, tv);
  if (!err) err = aotrun_fb_require_ndim(op, ta, 2);
  if (!err) err = aotrun_fb_require_ndim(op, tv, 1);
  if (err) return err;
  const aotrun_fb_tensor *all[3] = {ta, tv, tbias};
  err = check_dtypes_devices(op, all, 3);
  if (!err) err = check_inner(op, ta, 1, tv, 0);
  if (err) return err;
  const int64_t result[1] = {ta->sizes[0]};
  aotrun_fb_gemm probe;
  memset(&probe, 0, sizeof probe);
  return expand_bias(op, tbias, result, 1, &probe);
}

AOTITorchError aotrun_fb_gemm_addmv_check(const char *op,
                                          AtenTensorHandle self,
                                          AtenTensorHandle mat,
                                          AtenTensorHandle vec,
                                          int64_t *out_sizes, int32_t *dtype,
                                          int32_t *device) {
  aotrun_fb_tensor tbias, ta, tv;
  AOTITorchError err = read_addmv(op, self, mat, vec, &tbias, &ta, &tv);
  if (err) return err;
  out_sizes[0] = ta.sizes[0];
  *dtype = ta.dtype;
  *device = ta.device_index;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_gemm_addmv_args(const char *op, AtenTensorHandle out,
                                         AtenTensorHandle self,
                                         AtenTensorHandle mat,
                                         AtenTensorHandle vec, double beta,
                                         double alpha, aotrun_fb_gemm *g) {
  aotrun_fb_tensor to, tbias, ta, tv;
  AOTITorchError err = read_addmv(op, self, mat, vec, &tbias, &ta, &tv);
  if (!err) err = aotrun_fb_tensor_read(op, "out", out, &to);
  if (!err) err = aotrun_fb_require_ndim(op, &to, 1);
  if (err) return err;
  const aotrun_fb_tensor *all[2] = {&ta, &to};
  err = check_dtypes_devices(op, all, 2);
  if (err) return err;
  const int64_t result[1] = {ta.sizes[0]};
  err = check_out(op, &to, result, 1);
  if (err) return err;
  gemm_init(g, op, &to, &ta, &tv); /* vec: k x 1, out: m x 1 */
  err = expand_bias(op, &tbias, result, 1, g);
  if (err) return err;
  g->alpha = alpha;
  g->beta = beta;
  return AOTI_TORCH_SUCCESS;
}
