/* tensor.c: the tensor impl, its handles and shape arithmetic. */
#include "shim_lib/tensor.h"

#include <stdlib.h>
#include <string.h>

#include "shim_lib/dtype.h"

AOTITorchError aotrun_shape_check(const char *fn, int64_t ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int64_t *span, int64_t *numel) {
  if (ndim < 0) return aotrun_shim_fail("%s: ndim %lld is negative", fn, (long long)ndim);
  if (ndim > AOTRUN_SHIM_MAX_DIMS)
    return aotrun_shim_fail("%s: ndim %lld exceeds the maximum of %d", fn,
                            (long long)ndim, AOTRUN_SHIM_MAX_DIMS);
  if (ndim > 0 && !sizes)
    return aotrun_shim_fail("%s: sizes is NULL for a %lld-d tensor", fn, (long long)ndim);
  if (ndim > 0 && !strides)
    return aotrun_shim_fail("%s: strides is NULL for a %lld-d tensor", fn, (long long)ndim);
  int64_t n = 1, last = 0, any_zero = 0;
  for (int64_t d = 0; d < ndim; d++) {
    if (sizes[d] < 0)
      return aotrun_shim_fail("%s: size %lld in dim %lld is negative", fn,
                              (long long)sizes[d], (long long)d);
    if (strides[d] < 0)
      return aotrun_shim_fail("%s: stride %lld in dim %lld is negative", fn,
                              (long long)strides[d], (long long)d);
    if (sizes[d] == 0) any_zero = 1;
  }
  for (int64_t d = 0; d < ndim && !any_zero; d++) {
    int64_t reach;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_add_overflow(last, reach, &last))
      return aotrun_shim_fail(
          "%s: size %lld with stride %lld in dim %lld overflows the storage "
          "element count",
          fn, (long long)sizes[d], (long long)strides[d], (long long)d);
    if (__builtin_mul_overflow(n, sizes[d], &n))
      return aotrun_shim_fail("%s: size %lld in dim %lld overflows numel", fn,
                              (long long)sizes[d], (long long)d);
  }
  if (any_zero) {
    *span = 0;
    *numel = 0;
  } else {
    if (__builtin_add_overflow(last, 1, span))
      return aotrun_shim_fail("%s: the storage element count overflows", fn);
    *numel = n;
  }
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_span_bytes(const char *fn, int64_t span, int64_t offset,
                                 int32_t dtype, size_t *out) {
  size_t item = aotrun_dtype_size(dtype);
  if (item == 0) return aotrun_shim_fail("%s: unknown dtype %d", fn, (int)dtype);
  if (offset < 0)
    return aotrun_shim_fail("%s: storage offset %lld is negative", fn, (long long)offset);
  int64_t elems, bytes;
  if (__builtin_add_overflow(span, offset, &elems) ||
      __builtin_mul_overflow(elems, (int64_t)item, &bytes))
    return aotrun_shim_fail(
        "%s: %lld elements at offset %lld of %s (%zu bytes each) overflow the "
        "byte size",
        fn, (long long)span, (long long)offset, aotrun_dtype_name(dtype), item);
  *out = (size_t)bytes;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError new_handle(const char *fn, aotrun_tensor_impl *impl,
                                 AtenTensorHandle *ret) {
  struct AtenTensorOpaque *h = malloc(sizeof *h);
  if (!h) return aotrun_shim_fail("%s: out of host memory", fn);
  h->impl = impl;
  *ret = h;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_tensor_new(const char *fn, aotrun_storage *storage,
                                 int64_t ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset,
                                 int32_t dtype, AtenTensorHandle *ret) {
  aotrun_tensor_impl *t =
      malloc(sizeof *t + 2 * (size_t)ndim * sizeof(int64_t));
  if (!t) return aotrun_shim_fail("%s: out of host memory", fn);
  atomic_init(&t->refcount, 1);
  t->storage = storage;
  t->ndim = ndim;
  t->sizes = t->dims;
  t->strides = t->dims + ndim;
  if (ndim > 0) {
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof(int64_t));
    memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
  }
  t->storage_offset = offset;
  t->dtype = dtype;
  t->device_type = storage ? storage->device_type : AOTRUN_DEV_CPU;
  t->device_index = storage ? storage->device_index : -1;
  if (new_handle(fn, t, ret)) {
    free(t);
    return AOTI_TORCH_FAILURE;
  }
  if (storage) aotrun_storage_retain(storage);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_tensor_new_ref(const char *fn, aotrun_tensor_impl *impl,
                                     AtenTensorHandle *ret) {
  if (new_handle(fn, impl, ret)) return AOTI_TORCH_FAILURE;
  atomic_fetch_add_explicit(&impl->refcount, 1, memory_order_relaxed);
  return AOTI_TORCH_SUCCESS;
}

void aotrun_tensor_impl_release(aotrun_tensor_impl *impl) {
  if (!impl) return;
  if (atomic_fetch_sub_explicit(&impl->refcount, 1, memory_order_acq_rel) != 1)
    return;
  aotrun_storage_release(impl->storage);
  free(impl);
}

AOTITorchError aotrun_tensor_get(const char *fn, const char *name,
                                 AtenTensorHandle h, aotrun_tensor_impl **out) {
  if (!h) return aotrun_shim_fail("%s: %s is NULL", fn, name);
  if (!h->impl->storage)
    return aotrun_shim_fail("%s: %s is an undefined tensor", fn, name);
  *out = h->impl;
  return AOTI_TORCH_SUCCESS;
}

int64_t aotrun_tensor_numel(const aotrun_tensor_impl *t) {
  int64_t n = 1;
  for (int64_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

int64_t aotrun_tensor_span(const aotrun_tensor_impl *t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] == 0) return 0;
    last += (t->sizes[d] - 1) * t->strides[d];
  }
  return last + 1;
}

void *aotrun_tensor_data(const aotrun_tensor_impl *t) {
  if (!t->storage || !t->storage->data) return NULL;
  if (t->storage_offset == 0) return t->storage->data; /* most tensors */
  return (char *)t->storage->data +
         t->storage_offset * (int64_t)aotrun_dtype_size(t->dtype);
}

int aotrun_strides_contiguous(int64_t ndim, const int64_t *sizes,
                              const int64_t *strides) {
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    if (sizes[d] == 0) return 1;
    if (sizes[d] != 1 && strides[d] != expected) return 0;
    expected *= sizes[d];
  }
  return 1;
}

int aotrun_tensor_is_contiguous(const aotrun_tensor_impl *t) {
  return aotrun_strides_contiguous(t->ndim, t->sizes, t->strides);
}

int aotrun_tensor_is_dense(const aotrun_tensor_impl *t) {
  /* libtorch's is_non_overlapping_and_dense: sorted by stride (size-1 dims
   * ignored), each stride is the product of the smaller dims' sizes. A
   * span count alone is fooled by overlap plus gaps. */
  int64_t perm[AOTRUN_SHIM_MAX_DIMS], n = 0;
  for (int64_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] == 0) return 1;
    if (t->sizes[d] != 1) perm[n++] = d;
  }
  for (int64_t i = 1; i < n; i++) { /* insertion sort by stride */
    int64_t v = perm[i], j = i;
    while (j > 0 && t->strides[perm[j - 1]] > t->strides[v]) {
      perm[j] = perm[j - 1];
      j--;
    }
    perm[j] = v;
  }
  int64_t expected = 1;
  for (int64_t i = 0; i < n; i++) {
    if (t->strides[perm[i]] != expected) return 0;
    expected *= t->sizes[perm[i]];
  }
  return 1;
}

AOTITorchError aotrun_view_check(const char *fn, const aotrun_storage *s,
                                 int64_t span, int64_t offset, int32_t dtype) {
  size_t need = 0;
  if (aotrun_span_bytes(fn, span, offset, dtype, &need)) return AOTI_TORCH_FAILURE;
  if (span > 0 && need > s->nbytes)
    return aotrun_shim_fail(
        "%s: the view needs %zu bytes (%lld elements of %s at offset %lld) "
        "but the storage has %zu",
        fn, need, (long long)span, aotrun_dtype_name(dtype), (long long)offset,
        s->nbytes);
  return AOTI_TORCH_SUCCESS;
}
