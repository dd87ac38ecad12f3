/* fallback_temp.c: scratch tensors and strided copies of fallback ops. */
#include "shim_lib/fallback/fallback_temp.h"

#include "shim_lib/fallback/fallback_kernels.h"

void aotrun_fb_temps_init(aotrun_fb_temps *t, const char *op, int32_t device) {
  t->op = op;
  t->device = device;
  t->count = 0;
}

AOTITorchError aotrun_fb_temp_alloc(aotrun_fb_temps *t, int32_t dtype,
                                    int64_t ndim, const int64_t *sizes,
                                    void **data) {
  if (t->count == AOTRUN_FB_MAX_TEMPS)
    return aotrun_shim_fail("%s: internal error: more than %d scratch tensors",
                            t->op, AOTRUN_FB_MAX_TEMPS);
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(sizes, ndim, strides);
  AtenTensorHandle h = NULL;
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype,
                               AOTRUN_FB_DEVICE_CUDA, t->device,
                               &h) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate scratch memory on cuda:%d: %s",
                            t->op, (int)t->device, aotrun_shim_last_error());
  t->handles[t->count++] = h;
  void *p = NULL;
  if (aoti_torch_get_data_ptr(h, &p) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot read a scratch tensor's data: %s",
                            t->op, aotrun_shim_last_error());
  *data = p;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_temp_bytes(aotrun_fb_temps *t, size_t bytes,
                                    void **data) {
  int64_t n = bytes > 0 ? (int64_t)bytes : 1;
  return aotrun_fb_temp_alloc(t, AOTRUN_FB_UINT8, 1, &n, data);
}

void aotrun_fb_temps_release(aotrun_fb_temps *t) {
  /* Newest first; delete never fails (DESIGN.md §2.4). */
  while (t->count > 0) aoti_torch_delete_tensor_object(t->handles[--t->count]);
}

AOTITorchError aotrun_fb_copy(const aotrun_fb_temps *t, const char *what,
                              void *dst, const int64_t *dst_strides,
                              const void *src, const int64_t *src_strides,
                              const int64_t *sizes, int64_t ndim,
                              size_t elem_size, cudaStream_t stream) {
  aotrun_fb_copy_desc d;
  d.ndim = 0;
  for (int64_t k = 0; k < ndim; k++) {
    if (sizes[k] == 0) return AOTI_TORCH_SUCCESS;
    if (sizes[k] == 1) continue; /* fewer dims, less index math */
    d.sizes[d.ndim] = sizes[k];
    d.src_strides[d.ndim] = src_strides[k];
    d.dst_strides[d.ndim] = dst_strides[k];
    d.ndim++;
  }
  cudaError_t e = aotrun_fb_strided_copy(dst, src, &d, elem_size, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: copying %s failed: %s", t->op, what,
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_contiguous_copy(aotrun_fb_temps *t, const char *what,
                                         const void *src,
                                         const int64_t *src_strides,
                                         const int64_t *sizes, int64_t ndim,
                                         int32_t dtype, size_t elem_size,
                                         cudaStream_t stream, void **data) {
  AOTITorchError err = aotrun_fb_temp_alloc(t, dtype, ndim, sizes, data);
  if (err != AOTI_TORCH_SUCCESS) return err;
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(sizes, ndim, strides);
  return aotrun_fb_copy(t, what, *data, strides, src, src_strides, sizes, ndim,
                        elem_size, stream);
}

AOTITorchError aotrun_fb_sort(aotrun_fb_temps *t, const char *what,
                              const aotrun_fb_sort_pairs_args *a,
                              cudaStream_t stream) {
  if (a->n == 0) return AOTI_TORCH_SUCCESS;
  size_t bytes = 0;
  cudaError_t e = aotrun_fb_radix_sort_pairs(NULL, &bytes, a, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: sizing the radix sort of %s failed: %s",
                            t->op, what, cudaGetErrorString(e));
  void *temp = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(t, bytes, &temp);
  if (err != AOTI_TORCH_SUCCESS) return err;
  e = aotrun_fb_radix_sort_pairs(temp, &bytes, a, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the radix sort of %s failed: %s", t->op,
                            what, cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}
