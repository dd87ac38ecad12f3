/* masked_scatter.c: aoti_torch_cuda_masked_scatter(self, mask, source):
 * a contiguous tensor of the broadcast shape of self and the bool mask
 * (ATen: expand both, clone contiguous, masked_scatter_), equal to self
 * except that its k-th True position (row-major) takes source's k-th
 * element (source read flat, row-major). The ranks come from an exclusive
 * scan of the mask, so nothing synchronises and the op captures; a source
 * with fewer elements than the True count is reported through the device
 * error slot (ATen asserts on the device) and the positions past its end
 * keep self's value. */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/index_tensor.h"
#include "shim_lib/fallback/mask_positions.h"
#include "shim_lib/fallback/masked_write.h"
#include "shim_lib/fallback/tensor_layout.h"

static const char kOp[] = "aoti_torch_cuda_masked_scatter";
static const char kSource[] = "source";

typedef struct scatter_args {
  aotrun_fb_tensor self, mask, source;
  int64_t ndim;
  int64_t sizes[AOTRUN_FB_MAX_DIMS]; /* broadcast shape */
  int64_t self_strides[AOTRUN_FB_MAX_DIMS];
  int64_t mask_strides[AOTRUN_FB_MAX_DIMS];
  int64_t numel, source_numel;
} scatter_args;

static AOTITorchError read_args(AtenTensorHandle self, AtenTensorHandle mask,
                                AtenTensorHandle source, scatter_args *a) {
  char buf[24];
  AOTITorchError err = aotrun_fb_tensor_read(kOp, "self", self, &a->self);
  if (!err) err = aotrun_fb_require_cuda(kOp, &a->self, -1, NULL);
  if (!err && a->self.elem_size == 0)
    err = aotrun_shim_fail("%s: 'self' has unsupported dtype %s", kOp,
                           aotrun_fb_dtype_name(a->self.dtype, buf));
  if (!err) err = aotrun_fb_tensor_read(kOp, "mask", mask, &a->mask);
  if (!err)
    err = aotrun_fb_require_cuda(kOp, &a->mask, a->self.device_index, "self");
  if (!err && a->mask.dtype != AOTRUN_FB_BOOL)
    err = aotrun_shim_fail("%s: 'mask' has dtype %s; masked_scatter needs a "
                           "bool mask",
                           kOp, aotrun_fb_dtype_name(a->mask.dtype, buf));
  if (!err) err = aotrun_fb_tensor_read(kOp, "source", source, &a->source);
  if (!err)
    err = aotrun_fb_require_cuda(kOp, &a->source, a->self.device_index,
                                 "self");
  if (!err) err = aotrun_fb_require_same_dtype(kOp, &a->source, &a->self);
  return err;
}

static AOTITorchError broadcast(scatter_args *a) {
  const aotrun_fb_tensor *s = &a->self, *m = &a->mask;
  a->ndim = 0;
  char x[128], y[128];
  if (aotrun_fb_broadcast_into(&a->ndim, a->sizes, m->sizes, m->ndim) != 0 ||
      aotrun_fb_broadcast_into(&a->ndim, a->sizes, s->sizes, s->ndim) != 0)
    return aotrun_shim_fail(
        "%s: shape mismatch: 'mask' of shape %s and 'self' of shape %s do not "
        "broadcast",
        kOp, aotrun_fb_shape_str(m->sizes, m->ndim, x, sizeof x),
        aotrun_fb_shape_str(s->sizes, s->ndim, y, sizeof y));
  aotrun_fb_expand_strides(s->sizes, s->strides, s->ndim, a->sizes, a->ndim,
                           a->self_strides);
  aotrun_fb_expand_strides(m->sizes, m->strides, m->ndim, a->sizes, a->ndim,
                           a->mask_strides);
  int overflow = 0;
  a->numel = aotrun_fb_numel(a->sizes, a->ndim, &overflow);
  a->source_numel =
      aotrun_fb_numel(a->source.sizes, a->source.ndim, &overflow);
  return AOTI_TORCH_SUCCESS;
}

/* flags (dense mask), ranks, dense source. */
typedef struct scatter_buffers {
  const void *flags, *source;
  void *ranks;
  int rank_bytes;
} scatter_buffers;

static AOTITorchError prepare(const scatter_args *a, aotrun_fb_temps *temps,
                              cudaStream_t stream, scatter_buffers *bu) {
  const aotrun_fb_tensor *src = &a->source;
  bu->rank_bytes = a->numel <= INT32_MAX ? 4 : 8;
  int src_dense = aotrun_fb_is_contiguous(src->sizes, src->strides, src->ndim);
  size_t sizes[3] = {(size_t)a->numel,
                     (size_t)a->numel * (size_t)bu->rank_bytes,
                     src_dense ? 0 : (size_t)a->source_numel * src->elem_size};
  void *b[3];
  AOTITorchError err = aotrun_fb_temp_blocks(temps, 3, sizes, b);
  if (!err)
    err = aotrun_fb_dense_or_copy(temps, "'mask'", a->mask.data, a->sizes,
                                  a->mask_strides, a->ndim, 1, b[0], stream,
                                  &bu->flags);
  if (!err)
    err = aotrun_fb_dense_or_copy(temps, "'source'", src->data, src->sizes,
                                  src->strides, src->ndim, src->elem_size,
                                  b[2], stream, &bu->source);
  if (err) return err;
  bu->ranks = b[1];
  aotrun_fb_mask_args m = {0};
  m.flags = (const uint8_t *)bu->flags;
  m.rank_bytes = bu->rank_bytes;
  m.n = a->numel;
  m.out = bu->ranks;
  return aotrun_fb_mask_op(temps, "the mask", AOTRUN_FB_MASK_RANKS, &m, stream);
}

static AOTITorchError scatter(const scatter_args *a, void *out,
                              aotrun_fb_temps *temps, cudaStream_t stream) {
  scatter_buffers bu;
  AOTITorchError err = prepare(a, temps, stream, &bu);
  aotrun_device_error *slot = NULL;
  if (!err) err = aotrun_fb_error_slot(kOp, a->self.device_index, &slot);
  if (err) return err;
  cudaError_t e = aotrun_fb_mask_count_check(
      bu.flags, bu.ranks, bu.rank_bytes, a->numel, a->source_numel, 0, slot,
      (uint64_t)(uintptr_t)kOp, (uint64_t)(uintptr_t)kSource, 0, stream);
  aotrun_fb_masked_write d = {0};
  int32_t nd = (int32_t)a->ndim;
  for (int32_t i = 0; i < nd; i++) {
    d.sizes[i] = a->sizes[i];
    d.self[i] = a->self_strides[i];
  }
  aotrun_fb_contiguous_strides(a->sizes, a->ndim, d.out);
  aotrun_fb_contiguous_strides(a->sizes, a->ndim, d.flags);
  int64_t *const strides[4] = {d.out, d.self, d.values, d.flags};
  aotrun_fb_collapse_dims(&nd, d.sizes, strides, 4);
  d.ndim = nd;
  d.numel = a->numel;
  d.has_self = 1;
  d.rank_stride = 1;
  d.rank_limit = a->source_numel;
  if (e == cudaSuccess)
    e = aotrun_fb_masked_write_run(out, a->self.data, bu.source, bu.flags,
                                   bu.ranks, bu.rank_bytes, a->self.elem_size,
                                   &d, stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: the masked write failed: %s", kOp,
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_masked_scatter(
    AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
    AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  scatter_args a;
  AOTITorchError err = read_args(self, mask, source, &a);
  if (!err) err = broadcast(&a);
  if (err) return err;
  int64_t strides[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(a.sizes, a.ndim, strides);
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, a.self.device_index, &scope);
  if (err) return err;
  AtenTensorHandle result = NULL;
  if (aoti_torch_empty_strided(a.ndim, a.sizes, strides, a.self.dtype,
                               AOTRUN_FB_DEVICE_CUDA, a.self.device_index,
                               &result) != AOTI_TORCH_SUCCESS)
    err = aotrun_shim_fail("%s: cannot allocate the result: %s", kOp,
                           aotrun_shim_last_error());
  void *out = NULL;
  if (!err && aoti_torch_get_data_ptr(result, &out) != AOTI_TORCH_SUCCESS)
    err = aotrun_shim_fail("%s: cannot read the result's data", kOp);
  if (!err && a.numel > 0) {
    cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
    aotrun_fb_temps temps;
    aotrun_fb_temps_init(&temps, kOp, a.self.device_index);
    err = scatter(&a, out, &temps, stream);
    aotrun_fb_temps_release(&temps);
  }
  aotrun_fb_device_leave(&scope);
  if (err) {
    aoti_torch_delete_tensor_object(result);
    return err;
  }
  *ret0 = result;
  return AOTI_TORCH_SUCCESS;
}
