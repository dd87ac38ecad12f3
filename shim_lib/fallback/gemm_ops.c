/* gemm_ops.c: the exported GEMM fallback ops (cuBLAS, see gemm_run.c). */
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
