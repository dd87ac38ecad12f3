/* conv_ops.c: the exported convolution fallback op (cuDNN, see conv.h). */
#include "shim_lib/fallback/conv.h"

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_convolution(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle *bias,
    const int64_t *stride, int64_t stride_len_, const int64_t *padding,
    int64_t padding_len_, const int64_t *dilation, int64_t dilation_len_,
    int32_t transposed, const int64_t *output_padding,
    int64_t output_padding_len_, int64_t groups, AtenTensorHandle *ret0) {
  static const char op[] = "aoti_torch_cuda_convolution";
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", op);
  *ret0 = NULL;
  aotrun_fb_conv c;
  AOTITorchError err = aotrun_fb_conv_args(
      op, input, weight, bias, stride, stride_len_, padding, padding_len_,
      dilation, dilation_len_, transposed, output_padding,
      output_padding_len_, groups, &c);
  return err ? err : aotrun_fb_conv_run(&c, ret0);
}
