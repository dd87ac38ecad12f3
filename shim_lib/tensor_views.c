/* tensor_views.c: new tensors over an existing tensor's storage, and
 * handle aliasing. Views are bounds-checked against the storage. */
#include "shim_lib/dtype.h"
#include "shim_lib/tensor.h"

/* A checked view of base's storage with the given shape/offset/dtype. */
static AOTITorchError make_view(const char *fn, aotrun_tensor_impl *base,
                                int64_t ndim, const int64_t *sizes,
                                const int64_t *strides, int64_t offset,
                                int32_t dtype, AtenTensorHandle *ret) {
  int64_t span, numel;
  if (aotrun_dtype_size(dtype) == 0)
    return aotrun_shim_fail("%s: unknown dtype %d", fn, (int)dtype);
  if (aotrun_shape_check(fn, ndim, sizes, strides, &span, &numel) ||
      aotrun_view_check(fn, base->storage, span, offset, dtype))
    return AOTI_TORCH_FAILURE;
  return aotrun_tensor_new(fn, base->storage, ndim, sizes, strides, offset,
                           dtype, ret);
}

AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self,
                                           int64_t offset_bytes, int32_t dtype,
                                           int64_t ndim, const int64_t *sizes,
                                           const int64_t *strides,
                                           AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch__alloc_from_pool";
  aotrun_tensor_impl *pool;
  if (!ret) return aotrun_shim_fail("%s: ret_new_tensor is NULL", fn);
  *ret = NULL;
  if (aotrun_tensor_get(fn, "self", self, &pool)) return AOTI_TORCH_FAILURE;
  /* As libtorch: the pool is a whole storage; the new tensor starts
   * offset_bytes into it. */
  if (pool->storage_offset != 0)
    return aotrun_shim_fail("%s: the pool tensor has storage offset %lld, expected 0",
                            fn, (long long)pool->storage_offset);
  size_t item = aotrun_dtype_size(dtype);
  if (item == 0) return aotrun_shim_fail("%s: unknown dtype %d", fn, (int)dtype);
  if (offset_bytes < 0 || offset_bytes % (int64_t)item != 0)
    return aotrun_shim_fail(
        "%s: offset_bytes %lld is not a non-negative multiple of the %s "
        "element size %zu",
        fn, (long long)offset_bytes, aotrun_dtype_name(dtype), item);
  return make_view(fn, pool, ndim, sizes, strides, offset_bytes / (int64_t)item,
                   dtype, ret);
}

AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self,
                                              int64_t ndim,
                                              const int64_t *sizes,
                                              const int64_t *strides,
                                              int64_t storage_offset,
                                              AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch__reinterpret_tensor";
  aotrun_tensor_impl *t;
  if (!ret) return aotrun_shim_fail("%s: ret_new_tensor is NULL", fn);
  *ret = NULL;
  if (aotrun_tensor_get(fn, "self", self, &t)) return AOTI_TORCH_FAILURE;
  int64_t offset;
  /* The offset is added to self's (Inductor's reinterpret_tensor). */
  if (__builtin_add_overflow(t->storage_offset, storage_offset, &offset) ||
      offset < 0)
    return aotrun_shim_fail(
        "%s: storage offset %lld added to self's %lld is out of range", fn,
        (long long)storage_offset, (long long)t->storage_offset);
  return make_view(fn, t, ndim, sizes, strides, offset, t->dtype, ret);
}

AOTITorchError aoti_torch_as_strided(AtenTensorHandle self,
                                     const int64_t *sizes,
                                     const int64_t *strides,
                                     AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch_as_strided";
  aotrun_tensor_impl *t;
  if (!ret) return aotrun_shim_fail("%s: ret is NULL", fn);
  *ret = NULL;
  if (aotrun_tensor_get(fn, "self", self, &t)) return AOTI_TORCH_FAILURE;
  /* The ABI passes no ndim: self's, and self's storage offset. */
  return make_view(fn, t, t->ndim, sizes, strides, t->storage_offset, t->dtype,
                   ret);
}

AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src,
                                         AtenTensorHandle dst) {
  static const char fn[] = "aoti_torch_assign_tensors";
  if (!src) return aotrun_shim_fail("%s: src is NULL", fn);
  if (!dst) return aotrun_shim_fail("%s: dst is NULL", fn);
  if (src->impl == dst->impl) return AOTI_TORCH_SUCCESS;
  atomic_fetch_add_explicit(&src->impl->refcount, 1, memory_order_relaxed);
  aotrun_tensor_impl_release(dst->impl);
  dst->impl = src->impl;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src,
                                             AtenTensorHandle *ret_dst) {
  static const char fn[] = "aoti_torch_assign_tensors_out";
  if (!ret_dst) return aotrun_shim_fail("%s: ret_dst is NULL", fn);
  *ret_dst = NULL;
  if (!src) return aotrun_shim_fail("%s: src is NULL", fn);
  return aotrun_tensor_new_ref(fn, src->impl, ret_dst);
}
