/* conv_args.c: argument checks and the plan of aoti_torch_cuda_convolution
 * (see conv.h). No CUDA calls. */
#include <string.h>

#include "shim_lib/fallback/conv.h"

int aotrun_fb_is_channels_last_strides(const int64_t *sizes,
                                       const int64_t *strides, int64_t ndim) {
  static const int order4[4] = {1, 3, 2, 0}, order5[5] = {1, 4, 3, 2, 0};
  const int *order = ndim == 4 ? order4 : ndim == 5 ? order5 : NULL;
  if (order == NULL) return 0;
  int64_t min = 0;
  /* A trivial C dimension defaults to NCHW. */
  if (strides[1] == 0) return 0;
  for (int64_t i = 0; i < ndim; i++) {
    int d = order[i];
    if (sizes[d] == 0) return 0;
    if (strides[d] < min) return 0;
    /* N111 with equal strides (or a sliced N11W) is ambiguous: NCHW. */
    if (d == 0 && min == strides[1]) return 0;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return 1;
}

void aotrun_fb_format_strides(const int64_t *sizes, int64_t ndim,
                              int channels_last, int64_t *strides) {
  if (!channels_last) {
    aotrun_fb_contiguous_strides(sizes, ndim, strides);
    return;
  }
  /* C fastest, then the spatial dims from the last, then N. */
  int64_t s = 1;
  strides[1] = s;
  s *= sizes[1] > 1 ? sizes[1] : 1;
  for (int64_t d = ndim - 1; d >= 2; d--) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
  strides[0] = s;
}

static int dtype_supported(int32_t dt) {
  return dt == AOTRUN_FB_FLOAT32 || dt == AOTRUN_FB_FLOAT16 ||
         dt == AOTRUN_FB_BFLOAT16 || dt == AOTRUN_FB_FLOAT64;
}

/* One int list argument: 1 value (for every spatial dim) or nd values,
 * each >= min_value. */
static AOTITorchError read_list(const char *op, const char *name,
                                const int64_t *v, int64_t len, int nd,
                                int64_t min_value, int64_t *out) {
  if (len != 1 && len != nd)
    return aotrun_shim_fail(
        "%s: '%s' has %lld values; expected 1 or %d (one per spatial dim of "
        "the %d-D input)",
        op, name, (long long)len, nd, nd + 2);
  if (v == NULL)
    return aotrun_shim_fail("%s: '%s' is NULL with length %lld", op, name,
                            (long long)len);
  for (int i = 0; i < nd; i++) {
    out[i] = v[len == 1 ? 0 : i];
    if (out[i] < min_value)
      return aotrun_shim_fail("%s: %s[%d] is %lld; it must be %s", op, name,
                              i, (long long)out[i],
                              min_value > 0 ? "positive" : "non-negative");
  }
  return AOTI_TORCH_SUCCESS;
}

/* A tensor viewed with a unit dim inserted at dim 2 (ATen's unsqueeze). */
static void view4d(const aotrun_fb_tensor *t, int64_t *sizes,
                   int64_t *strides) {
  sizes[0] = t->sizes[0];
  sizes[1] = t->sizes[1];
  sizes[2] = 1;
  sizes[3] = t->sizes[2];
  strides[0] = t->strides[0];
  strides[1] = t->strides[1];
  strides[2] = t->sizes[2] * t->strides[2];
  strides[3] = t->strides[2];
}

AOTITorchError aotrun_fb_conv_args(
    const char *op, AtenTensorHandle input, AtenTensorHandle weight,
    AtenTensorHandle *bias, const int64_t *stride, int64_t stride_len,
    const int64_t *padding, int64_t padding_len, const int64_t *dilation,
    int64_t dilation_len, int32_t transposed, const int64_t *output_padding,
    int64_t output_padding_len, int64_t groups, aotrun_fb_conv *c) {
  memset(c, 0, sizeof *c);
  c->op = op;
  aotrun_fb_tensor ti, tw, tb;
  char s1[128], s2[128], d1[24], d2[24];
  AOTITorchError err = aotrun_fb_tensor_read(op, "input", input, &ti);
  if (!err) err = aotrun_fb_tensor_read(op, "weight", weight, &tw);
  if (err) return err;
  c->has_bias = bias != NULL && *bias != NULL;
  if (c->has_bias) {
    err = aotrun_fb_tensor_read(op, "bias", *bias, &tb);
    if (err) return err;
  }
  if (ti.ndim < 3 || ti.ndim > 5)
    return aotrun_shim_fail(
        "%s: 'input' must be 3-D, 4-D or 5-D (batch, channels, 1 to 3 "
        "spatial dims), got %lld-D tensor %s",
        op, (long long)ti.ndim,
        aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1));
  if (tw.ndim != ti.ndim)
    return aotrun_shim_fail(
        "%s: 'weight' must have as many dims as 'input' (%lld), got %lld-D "
        "tensor %s",
        op, (long long)ti.ndim, (long long)tw.ndim,
        aotrun_fb_shape_str(tw.sizes, tw.ndim, s1, sizeof s1));
  if (!dtype_supported(ti.dtype))
    return aotrun_shim_fail(
        "%s: 'input' has dtype %s; supported: float32, float16, bfloat16, "
        "float64",
        op, aotrun_fb_dtype_name(ti.dtype, d1));
  err = aotrun_fb_require_same_dtype(op, &tw, &ti);
  if (!err && c->has_bias) err = aotrun_fb_require_same_dtype(op, &tb, &ti);
  if (!err) err = aotrun_fb_require_cuda(op, &ti, -1, NULL);
  if (!err) err = aotrun_fb_require_cuda(op, &tw, ti.device_index, "input");
  if (!err && c->has_bias)
    err = aotrun_fb_require_cuda(op, &tb, ti.device_index, "input");
  if (err) return err;

  int nd = (int)ti.ndim - 2;
  c->nd = nd;
  c->dtype = ti.dtype;
  c->device = ti.device_index;
  c->elem_size = ti.elem_size;
  c->transposed = transposed != 0;
  if (groups <= 0)
    return aotrun_shim_fail("%s: groups must be positive, got %lld", op,
                            (long long)groups);
  c->groups = groups;
  int64_t st[3], pd[3], dl[3], op_[3] = {0, 0, 0};
  err = read_list(op, "stride", stride, stride_len, nd, 1, st);
  if (!err) err = read_list(op, "padding", padding, padding_len, nd, 0, pd);
  if (!err) err = read_list(op, "dilation", dilation, dilation_len, nd, 1, dl);
  if (!err && c->transposed)
    err = read_list(op, "output_padding", output_padding, output_padding_len,
                    nd, 0, op_);
  if (err) return err;
  if (c->transposed) {
    for (int i = 0; i < nd; i++)
      if (op_[i] >= st[i] && op_[i] >= dl[i])
        return aotrun_shim_fail(
            "%s: output_padding[%d] is %lld; it must be smaller than either "
            "stride (%lld) or dilation (%lld)",
            op, i, (long long)op_[i], (long long)st[i], (long long)dl[i]);
  }

  /* Channels. */
  int64_t cin = ti.sizes[1], cout;
  if (!c->transposed) {
    cout = tw.sizes[0];
    if (cout % groups != 0)
      return aotrun_shim_fail(
          "%s: 'weight' has %lld output channels (dim 0), not divisible by "
          "groups %lld",
          op, (long long)cout, (long long)groups);
    if (tw.sizes[1] * groups != cin)
      return aotrun_shim_fail(
          "%s: weight has %lld input channels per group, input has %lld "
          "(groups %lld; expected %lld) (input %s, weight %s)",
          op, (long long)tw.sizes[1], (long long)cin, (long long)groups,
          (long long)(tw.sizes[1] * groups),
          aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1),
          aotrun_fb_shape_str(tw.sizes, tw.ndim, s2, sizeof s2));
  } else {
    if (tw.sizes[0] != cin)
      return aotrun_shim_fail(
          "%s: transposed weight has %lld input channels (dim 0), input has "
          "%lld (input %s, weight %s)",
          op, (long long)tw.sizes[0], (long long)cin,
          aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1),
          aotrun_fb_shape_str(tw.sizes, tw.ndim, s2, sizeof s2));
    if (cin % groups != 0)
      return aotrun_shim_fail(
          "%s: input has %lld channels, not divisible by groups %lld", op,
          (long long)cin, (long long)groups);
    cout = tw.sizes[1] * groups;
  }
  if (cin == 0 || cout == 0)
    return aotrun_shim_fail(
        "%s: zero channels are not supported (input %s, weight %s)", op,
        aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1),
        aotrun_fb_shape_str(tw.sizes, tw.ndim, s2, sizeof s2));
  if (c->has_bias && (tb.ndim != 1 || tb.sizes[0] != cout))
    return aotrun_shim_fail(
        "%s: 'bias' must be 1-D with %lld values (the output channels), got "
        "%s",
        op, (long long)cout,
        aotrun_fb_shape_str(tb.sizes, tb.ndim, s1, sizeof s1));

  /* Output spatial sizes, and what cuDNN computes (conv.h). */
  int64_t osz[3], dxsz[3], dxpad[3], dxoff[3];
  for (int i = 0; i < nd; i++) {
    int64_t in = ti.sizes[2 + i], k = tw.sizes[2 + i];
    if (k <= 0)
      return aotrun_shim_fail("%s: 'weight' has kernel size %lld in dim %d",
                              op, (long long)k, 2 + i);
    int64_t dk = dl[i] * (k - 1) + 1;
    if (!c->transposed) {
      if (in + 2 * pd[i] < dk)
        return aotrun_shim_fail(
            "%s: input size %lld (padded: %lld) in spatial dim %d is smaller "
            "than the dilated kernel size %lld (input %s, weight %s)",
            op, (long long)in, (long long)(in + 2 * pd[i]), i, (long long)dk,
            aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1),
            aotrun_fb_shape_str(tw.sizes, tw.ndim, s2, sizeof s2));
      osz[i] = (in + 2 * pd[i] - dk) / st[i] + 1;
      dxsz[i] = osz[i], dxpad[i] = pd[i], dxoff[i] = 0;
    } else {
      aotrun_fb_conv_tdim td;
      aotrun_fb_conv_transposed_dim(in, k, st[i], pd[i], dl[i], op_[i], &td);
      osz[i] = td.out, dxsz[i] = td.dx, dxpad[i] = td.pad;
      dxoff[i] = td.offset;
      c->windowed |= td.dx != td.out || td.offset != 0;
      if (osz[i] <= 0)
        return aotrun_shim_fail(
            "%s: the output size in spatial dim %d would be %lld (input %s, "
            "weight %s, stride %lld, padding %lld)",
            op, i, (long long)osz[i],
            aotrun_fb_shape_str(ti.sizes, ti.ndim, s1, sizeof s1),
            aotrun_fb_shape_str(tw.sizes, tw.ndim, s2, sizeof s2),
            (long long)st[i], (long long)pd[i]);
    }
  }
  (void)d2;

  /* As run: 1-D as 2-D with a unit height (ATen's view4d; its input is
   * made contiguous first, so only the weight can ask for NHWC). */
  c->rd = nd == 1 ? 4 : (int)ti.ndim;
  int64_t isz[5], istr[5], wsz[5], wstr[5];
  if (nd == 1) {
    view4d(&ti, isz, istr);
    view4d(&tw, wsz, wstr);
    c->stride[0] = 1, c->pad[0] = 0, c->dil[0] = 1, c->out_pad[0] = 0;
    c->stride[1] = st[0], c->pad[1] = pd[0], c->dil[1] = dl[0];
    c->out_pad[1] = op_[0];
    c->dx_pad[0] = 0, c->dx_offset[0] = 0;
    c->dx_pad[1] = dxpad[0], c->dx_offset[1] = dxoff[0];
  } else {
    for (int64_t d = 0; d < ti.ndim; d++) {
      isz[d] = ti.sizes[d], istr[d] = ti.strides[d];
      wsz[d] = tw.sizes[d], wstr[d] = tw.strides[d];
    }
    for (int i = 0; i < nd; i++) {
      c->stride[i] = st[i], c->pad[i] = pd[i], c->dil[i] = dl[i];
      c->out_pad[i] = op_[i];
      c->dx_pad[i] = dxpad[i], c->dx_offset[i] = dxoff[i];
    }
  }
  c->channels_last =
      c->dtype != AOTRUN_FB_FLOAT64 &&
      ((nd > 1 && aotrun_fb_is_channels_last_strides(isz, istr, c->rd)) ||
       aotrun_fb_is_channels_last_strides(wsz, wstr, c->rd));
  memcpy(c->in_sizes, isz, sizeof isz);
  memcpy(c->in_strides, istr, sizeof istr);
  memcpy(c->w_sizes, wsz, sizeof wsz);
  memcpy(c->w_strides, wstr, sizeof wstr);
  c->in_data = ti.data;
  c->w_data = tw.data;
  c->out_sizes[0] = ti.sizes[0];
  c->out_sizes[1] = cout;
  c->dx_sizes[0] = ti.sizes[0];
  c->dx_sizes[1] = cout;
  if (nd == 1) {
    c->out_sizes[2] = 1;
    c->out_sizes[3] = osz[0];
    c->dx_sizes[2] = 1;
    c->dx_sizes[3] = dxsz[0];
  } else {
    for (int i = 0; i < nd; i++) {
      c->out_sizes[2 + i] = osz[i];
      c->dx_sizes[2 + i] = dxsz[i];
    }
  }
  aotrun_fb_format_strides(c->out_sizes, c->rd, c->channels_last,
                           c->out_strides);
  aotrun_fb_format_strides(c->dx_sizes, c->rd, c->channels_last,
                           c->dx_strides);
  if (c->has_bias) {
    c->bias_data = tb.data;
    c->bias_stride = tb.strides[0];
  }
  /* The result as returned: drop the unit height of a 1-D convolution. */
  c->ret_ndim = ti.ndim;
  for (int64_t d = 0, r = 0; d < c->rd; d++) {
    if (nd == 1 && d == 2) continue;
    c->ret_sizes[r] = c->out_sizes[d];
    c->ret_strides[r] = c->out_strides[d];
    r++;
  }
  return AOTI_TORCH_SUCCESS;
}
