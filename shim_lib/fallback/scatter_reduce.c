/* scatter_reduce.c: aoti_torch_cuda_scatter_reduce_two_out and shim.h's
 * generic aoti_torch_scatter_reduce_out (ATen's scatter_reduce.two): out =
 * self, then every target named by index reduces its src values with
 * "sum", "prod", "mean", "amax" or "amin", with or without self's value.
 * Deterministic and free of host synchronisation; see scatter_run.c. */
#include "shim_lib/fallback/scatter_plan.h"

static const char kOp[] = "aoti_torch_cuda_scatter_reduce_two_out";
static const char kGenericOp[] = "aoti_torch_scatter_reduce_out";

static AOTITorchError scatter_reduce(const char *op, AtenTensorHandle out,
                                     AtenTensorHandle self, int64_t dim,
                                     AtenTensorHandle index,
                                     AtenTensorHandle src, const char *reduce,
                                     int32_t include_self) {
  aotrun_fb_scatter_call call = {out, self, index,  src,         dim,
                                 1,   0.0,  1,      reduce,      include_self};
  aotrun_fb_scatter_plan plan;
  AOTITorchError err = aotrun_fb_scatter_plan_build(op, &call, &plan);
  if (err) return err;
  return aotrun_fb_scatter_run(&plan);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_scatter_reduce_two_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src, const char *reduce,
    int32_t include_self) {
  return scatter_reduce(kOp, out, self, dim, index, src, reduce,
                        include_self);
}

/* CUDA tensors only: a CPU tensor fails the device check by name. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_scatter_reduce_out(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle src, const char *reduce,
    int32_t include_self) {
  return scatter_reduce(kGenericOp, out, self, dim, index, src, reduce,
                        include_self);
}
