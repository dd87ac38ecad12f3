/* tensor_create.c: making and deleting tensor handles. */
#include <stdlib.h>

#include "shim_lib/cuda_context.h"
#include "shim_lib/dtype.h"
#include "shim_lib/output_lend.h"
#include "shim_lib/tensor.h"

/* Validates the device and resolves a CUDA index of -1 to the current
 * device. CPU takes -1 or 0, as in libtorch. */
static AOTITorchError check_device(const char *fn, int32_t type, int32_t index,
                                   int32_t *out_index) {
  if (type == AOTRUN_DEV_CPU) {
    if (index != -1 && index != 0)
      return aotrun_shim_fail("%s: cpu device index must be -1 or 0, got %d", fn,
                              (int)index);
    *out_index = index;
    return AOTI_TORCH_SUCCESS;
  }
  if (type == AOTRUN_DEV_CUDA) return aotrun_cuda_resolve_device(fn, index, out_index);
  return aotrun_shim_fail("%s: device type %d (%s) is not supported (cpu and cuda are)",
                          fn, (int)type, aotrun_device_name(type));
}

static AOTITorchError check_dtype(const char *fn, int32_t dtype) {
  if (aotrun_dtype_size(dtype) == 0)
    return aotrun_shim_fail("%s: unknown dtype %d", fn, (int)dtype);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError empty_strided(const char *fn, int64_t ndim,
                                    const int64_t *sizes,
                                    const int64_t *strides, int32_t dtype,
                                    int32_t device_type, int32_t device_index,
                                    int pinned, AtenTensorHandle *ret) {
  if (!ret) return aotrun_shim_fail("%s: ret_new_tensor is NULL", fn);
  *ret = NULL;
  int64_t span, numel;
  size_t bytes;
  int32_t index;
  if (check_dtype(fn, dtype) ||
      aotrun_shape_check(fn, ndim, sizes, strides, &span, &numel) ||
      aotrun_span_bytes(fn, span, 0, dtype, &bytes) ||
      check_device(fn, device_type, device_index, &index))
    return AOTI_TORCH_FAILURE;
  aotrun_lend_ticket ticket;
  aotrun_lend_next(dtype, device_type, index, ndim, sizes, strides, pinned,
                   bytes, &ticket);
  aotrun_storage *s;
  if (ticket.data != NULL
          ? aotrun_storage_lend(fn, ticket.data, bytes, device_type, index,
                                ticket.live, &s)
          : aotrun_storage_new(fn, device_type, index, bytes, pinned, &s))
    return AOTI_TORCH_FAILURE;
  aotrun_lend_stamp(s, &ticket);
  AOTITorchError err = aotrun_tensor_new(fn, s, ndim, sizes, strides, 0, dtype, ret);
  aotrun_storage_release(s);
  return err;
}

AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t *sizes,
                                        const int64_t *strides, int32_t dtype,
                                        int32_t device_type,
                                        int32_t device_index,
                                        AtenTensorHandle *ret) {
  return empty_strided("aoti_torch_empty_strided", ndim, sizes, strides, dtype,
                       device_type, device_index, 0, ret);
}

AOTITorchError aoti_torch_empty_strided_pinned(
    int64_t ndim, const int64_t *sizes, const int64_t *strides, int32_t dtype,
    int32_t device_type, int32_t device_index, AtenTensorHandle *ret) {
  return empty_strided("aoti_torch_empty_strided_pinned", ndim, sizes, strides,
                       dtype, device_type, device_index, 1, ret);
}

static AOTITorchError from_blob(const char *fn, void *data, int64_t ndim,
                                const int64_t *sizes, const int64_t *strides,
                                int64_t offset, int32_t dtype,
                                int32_t device_type, int32_t device_index,
                                AtenTensorHandle *ret) {
  if (!ret) return aotrun_shim_fail("%s: ret is NULL", fn);
  *ret = NULL;
  int64_t span, numel;
  size_t bytes;
  int32_t index;
  if (check_dtype(fn, dtype) ||
      aotrun_shape_check(fn, ndim, sizes, strides, &span, &numel) ||
      aotrun_span_bytes(fn, span, offset, dtype, &bytes) ||
      check_device(fn, device_type, device_index, &index))
    return AOTI_TORCH_FAILURE;
  if (!data && span > 0)
    return aotrun_shim_fail("%s: data is NULL for a tensor of %lld elements", fn,
                            (long long)numel);
  aotrun_storage *s;
  if (aotrun_storage_borrow(fn, data, bytes, device_type, index, &s))
    return AOTI_TORCH_FAILURE;
  AOTITorchError err =
      aotrun_tensor_new(fn, s, ndim, sizes, strides, offset, dtype, ret);
  aotrun_storage_release(s);
  return err;
}

AOTITorchError aoti_torch_create_tensor_from_blob(
    void *data, int64_t ndim, const int64_t *sizes, const int64_t *strides,
    int64_t storage_offset, int32_t dtype, int32_t device_type,
    int32_t device_index, AtenTensorHandle *ret) {
  return from_blob("aoti_torch_create_tensor_from_blob", data, ndim, sizes,
                   strides, storage_offset, dtype, device_type, device_index,
                   ret);
}

AOTITorchError aoti_torch_create_tensor_from_blob_v2(
    void *data, int64_t ndim, const int64_t *sizes, const int64_t *strides,
    int64_t storage_offset, int32_t dtype, int32_t device_type,
    int32_t device_index, AtenTensorHandle *ret, int32_t layout,
    const uint8_t *opaque_metadata, int64_t opaque_metadata_size) {
  static const char fn[] = "aoti_torch_create_tensor_from_blob_v2";
  /* Opaque metadata only describes mkldnn tensors. */
  (void)opaque_metadata;
  (void)opaque_metadata_size;
  if (ret) *ret = NULL;
  if (layout != AOTRUN_LAYOUT_STRIDED)
    return aotrun_shim_fail("%s: layout %d is not supported (only strided, %d)",
                            fn, (int)layout, AOTRUN_LAYOUT_STRIDED);
  return from_blob(fn, data, ndim, sizes, strides, storage_offset, dtype,
                   device_type, device_index, ret);
}

AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch_new_uninitialized_tensor";
  if (!ret) return aotrun_shim_fail("%s: ret is NULL", fn);
  return aotrun_tensor_new(fn, NULL, 0, NULL, NULL, 0, AOTRUN_DT_FLOAT32, ret);
}

AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig,
                                            AtenTensorHandle *ret) {
  static const char fn[] = "aoti_torch_new_tensor_handle";
  if (!ret) return aotrun_shim_fail("%s: new_handle is NULL", fn);
  *ret = NULL;
  if (!orig) return aotrun_shim_fail("%s: orig_handle is NULL", fn);
  return aotrun_tensor_new_ref(fn, orig->impl, ret);
}

AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle t) {
  if (!t) return AOTI_TORCH_SUCCESS;
  aotrun_tensor_impl_release(t->impl);
  free(t);
  return AOTI_TORCH_SUCCESS;
}
