/* conv_transposed.c: how a transposed convolution maps onto cuDNN's
 * backward-data convolution (see aotrun_fb_conv_tdim in conv.h), and the
 * window copy of a plan whose output_padding cuDNN cannot take. */
#include "shim_lib/fallback/conv.h"

void aotrun_fb_conv_transposed_dim(int64_t in, int64_t kernel, int64_t stride,
                                   int64_t pad, int64_t dil, int64_t out_pad,
                                   aotrun_fb_conv_tdim *d) {
  int64_t dk = dil * (kernel - 1) + 1;
  d->out = (in - 1) * stride - 2 * pad + dk + out_pad;
  if (out_pad < stride) {
    /* floor(((in - 1) * stride + out_pad) / stride) + 1 == in. */
    d->dx = d->out;
    d->pad = pad;
    d->offset = 0;
  } else {
    /* Every position the kernel reaches, unpadded: the window at `pad`
     * is the result, and its last out_pad - pad positions (when out_pad
     * > pad) are reached by no input: zeros. */
    d->dx = (in - 1) * stride + dk;
    d->pad = 0;
    d->offset = pad;
  }
}

int64_t aotrun_fb_conv_window_extent(const aotrun_fb_conv *c, int i) {
  int64_t out = c->out_sizes[2 + i];
  int64_t left = c->dx_sizes[2 + i] - c->dx_offset[i];
  int64_t n = left < out ? left : out;
  return n > 0 ? n : 0;
}

AOTITorchError aotrun_fb_conv_window_copy(const aotrun_fb_conv *c,
                                          const aotrun_fb_temps *temps,
                                          const void *dx, void *y,
                                          cudaStream_t stream) {
  int sd = c->rd - 2;
  int64_t box[5] = {c->out_sizes[0], c->out_sizes[1], 0, 0, 0};
  int partial = 0, empty = 0;
  int64_t src_offset = 0;
  for (int i = 0; i < sd; i++) {
    box[2 + i] = aotrun_fb_conv_window_extent(c, i);
    partial |= box[2 + i] < c->out_sizes[2 + i];
    empty |= box[2 + i] == 0;
    src_offset += c->dx_offset[i] * c->dx_strides[2 + i];
  }
  if (partial) {
    int overflow = 0;
    int64_t numel = aotrun_fb_numel(c->out_sizes, c->rd, &overflow);
    cudaError_t e =
        cudaMemsetAsync(y, 0, (size_t)numel * c->elem_size, stream);
    if (e != cudaSuccess)
      return aotrun_shim_fail(
          "%s: zeroing the output_padding past the transposed "
          "convolution's reach failed: %s",
          c->op, cudaGetErrorString(e));
  }
  if (empty) return AOTI_TORCH_SUCCESS;
  return aotrun_fb_copy(temps, "the transposed convolution's window", y,
                        c->out_strides,
                        (const char *)dx + src_offset * (int64_t)c->elem_size,
                        c->dx_strides, box, c->rd, c->elem_size, stream);
}
