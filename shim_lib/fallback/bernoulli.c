/* bernoulli.c: aoti_torch_cuda_bernoulli__float and bernoulli__Tensor: self
 * (in place, any strides, any dtype the kernels store: floats, bool,
 * integers) = 1 with probability p, else 0; u < p for u uniform in [0, 1)
 * with 32 bits, so p = 0 never and p = 1 always gives 1. A scalar p outside
 * [0, 1] is refused before any CUDA work; a p tensor (float dtypes,
 * broadcast to self's shape, on self's device) is read on the device: an
 * element outside [0, 1] or NaN sets its element of self to 0 and is
 * reported through the device error slot (ATen asserts on the device). */
#include <string.h>

#include "shim_lib/fallback/random_args.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char kFloat[] = "aoti_torch_cuda_bernoulli__float";
static const char kTensor[] = "aoti_torch_cuda_bernoulli__Tensor";
static const char kP[] = "p";

static AOTITorchError read_self(const char *op, AtenTensorHandle self,
                                AtenGeneratorHandle *generator,
                                aotrun_fb_tensor *s) {
  AOTITorchError err = aotrun_fb_rand_check_generator(op, generator);
  if (!err) err = aotrun_fb_tensor_read(op, "self", self, s);
  if (!err) err = aotrun_fb_require_cuda(op, s, -1, NULL);
  if (!err && !aotrun_fb_rand_is_storable(s->dtype)) {
    char buf[24];
    err = aotrun_shim_fail(
        "%s: 'self' has dtype %s; expected a float dtype, bool or an "
        "integer dtype",
        op, aotrun_fb_dtype_name(s->dtype, buf));
  }
  return err;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bernoulli__float(
    AtenTensorHandle self, double p, AtenGeneratorHandle *generator) {
  aotrun_fb_tensor s;
  AOTITorchError err = read_self(kFloat, self, generator, &s);
  if (err) return err;
  if (!(p >= 0.0 && p <= 1.0))
    return aotrun_shim_fail(
        "%s: bernoulli_ expects 'p' to be in [0, 1], but got p = %g", kFloat,
        p);
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_BERNOULLI;
  j.a = p;
  return aotrun_fb_rand_fill_tensor(kFloat, &s, &j);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bernoulli__Tensor(
    AtenTensorHandle self, AtenTensorHandle p,
    AtenGeneratorHandle *generator) {
  aotrun_fb_tensor s, pt;
  AOTITorchError err = read_self(kTensor, self, generator, &s);
  if (!err) err = aotrun_fb_tensor_read(kTensor, "p", p, &pt);
  if (!err) err = aotrun_fb_require_cuda(kTensor, &pt, s.device_index, "self");
  if (err) return err;
  char buf[24], a[128], b[128];
  if (!aotrun_fb_rand_is_float(pt.dtype))
    return aotrun_shim_fail(
        "%s: 'p' has dtype %s; expected probabilities of a float dtype "
        "(float32, float64, float16 or bfloat16)",
        kTensor, aotrun_fb_dtype_name(pt.dtype, buf));
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = AOTRUN_FB_RAND_BERNOULLI_P;
  if (aotrun_fb_expand_strides(pt.sizes, pt.strides, pt.ndim, s.sizes, s.ndim,
                               j.p_strides) != 0)
    return aotrun_shim_fail(
        "%s: 'p' of shape %s is not broadcastable to 'self' of shape %s",
        kTensor, aotrun_fb_shape_str(pt.sizes, pt.ndim, a, sizeof a),
        aotrun_fb_shape_str(s.sizes, s.ndim, b, sizeof b));
  j.p = pt.data;
  j.p_dtype = pt.dtype;
  j.op = (uint64_t)(uintptr_t)kTensor;
  j.arg = (uint64_t)(uintptr_t)kP;
  int overflow = 0;
  if (aotrun_fb_numel(s.sizes, s.ndim, &overflow) > 0) {
    void *slot = NULL;
    if (aotrun_shim_device_error_slot(s.device_index, &slot) !=
        AOTI_TORCH_SUCCESS)
      return aotrun_shim_fail("%s: no device error slot: %s", kTensor,
                              aotrun_shim_last_error());
    j.err = (aotrun_device_error *)slot;
  }
  return aotrun_fb_rand_fill_tensor(kTensor, &s, &j);
}
