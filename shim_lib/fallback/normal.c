/* normal.c: aoti_torch_cuda_normal_functional: a new tensor like self
 * (at::empty_like strides) of numbers z * std + mean, z standard normal
 * from cuRAND's Box-Muller transform (in float, double for float64). */
#include <string.h>

#include "shim_lib/fallback/random_args.h"

static const char kNormal[] = "aoti_torch_cuda_normal_functional";

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_normal_functional(
    AtenTensorHandle self, double mean, double std,
    AtenGeneratorHandle *generator, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kNormal);
  *ret0 = NULL;
  aotrun_fb_tensor s;
  AOTITorchError err = aotrun_fb_rand_check_generator(kNormal, generator);
  if (!err) err = aotrun_fb_tensor_read(kNormal, "self", self, &s);
  if (!err) err = aotrun_fb_require_cuda(kNormal, &s, -1, NULL);
  if (!err && !aotrun_fb_rand_is_float(s.dtype)) {
    char buf[24];
    err = aotrun_shim_fail(
        "%s: 'self' has dtype %s; expected float32, float64, float16 or "
        "bfloat16",
        kNormal, aotrun_fb_dtype_name(s.dtype, buf));
  }
  if (!err && !(std >= 0.0))
    err = aotrun_shim_fail("%s: normal expects 'std' >= 0.0, but found std = "
                           "%g",
                           kNormal, std);
  if (err) return err;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_NORMAL;
  j.a = mean;
  j.b = std;
  return aotrun_fb_rand_fill_like(kNormal, &s, &j, ret0);
}
