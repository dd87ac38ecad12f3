/* rand.c: aoti_torch_cuda_rand / randn and their _generator variants:
 * new contiguous tensors of uniform numbers in [0, 1) (ATen's uniform_(0, 1)
 * rule: cuRAND's (0, 1] value, and a value rounding to 1 becomes 0) or of
 * standard normal numbers (cuRAND's Box-Muller), float32 unless dtype says
 * float64, float16 or bfloat16. No host synchronisation (random_kernels.h).
 * A torch Generator is refused. */
#include <string.h>

#include "shim_lib/fallback/random_args.h"

static AOTITorchError factory(const char *op, int kind, const int64_t *size,
                              int64_t size_len, AtenGeneratorHandle *generator,
                              int32_t *dtype, int32_t *layout, int32_t *device,
                              int32_t device_index, int32_t *pin_memory,
                              AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", op);
  *ret0 = NULL;
  aotrun_fb_rand_factory f;
  aotrun_fb_rand_job j;
  memset(&j, 0, sizeof j);
  j.kind = kind;
  AOTITorchError err = aotrun_fb_rand_check_generator(op, generator);
  if (!err)
    err = aotrun_fb_rand_options(op, dtype, AOTRUN_FB_FLOAT32,
                                 AOTRUN_FB_RAND_FLOATS, layout, device,
                                 device_index, pin_memory, &f);
  if (!err) err = aotrun_fb_rand_sizes(op, size, size_len, &f);
  if (!err && kind == AOTRUN_FB_RAND_UNIFORM)
    err = aotrun_fb_uniform_params(op, f.dtype, 0.0, 1.0, &j);
  if (!err && kind == AOTRUN_FB_RAND_NORMAL) {
    j.a = 0.0; /* mean */
    j.b = 1.0; /* std */
  }
  if (err) return err;
  return aotrun_fb_rand_fill_new(op, &f, &j, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_rand(
    const int64_t *size, int64_t size_len_, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_rand", AOTRUN_FB_RAND_UNIFORM, size,
                 size_len_, NULL, dtype, layout, device, device_index_,
                 pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_rand_generator(
    const int64_t *size, int64_t size_len_, AtenGeneratorHandle *generator,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_rand_generator", AOTRUN_FB_RAND_UNIFORM,
                 size, size_len_, generator, dtype, layout, device,
                 device_index_, pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randn(
    const int64_t *size, int64_t size_len_, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_randn", AOTRUN_FB_RAND_NORMAL, size,
                 size_len_, NULL, dtype, layout, device, device_index_,
                 pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randn_generator(
    const int64_t *size, int64_t size_len_, AtenGeneratorHandle *generator,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_randn_generator", AOTRUN_FB_RAND_NORMAL,
                 size, size_len_, generator, dtype, layout, device,
                 device_index_, pin_memory, ret0);
}
