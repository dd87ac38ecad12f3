/* tensor_attrs.c: the attribute getters. */
#include "shim_lib/allocator.h"
#include "shim_lib/dtype.h"
#include "shim_lib/tensor.h"

/* Common prologue: a defined tensor and a non-NULL output. */
#define GETTER_PROLOGUE(fn, h, out, impl)                                  \
  aotrun_tensor_impl *impl;                                                \
  if (!(out)) return aotrun_shim_fail("%s: output pointer is NULL", fn);   \
  if (aotrun_tensor_get(fn, "tensor", h, &impl)) return AOTI_TORCH_FAILURE

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle h, void **ret) {
  GETTER_PROLOGUE("aoti_torch_get_data_ptr", h, ret, t);
  *ret = aotrun_tensor_data(t);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle h, int64_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_storage_size", h, ret, t);
  *ret = (int64_t)t->storage->nbytes;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle h, int64_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_storage_numel", h, ret, t);
  *ret = (int64_t)(t->storage->nbytes / aotrun_dtype_size(t->dtype));
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_dim(AtenTensorHandle h, int64_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_dim", h, ret, t);
  *ret = t->ndim;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_numel(AtenTensorHandle h, int64_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_numel", h, ret, t);
  *ret = aotrun_tensor_numel(t);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_sizes(AtenTensorHandle h, int64_t **ret) {
  GETTER_PROLOGUE("aoti_torch_get_sizes", h, ret, t);
  *ret = t->sizes;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_strides(AtenTensorHandle h, int64_t **ret) {
  GETTER_PROLOGUE("aoti_torch_get_strides", h, ret, t);
  *ret = t->strides;
  return AOTI_TORCH_SUCCESS;
}

/* Negative d counts from the end, as in libtorch's size(d). */
static AOTITorchError wrap_dim(const char *fn, const aotrun_tensor_impl *t,
                               int64_t d, int64_t *out) {
  int64_t w = d < 0 ? d + t->ndim : d;
  if (w < 0 || w >= t->ndim)
    return aotrun_shim_fail("%s: dim %lld is out of range for a %lld-d tensor",
                            fn, (long long)d, (long long)t->ndim);
  *out = w;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_size(AtenTensorHandle h, int64_t d, int64_t *ret) {
  static const char fn[] = "aoti_torch_get_size";
  GETTER_PROLOGUE(fn, h, ret, t);
  int64_t w = 0;
  if (wrap_dim(fn, t, d, &w)) return AOTI_TORCH_FAILURE;
  *ret = t->sizes[w];
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_stride(AtenTensorHandle h, int64_t d, int64_t *ret) {
  static const char fn[] = "aoti_torch_get_stride";
  GETTER_PROLOGUE(fn, h, ret, t);
  int64_t w = 0;
  if (wrap_dim(fn, t, d, &w)) return AOTI_TORCH_FAILURE;
  *ret = t->strides[w];
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_dtype(AtenTensorHandle h, int32_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_dtype", h, ret, t);
  *ret = t->dtype;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_device_type(AtenTensorHandle h, int32_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_device_type", h, ret, t);
  *ret = t->device_type;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_device_index(AtenTensorHandle h, int32_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_device_index", h, ret, t);
  *ret = t->device_index;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_layout(AtenTensorHandle h, int32_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_layout", h, ret, t);
  (void)t;
  *ret = AOTRUN_LAYOUT_STRIDED;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle h, int64_t *ret) {
  GETTER_PROLOGUE("aoti_torch_get_storage_offset", h, ret, t);
  *ret = t->storage_offset;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle h, AOTRUN_SHIM_BOOL *ret) {
  GETTER_PROLOGUE("aoti_torch_is_contiguous", h, ret, t);
  *ret = aotrun_tensor_is_contiguous(t) != 0;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_is_defined(AtenTensorHandle h, AOTRUN_SHIM_BOOL *ret) {
  static const char fn[] = "aoti_torch_is_defined";
  if (!ret) return aotrun_shim_fail("%s: output pointer is NULL", fn);
  if (!h) return aotrun_shim_fail("%s: tensor is NULL", fn);
  *ret = h->impl->storage != NULL;
  return AOTI_TORCH_SUCCESS;
}

/* Memory the shim allocated and frees with the last reference, through an
 * allocator that outlives any graph: host, pinned, or device memory of the
 * default allocator (not a graph pool's, not borrowed). */
int aotrun_shim_tensor_owns_memory(AtenTensorHandle h) {
  if (h == NULL || h->impl == NULL || h->impl->storage == NULL) return 0;
  const aotrun_storage *s = h->impl->storage;
  switch (s->kind) {
    case AOTRUN_MEM_HOST:
    case AOTRUN_MEM_PINNED: return 1;
    case AOTRUN_MEM_DEVICE:
      return aotrun_is_default_allocator(&s->allocator);
    case AOTRUN_MEM_BORROWED:
    case AOTRUN_MEM_LENT: break;
  }
  return 0;
}
