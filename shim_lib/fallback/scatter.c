/* scatter.c: aoti_torch_cuda_scatter_src_out, aoti_torch_cuda_scatter_value_out
 * and shim.h's generic aoti_torch_scatter_out: out = self with
 * out[..., index[p], ...] = src[p] (or the value) along dim; with repeated
 * targets the last write in index order wins (deterministic). See
 * scatter_plan.h and scatter_run.c. */
#include "shim_lib/fallback/scatter_plan.h"

static const char kSrcOp[] = "aoti_torch_cuda_scatter_src_out";
static const char kValueOp[] = "aoti_torch_cuda_scatter_value_out";
static const char kGenericOp[] = "aoti_torch_scatter_out";

static AOTITorchError scatter(const char *op, AtenTensorHandle out,
                              AtenTensorHandle self, int64_t dim,
                              AtenTensorHandle index, AtenTensorHandle src,
                              int has_src, double value) {
  aotrun_fb_scatter_call call = {out, self, index, src, dim, has_src, value,
                                 0,   NULL, 1};
  aotrun_fb_scatter_plan plan;
  AOTITorchError err = aotrun_fb_scatter_plan_build(op, &call, &plan);
  if (err) return err;
  return aotrun_fb_scatter_run(&plan);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_src_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src) {
  return scatter(kSrcOp, out, self, dim, index, src, 1, 0.0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_value_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, double value) {
  return scatter(kValueOp, out, self, dim, index, NULL, 0, value);
}

/* CUDA tensors only: a CPU tensor fails the device check by name. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_scatter_out(AtenTensorHandle out,
                                                      AtenTensorHandle self,
                                                      int64_t dim,
                                                      AtenTensorHandle index,
                                                      AtenTensorHandle src) {
  return scatter(kGenericOp, out, self, dim, index, src, 1, 0.0);
}
