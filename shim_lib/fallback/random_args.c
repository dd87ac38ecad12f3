/* random_args.c: argument checks shared by the random ops (random_args.h).
 * No CUDA calls. */
#include "shim_lib/fallback/random_args.h"

#include <inttypes.h>
#include <stdio.h>

int aotrun_fb_rand_is_float(int32_t dtype) {
  return dtype == AOTRUN_FB_FLOAT32 || dtype == AOTRUN_FB_FLOAT64 ||
         dtype == AOTRUN_FB_FLOAT16 || dtype == AOTRUN_FB_BFLOAT16;
}

int aotrun_fb_rand_is_storable(int32_t dtype) {
  switch (dtype) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 11:
    case 15: case 27: case 28: case 29:
      return 1;
    default:
      return 0;
  }
}

static int allowed_dtype(int allowed, int32_t dtype) {
  switch (allowed) {
    case AOTRUN_FB_RAND_FLOATS: return aotrun_fb_rand_is_float(dtype);
    case AOTRUN_FB_RAND_INTEGERS: return aotrun_fb_rand_is_storable(dtype);
    case AOTRUN_FB_RAND_PERM:
      return aotrun_fb_rand_is_float(dtype) || (dtype >= 0 && dtype <= 4);
    default: return 0;
  }
}

static const char *allowed_text(int allowed) {
  switch (allowed) {
    case AOTRUN_FB_RAND_FLOATS:
      return "float32, float64, float16 or bfloat16";
    case AOTRUN_FB_RAND_INTEGERS:
      return "a float dtype, bool, int8, int16, int32, int64, uint8, uint16, "
             "uint32 or uint64";
    default:
      return "int64, int32, int16, int8, uint8 or a float dtype";
  }
}

AOTITorchError aotrun_fb_rand_check_generator(const char *op,
                                              AtenGeneratorHandle *generator) {
  if (generator == NULL || *generator == NULL) return AOTI_TORCH_SUCCESS;
  return aotrun_shim_fail(
      "%s: 'generator' is a torch Generator (%p), which aotrun cannot "
      "honour: its random ops draw from aotrun's own per-device Philox "
      "generator (seed it with AOTRUN_SEED or aotrun_shim_random_set_seed); "
      "pass generator=None",
      op, (void *)*generator);
}

AOTITorchError aotrun_fb_rand_options(const char *op, const int32_t *dtype,
                                      int32_t default_dtype, int allowed,
                                      const int32_t *layout,
                                      const int32_t *device,
                                      int32_t device_index,
                                      const int32_t *pin_memory,
                                      aotrun_fb_rand_factory *f) {
  char buf[24];
  f->dtype = dtype != NULL ? *dtype : default_dtype;
  if (!allowed_dtype(allowed, f->dtype))
    return aotrun_shim_fail("%s: 'dtype' is %s; expected %s", op,
                            aotrun_fb_dtype_name(f->dtype, buf),
                            allowed_text(allowed));
  if (layout != NULL && *layout != 0)
    return aotrun_shim_fail(
        "%s: 'layout' is %d; only torch.strided (0) is supported", op,
        (int)*layout);
  if (device != NULL && *device != AOTRUN_FB_DEVICE_CUDA)
    return aotrun_shim_fail(
        "%s: 'device' is device type %d (%s); this CUDA op makes CUDA "
        "tensors only",
        op, (int)*device, *device == AOTRUN_FB_DEVICE_CPU ? "cpu" : "not cuda");
  if (pin_memory != NULL && *pin_memory != 0)
    return aotrun_shim_fail(
        "%s: 'pin_memory' is true; only CPU tensors can be pinned", op);
  if (device == NULL || device_index == -1) {
    f->device = aotrun_shim_current_device();
  } else if (device_index < 0) {
    return aotrun_shim_fail(
        "%s: 'device_index' is %d; expected -1 (the current device) or a "
        "CUDA device index",
        op, (int)device_index);
  } else {
    f->device = device_index;
  }
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_rand_sizes(const char *op, const int64_t *size,
                                    int64_t size_len,
                                    aotrun_fb_rand_factory *f) {
  if (size_len < 0 || size_len > AOTRUN_FB_MAX_DIMS)
    return aotrun_shim_fail("%s: 'size' has %lld dims; expected 0 to %d", op,
                            (long long)size_len, AOTRUN_FB_MAX_DIMS);
  if (size_len > 0 && size == NULL)
    return aotrun_shim_fail("%s: 'size' is NULL with %lld dims", op,
                            (long long)size_len);
  f->ndim = size_len;
  for (int64_t d = 0; d < size_len; d++) {
    if (size[d] < 0)
      return aotrun_shim_fail("%s: 'size' has the negative size %lld in dim "
                              "%lld",
                              op, (long long)size[d], (long long)d);
    f->sizes[d] = size[d];
  }
  int overflow = 0;
  f->numel = aotrun_fb_numel(f->sizes, f->ndim, &overflow);
  if (overflow) {
    char shape[128];
    return aotrun_shim_fail("%s: 'size' %s has more than 2^63 elements", op,
                            aotrun_fb_shape_str(f->sizes, f->ndim, shape,
                                                sizeof shape));
  }
  return AOTI_TORCH_SUCCESS;
}

/* The dtype's finite range as ATen's check_from_to_in_range sees it
 * (integers exactly; floats: every int64 fits but float16's +-65504). */
static void dtype_range(int32_t dtype, int64_t *lo, int64_t *hi,
                        int *unsigned64) {
  *unsigned64 = 0;
  switch (dtype) {
    case 0: *lo = 0; *hi = UINT8_MAX; return;
    case 1: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case 2: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case 3: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case 11: *lo = 0; *hi = 1; return;
    case 27: *lo = 0; *hi = UINT16_MAX; return;
    case 28: *lo = 0; *hi = UINT32_MAX; return;
    case 29: *lo = 0; *hi = INT64_MAX; *unsigned64 = 1; return;
    case 5: *lo = -65504; *hi = 65504; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
  }
}

AOTITorchError aotrun_fb_randint_check_range(const char *op, int64_t low,
                                             int64_t high, int32_t dtype) {
  if (low >= high)
    return aotrun_shim_fail(
        "%s: 'low' = %" PRId64 " must be less than 'high' = %" PRId64
        " (randint draws from [low, high))",
        op, low, high);
  int64_t lo, hi;
  int u64;
  dtype_range(dtype, &lo, &hi, &u64);
  char buf[24], range[64];
  if (u64)
    snprintf(range, sizeof range, "[0, 18446744073709551615]");
  else
    snprintf(range, sizeof range, "[%" PRId64 ", %" PRId64 "]", lo, hi);
  if (low < lo || low > hi)
    return aotrun_shim_fail("%s: 'low' = %" PRId64
                            " is out of range for dtype %s %s",
                            op, low, aotrun_fb_dtype_name(dtype, buf), range);
  if (high - 1 < lo || high - 1 > hi)
    return aotrun_shim_fail("%s: 'high' - 1 = %" PRId64
                            " is out of range for dtype %s %s",
                            op, high - 1, aotrun_fb_dtype_name(dtype, buf),
                            range);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_rand_new_output(const char *op,
                                         const aotrun_fb_rand_factory *f,
                                         AtenTensorHandle *ret, void **data) {
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(f->sizes, f->ndim, strides);
  *ret = NULL;
  if (aoti_torch_empty_strided(f->ndim, f->sizes, strides, f->dtype,
                               AOTRUN_FB_DEVICE_CUDA, f->device,
                               ret) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", op,
                            aotrun_shim_last_error());
  if (aoti_torch_get_data_ptr(*ret, data) != AOTI_TORCH_SUCCESS) {
    aoti_torch_delete_tensor_object(*ret);
    *ret = NULL;
    return aotrun_shim_fail("%s: cannot read the result's data pointer", op);
  }
  return AOTI_TORCH_SUCCESS;
}
