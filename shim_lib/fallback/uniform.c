/* uniform.c: aoti_torch_cuda_uniform (the functional uniform: a new tensor
 * like self of numbers in [from, to)) and the uniform parameters rand
 * shares. ATen's CUDA rule: value = (dtype)(u * (to - from) + from) with u
 * in (0, 1] from cuRAND, computed in float (double for float64), and a
 * value that equals `to` after rounding to the dtype becomes `from`, so
 * `to` is never returned, in float16 and bfloat16 too. */
#include <float.h>
#include <string.h>

#include "shim_lib/fallback/random_args.h"
#include "shim_lib/scalar_convert.h"

static const char kUniform[] = "aoti_torch_cuda_uniform";

/* x as ATen's static_cast<scalar_t>(double) gives it, back as a double. */
static double to_dtype(int32_t dtype, double x) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT32: return (double)(float)x;
    case AOTRUN_FB_FLOAT16:
      return (double)aotrun_half_to_float(aotrun_float_to_half((float)x));
    case AOTRUN_FB_BFLOAT16:
      return (double)aotrun_bf16_to_float(aotrun_float_to_bf16((float)x));
    default: return x;
  }
}

static double dtype_max(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT32: return FLT_MAX;
    case AOTRUN_FB_FLOAT16: return 65504.0;
    case AOTRUN_FB_BFLOAT16: return 3.3895313892515355e38;
    default: return DBL_MAX;
  }
}

AOTITorchError aotrun_fb_uniform_params(const char *op, int32_t dtype,
                                        double from, double to,
                                        aotrun_fb_rand_job *j) {
  char buf[24];
  const double max = dtype_max(dtype);
  if (!(from >= -max && from <= max))
    return aotrun_shim_fail("%s: 'from' = %g is out of bounds for dtype %s",
                            op, from, aotrun_fb_dtype_name(dtype, buf));
  if (!(to >= -max && to <= max))
    return aotrun_shim_fail("%s: 'to' = %g is out of bounds for dtype %s", op,
                            to, aotrun_fb_dtype_name(dtype, buf));
  if (from > to)
    return aotrun_shim_fail(
        "%s: uniform expects a [from, to) range, but 'from' = %g > 'to' = %g",
        op, from, to);
  if (to - from > max)
    return aotrun_shim_fail(
        "%s: 'to' - 'from' = %g (to = %g, from = %g) exceeds the largest %s",
        op, to - from, to, from, aotrun_fb_dtype_name(dtype, buf));
  /* from, to as scalar_t; range = (opmath_t)(to - from), the subtraction
   * in scalar_t (float16/bfloat16: in float, rounded back). */
  j->a = to_dtype(dtype, from);
  j->b = to_dtype(dtype, to);
  j->c = dtype == AOTRUN_FB_FLOAT64 ? j->b - j->a
                                    : to_dtype(dtype, (double)((float)j->b -
                                                               (float)j->a));
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_uniform(
    AtenTensorHandle self, double from, double to,
    AtenGeneratorHandle *generator, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL",
                            kUniform);
  *ret0 = NULL;
  aotrun_fb_tensor s;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_UNIFORM;
  AOTITorchError err = aotrun_fb_rand_check_generator(kUniform, generator);
  if (!err) err = aotrun_fb_tensor_read(kUniform, "self", self, &s);
  if (!err) err = aotrun_fb_require_cuda(kUniform, &s, -1, NULL);
  if (!err && !aotrun_fb_rand_is_float(s.dtype)) {
    char buf[24];
    err = aotrun_shim_fail(
        "%s: 'self' has dtype %s; expected float32, float64, float16 or "
        "bfloat16",
        kUniform, aotrun_fb_dtype_name(s.dtype, buf));
  }
  if (!err) err = aotrun_fb_uniform_params(kUniform, s.dtype, from, to, &j);
  if (err) return err;
  return aotrun_fb_rand_fill_like(kUniform, &s, &j, ret0);
}
