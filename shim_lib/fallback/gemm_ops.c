/* gemm_ops.c: the exported GEMM family fallback ops (cuBLAS / cuBLASLt, see
 * gemm_run.c). */
#include "shim_lib/fallback/gemm.h"

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out,
                                                      AtenTensorHandle self,
                                                      AtenTensorHandle mat2) {
  aotrun_fb_gemm g;
  AOTITorchError err =
      aotrun_fb_gemm_mm_args("aoti_torch_cuda_mm_out", out, self, mat2, &g);
  return err ? err : aotrun_fb_gemm_run(&g);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmm_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, double beta, double alpha) {
  aotrun_fb_gemm g;
  AOTITorchError err = aotrun_fb_gemm_addmm_args(
      "aoti_torch_cuda_addmm_out", out, self, mat1, mat2, beta, alpha, &g);
  return err ? err : aotrun_fb_gemm_run(&g);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out,
                                                       AtenTensorHandle self,
                                                       AtenTensorHandle mat2) {
  aotrun_fb_gemm g;
  AOTITorchError err =
      aotrun_fb_gemm_bmm_args("aoti_torch_cuda_bmm_out", out, self, mat2, &g);
  return err ? err : aotrun_fb_gemm_run(&g);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_baddbmm_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
    AtenTensorHandle batch2, double beta, double alpha) {
  aotrun_fb_gemm g;
  AOTITorchError err = aotrun_fb_gemm_baddbmm_args(
      "aoti_torch_cuda_baddbmm_out", out, self, batch1, batch2, beta, alpha,
      &g);
  return err ? err : aotrun_fb_gemm_run(&g);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_dtype_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
    int32_t out_dtype) {
  aotrun_fb_gemm g;
  AOTITorchError err = aotrun_fb_gemm_mm_dtype_args(
      "aoti_torch_cuda_mm_dtype_out", out, self, mat2, out_dtype, &g);
  return err ? err : aotrun_fb_gemm_run(&g);
}

/* A new contiguous CUDA tensor for a result. */
static AOTITorchError new_result(const char *op, int64_t ndim,
                                 const int64_t *sizes, int32_t dtype,
                                 int32_t device, AtenTensorHandle *ret) {
  int64_t strides[2];
  aotrun_fb_contiguous_strides(sizes, ndim, strides);
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype,
                               AOTRUN_FB_DEVICE_CUDA, device,
                               ret) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", op,
                            aotrun_shim_last_error());
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmv(
    AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec,
    double beta, double alpha, AtenTensorHandle *ret0) {
  static const char op[] = "aoti_torch_cuda_addmv";
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", op);
  *ret0 = NULL;
  int64_t sizes[1];
  int32_t dtype = 0, device = 0;
  AOTITorchError err =
      aotrun_fb_gemm_addmv_check(op, self, mat, vec, sizes, &dtype, &device);
  AtenTensorHandle out = NULL;
  if (!err) err = new_result(op, 1, sizes, dtype, device, &out);
  aotrun_fb_gemm g;
  if (!err) err = aotrun_fb_gemm_addmv_args(op, out, self, mat, vec, beta,
                                            alpha, &g);
  if (!err) err = aotrun_fb_gemm_run(&g);
  if (err) {
    aoti_torch_delete_tensor_object(out);
    return err;
  }
  *ret0 = out;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda__addmm_activation(
    AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
    double beta, double alpha, int32_t use_gelu, AtenTensorHandle *ret0) {
  static const char op[] = "aoti_torch_cuda__addmm_activation";
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", op);
  *ret0 = NULL;
  int64_t sizes[2];
  int32_t dtype = 0, device = 0;
  AOTITorchError err = aotrun_fb_gemm_addmm_act_check(op, self, mat1, mat2,
                                                      sizes, &dtype, &device);
  AtenTensorHandle out = NULL;
  if (!err) err = new_result(op, 2, sizes, dtype, device, &out);
  aotrun_fb_gemm g;
  if (!err) err = aotrun_fb_gemm_addmm_args(op, out, self, mat1, mat2, beta,
                                            alpha, &g);
  if (!err) {
    g.act = use_gelu ? AOTRUN_FB_ACT_GELU_TANH : AOTRUN_FB_ACT_RELU;
    err = aotrun_fb_gemm_run(&g);
  }
  if (err) {
    aoti_torch_delete_tensor_object(out);
    return err;
  }
  *ret0 = out;
  return AOTI_TORCH_SUCCESS;
}
