/* randint.c: aoti_torch_cuda_randint, randint_generator, randint_low and
 * randint_low_out: integers uniform in [low, high) (randint: low = 0),
 * int64 unless dtype says otherwise (every integer dtype, bool and the
 * float dtypes). low and high - 1 must fit the dtype (ATen's
 * check_from_to_in_range). Each value is low + floor(r * (high - low) /
 * 2^w) for w = 32 random bits (ranges up to 2^32) or 64, so the range may
 * span all of int64: AOTInductor's seeds for its Philox kernels
 * (inductor_seeds) are randint_low_out(INT64_MIN, INT64_MAX, [count]).
 * No host synchronisation: the seeds of a captured CUDA graph change on
 * every replay. */
#include <string.h>

#include "shim_lib/fallback/random_args.h"

static const char kLowOut[] = "aoti_torch_cuda_randint_low_out";

static void int_job(aotrun_fb_rand_job *j, int64_t low, int64_t high) {
  memset(j, 0, sizeof *j);
  j->kind = AOTRUN_FB_RAND_INT;
  j->low = low;
  j->range = (uint64_t)high - (uint64_t)low; /* >= 1, < 2^64 */
}

static AOTITorchError factory(const char *op, int64_t low, int64_t high,
                              const int64_t *size, int64_t size_len,
                              AtenGeneratorHandle *generator, int32_t *dtype,
                              int32_t *layout, int32_t *device,
                              int32_t device_index, int32_t *pin_memory,
                              AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", op);
  *ret0 = NULL;
  aotrun_fb_rand_factory f;
  AOTITorchError err = aotrun_fb_rand_check_generator(op, generator);
  if (!err)
    err = aotrun_fb_rand_options(op, dtype, AOTRUN_FB_INT64,
                                 AOTRUN_FB_RAND_INTEGERS, layout, device,
                                 device_index, pin_memory, &f);
  if (!err) err = aotrun_fb_rand_sizes(op, size, size_len, &f);
  if (!err) err = aotrun_fb_randint_check_range(op, low, high, f.dtype);
  if (err) return err;
  aotrun_fb_rand_job j;
  int_job(&j, low, high);
  return aotrun_fb_rand_fill_new(op, &f, &j, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint(
    int64_t high, const int64_t *size, int64_t size_len_, int32_t *dtype,
    int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_randint", 0, high, size, size_len_, NULL,
                 dtype, layout, device, device_index_, pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_generator(
    int64_t high, const int64_t *size, int64_t size_len_,
    AtenGeneratorHandle *generator, int32_t *dtype, int32_t *layout,
    int32_t *device, int32_t device_index_, int32_t *pin_memory,
    AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_randint_generator", 0, high, size,
                 size_len_, generator, dtype, layout, device, device_index_,
                 pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_low(
    int64_t low, int64_t high, const int64_t *size, int64_t size_len_,
    int32_t *dtype, int32_t *layout, int32_t *device, int32_t device_index_,
    int32_t *pin_memory, AtenTensorHandle *ret0) {
  return factory("aoti_torch_cuda_randint_low", low, high, size, size_len_,
                 NULL, dtype, layout, device, device_index_, pin_memory, ret0);
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_randint_low_out(
    AtenTensorHandle out, int64_t low, int64_t high, const int64_t *size,
    int64_t size_len_) {
  aotrun_fb_tensor o;
  aotrun_fb_rand_factory f;
  AOTITorchError err = aotrun_fb_tensor_read(kLowOut, "out", out, &o);
  if (!err) err = aotrun_fb_require_cuda(kLowOut, &o, -1, NULL);
  if (!err) err = aotrun_fb_rand_sizes(kLowOut, size, size_len_, &f);
  if (err) return err;
  int same = o.ndim == f.ndim;
  for (int64_t d = 0; same && d < f.ndim; d++) same = o.sizes[d] == f.sizes[d];
  if (!same) {
    char a[128], b[128];
    return aotrun_shim_fail(
        "%s: 'out' has size %s but 'size' is %s (out is not resized)",
        kLowOut, aotrun_fb_shape_str(o.sizes, o.ndim, a, sizeof a),
        aotrun_fb_shape_str(f.sizes, f.ndim, b, sizeof b));
  }
  if (!aotrun_fb_rand_is_storable(o.dtype)) {
    char buf[24];
    return aotrun_shim_fail(
        "%s: 'out' has dtype %s; expected a float dtype, bool or an integer "
        "dtype",
        kLowOut, aotrun_fb_dtype_name(o.dtype, buf));
  }
  err = aotrun_fb_randint_check_range(kLowOut, low, high, o.dtype);
  if (err) return err;
  aotrun_fb_rand_job j;
  int_job(&j, low, high);
  return aotrun_fb_rand_fill_tensor(kLowOut, &o, &j);
}
