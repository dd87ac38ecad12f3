/* tensor_copy.c: copy_, tensor_copy_, clone, clone_preserve_strides, zero_. */
#include <stdio.h>
#include <stdlib.h>

#include "shim_lib/copy.h"
#include "shim_lib/dtype.h"
#include "shim_lib/tensor.h"

AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src,
                                int32_t non_blocking) {
  static const char fn[] = "aoti_torch_copy_";
  aotrun_tensor_impl *d, *s;
  if (aotrun_tensor_get(fn, "self", self, &d) ||
      aotrun_tensor_get(fn, "src", src, &s))
    return AOTI_TORCH_FAILURE;
  aotrun_strided ds = aotrun_strided_of(d), ss = aotrun_strided_of(s);
  return aotrun_copy(fn, &ds, &ss, !non_blocking);
}

AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src,
                                       AtenTensorHandle dst) {
  static const char fn[] = "aoti_torch_tensor_copy_";
  aotrun_tensor_impl *d, *s;
  if (aotrun_tensor_get(fn, "src", src, &s) ||
      aotrun_tensor_get(fn, "dst", dst, &d))
    return AOTI_TORCH_FAILURE;
  aotrun_strided ds = aotrun_strided_of(d), ss = aotrun_strided_of(s);
  return aotrun_copy(fn, &ds, &ss, 1);
}

AOTITorchError aoti_torch_zero_(AtenTensorHandle self) {
  static const char fn[] = "aoti_torch_zero_";
  aotrun_tensor_impl *t;
  if (aotrun_tensor_get(fn, "self", self, &t)) return AOTI_TORCH_FAILURE;
  aotrun_strided ts = aotrun_strided_of(t);
  return aotrun_zero(fn, &ts);
}

/* libtorch's should_swap: order dims by stride, then size; 0 = no opinion
 * (a stride of 0 says nothing about order). */
static int should_swap(const aotrun_tensor_impl *t, int64_t a, int64_t b) {
  int64_t sa = t->strides[a], sb = t->strides[b];
  if (sa == 0 || sb == 0) return 0;
  if (sa != sb) return sa > sb ? 1 : -1;
  return t->sizes[a] > t->sizes[b] ? 1 : 0;
}

/* libtorch's infer_dense_strides: dense strides keeping t's dim order. */
static void dense_strides_like(const aotrun_tensor_impl *t, int64_t *out) {
  int64_t perm[AOTRUN_SHIM_MAX_DIMS], n = t->ndim;
  for (int64_t i = 0; i < n; i++) perm[i] = n - 1 - i; /* innermost first */
  for (int64_t i = 1; i < n; i++) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; d0--) {
      int c = should_swap(t, perm[d0], perm[d1]);
      if (c > 0) {
        int64_t tmp = perm[d0];
        perm[d0] = perm[d1];
        perm[d1] = tmp;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  int64_t stride = 1;
  for (int64_t i = 0; i < n; i++) {
    out[perm[i]] = stride;
    stride *= t->sizes[perm[i]] > 1 ? t->sizes[perm[i]] : 1;
  }
}

/* New tensor on t's device with t's dtype and the given shape. */
static AOTITorchError alloc_like(const char *fn, const aotrun_tensor_impl *t,
                                 int64_t ndim, const int64_t *sizes,
                                 const int64_t *strides, AtenTensorHandle *ret) {
  if (!aoti_torch_empty_strided(ndim, sizes, strides, t->dtype, t->device_type,
                                t->device_index, ret))
    return AOTI_TORCH_SUCCESS;
  char why[768];
  snprintf(why, sizeof why, "%s", aotrun_shim_last_error());
  return aotrun_shim_fail("%s: %s", fn, why);
}

AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch_clone";
  aotrun_tensor_impl *t;
  if (!ret) return aotrun_shim_fail("%s: ret is NULL", fn);
  *ret = NULL;
  if (aotrun_tensor_get(fn, "self", self, &t)) return AOTI_TORCH_FAILURE;
  int64_t strides[AOTRUN_SHIM_MAX_DIMS];
  /* preserve_format: a dense tensor keeps its exact strides. */
  if (aotrun_tensor_is_dense(t)) {
    for (int64_t d = 0; d < t->ndim; d++) strides[d] = t->strides[d];
  } else {
    dense_strides_like(t, strides);
  }
  AtenTensorHandle out;
  if (alloc_like(fn, t, t->ndim, t->sizes, strides, &out)) return AOTI_TORCH_FAILURE;
  aotrun_strided ds = aotrun_strided_of(out->impl), ss = aotrun_strided_of(t);
  if (aotrun_copy(fn, &ds, &ss, 1)) {
    aoti_torch_delete_tensor_object(out);
    return AOTI_TORCH_FAILURE;
  }
  *ret = out;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self,
                                                 AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch_clone_preserve_strides";
  aotrun_tensor_impl *t;
  if (!ret) return aotrun_shim_fail("%s: ret is NULL", fn);
  *ret = NULL;
  if (aotrun_tensor_get(fn, "self", self, &t)) return AOTI_TORCH_FAILURE;
  /* Copy the whole span [offset, offset + span) as one flat run, then view
   * it with self's sizes and strides at offset 0. */
  int64_t span = aotrun_tensor_span(t), one = 1;
  AtenTensorHandle flat;
  if (alloc_like(fn, t, 1, &span, &one, &flat)) return AOTI_TORCH_FAILURE;
  aotrun_strided ds = aotrun_strided_of(flat->impl);
  aotrun_strided ss = {aotrun_tensor_data(t), t->dtype, t->device_type,
                       t->device_index, 1, &span, &one};
  AOTITorchError err = aotrun_copy(fn, &ds, &ss, 1);
  if (!err)
    err = aotrun_tensor_new(fn, flat->impl->storage, t->ndim, t->sizes,
                            t->strides, 0, t->dtype, ret);
  aoti_torch_delete_tensor_object(flat);
  return err;
}
