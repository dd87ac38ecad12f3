/* index_tensor.c: aoti_torch_cuda_index_Tensor, i.e. eager torch's
 * `self[None, ..., index]` for one bool mask or one integer index tensor
 * (see index_tensor.h for what is supported).
 *
 * A mask's True count decides the result's shape, so it is read back to the
 * host: the op refuses to run inside a CUDA graph capture (the backend then
 * retries without a graph). The selected positions come from CUB
 * DeviceSelect::Flagged; a gather kernel then copies the picked rows. */
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/fallback_kernels.h"
#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/index_tensor.h"

static const char kOp[] = "aoti_torch_cuda_index_Tensor";

/* The picked positions of one call, in device memory. */
typedef struct picks {
  const int64_t *sel;
  int64_t count;
} picks;

/* Index tensor as contiguous device data (in place or a scratch copy). */
static AOTITorchError contiguous_index(aotrun_fb_temps *temps,
                                       const aotrun_fb_tensor *ix,
                                       cudaStream_t stream, const void **data) {
  if (aotrun_fb_is_contiguous(ix->sizes, ix->strides, ix->ndim)) {
    *data = ix->data;
    return AOTI_TORCH_SUCCESS;
  }
  void *copy = NULL;
  AOTITorchError err = aotrun_fb_contiguous_copy(
      temps, ix->name, ix->data, ix->strides, ix->sizes, ix->ndim, ix->dtype,
      ix->elem_size, stream, &copy);
  *data = copy;
  return err;
}

static AOTITorchError cuda_fail(const char *what, cudaError_t e) {
  return aotrun_shim_fail("%s: %s failed: %s", kOp, what,
                          cudaGetErrorString(e));
}

/* Mask path: positions of the True entries and their count (host sync). */
static AOTITorchError mask_picks(aotrun_fb_temps *temps,
                                 const aotrun_fb_tensor *mask,
                                 cudaStream_t stream, picks *out) {
  int overflow = 0;
  int64_t n = aotrun_fb_numel(mask->sizes, mask->ndim, &overflow);
  out->sel = NULL;
  out->count = 0;
  if (n == 0) return AOTI_TORCH_SUCCESS;
  const void *flags = NULL;
  void *sel = NULL, *num = NULL, *tmp = NULL;
  AOTITorchError err = contiguous_index(temps, mask, stream, &flags);
  if (!err) err = aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &n, &sel);
  int64_t one = 1;
  if (!err) err = aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &one, &num);
  if (err) return err;
  size_t bytes = 0;
  cudaError_t e = aotrun_fb_select_flagged(NULL, &bytes, flags, n, sel, num,
                                           stream);
  if (e != cudaSuccess) return cuda_fail("sizing cub::DeviceSelect::Flagged", e);
  err = aotrun_fb_temp_bytes(temps, bytes, &tmp);
  if (err) return err;
  e = aotrun_fb_select_flagged(tmp, &bytes, flags, n, sel, num, stream);
  if (e != cudaSuccess) return cuda_fail("cub::DeviceSelect::Flagged", e);
  int64_t count = 0;
  e = cudaMemcpyAsync(&count, num, sizeof count, cudaMemcpyDeviceToHost,
                      stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return cuda_fail("reading the mask's True count", e);
  out->sel = sel;
  out->count = count;
  return AOTI_TORCH_SUCCESS;
}

/* Integer path: indices normalised to [0, dim_size); `bad` (2 int64 of
 * device memory) reports an out-of-range index. */
static AOTITorchError integer_picks(aotrun_fb_temps *temps,
                                    const aotrun_fb_tensor *ix,
                                    int64_t dim_size, cudaStream_t stream,
                                    picks *out, int64_t **bad) {
  int overflow = 0;
  int64_t n = aotrun_fb_numel(ix->sizes, ix->ndim, &overflow);
  out->sel = NULL;
  out->count = n;
  *bad = NULL;
  if (n == 0) return AOTI_TORCH_SUCCESS;
  const void *idx = NULL;
  void *sel = NULL, *flag = NULL;
  int64_t two = 2;
  AOTITorchError err = contiguous_index(temps, ix, stream, &idx);
  if (!err) err = aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &n, &sel);
  if (!err) err = aotrun_fb_temp_alloc(temps, AOTRUN_FB_INT64, 1, &two, &flag);
  if (err) return err;
  cudaError_t e = cudaMemsetAsync(flag, 0, 2 * sizeof(int64_t), stream);
  if (e == cudaSuccess)
    e = aotrun_fb_normalize_indices(idx, ix->dtype == AOTRUN_FB_INT32, n,
                                    dim_size, sel, flag, stream);
  if (e != cudaSuccess) return cuda_fail("normalising the integer index", e);
  out->sel = sel;
  *bad = flag;
  return AOTI_TORCH_SUCCESS;
}

/* Result sizes [lead..., picked..., rest...] and the gather description. */
static int64_t result_shape(const aotrun_fb_index_plan *p, const picks *pk,
                            int64_t *sizes, aotrun_fb_gather_desc *d) {
  const aotrun_fb_tensor *s = &p->self;
  int64_t nd = 0;
  memset(d, 0, sizeof *d);
  d->lead_numel = d->rest_numel = 1;
  d->count = pk->count;
  for (int64_t i = 0; i < p->pos; i++) {
    d->lead_sizes[d->lead_ndim] = s->sizes[i];
    d->lead_strides[d->lead_ndim++] = s->strides[i];
    d->lead_numel *= s->sizes[i];
    sizes[nd++] = s->sizes[i];
  }
  for (int64_t i = p->pos; i < p->pos + p->pick_ndim; i++) {
    d->pick_sizes[d->pick_ndim] = s->sizes[i];
    d->pick_strides[d->pick_ndim++] = s->strides[i];
  }
  if (p->is_mask) {
    sizes[nd++] = pk->count;
  } else {
    for (int64_t i = 0; i < p->index.ndim; i++) sizes[nd++] = p->index.sizes[i];
  }
  for (int64_t i = p->pos + p->pick_ndim; i < s->ndim; i++) {
    d->rest_sizes[d->rest_ndim] = s->sizes[i];
    d->rest_strides[d->rest_ndim++] = s->strides[i];
    d->rest_numel *= s->sizes[i];
    sizes[nd++] = s->sizes[i];
  }
  return nd;
}

/* Outside a capture an out-of-range integer index is an error (one sync);
 * inside one it cannot be read back, and such indices read element 0. */
static AOTITorchError check_bad_index(const aotrun_fb_index_plan *p,
                                      const int64_t *bad, cudaStream_t stream) {
  enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (bad == NULL || cudaStreamIsCapturing(stream, &cs) != cudaSuccess ||
      cs != cudaStreamCaptureStatusNone)
    return AOTI_TORCH_SUCCESS;
  int64_t host[2] = {0, 0};
  cudaError_t e = cudaMemcpyAsync(host, bad, sizeof host,
                                  cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return cuda_fail("checking the index bounds", e);
  if (host[0] == 0) return AOTI_TORCH_SUCCESS;
  return aotrun_shim_fail(
      "%s: index %lld in %s is out of bounds for dim %lld of 'self' with "
      "size %lld",
      kOp, (long long)host[1], p->index.name, (long long)p->pos,
      (long long)p->self.sizes[p->pos]);
}

static AOTITorchError run_plan(const aotrun_fb_index_plan *p,
                               aotrun_fb_temps *temps, cudaStream_t stream,
                               AtenTensorHandle *ret0) {
  picks pk;
  int64_t *bad = NULL;
  AOTITorchError err =
      p->is_mask ? mask_picks(temps, &p->index, stream, &pk)
                 : integer_picks(temps, &p->index, p->self.sizes[p->pos],
                                 stream, &pk, &bad);
  if (err) return err;
  int64_t sizes[2 * AOTRUN_FB_MAX_DIMS], strides[2 * AOTRUN_FB_MAX_DIMS];
  aotrun_fb_gather_desc d;
  int64_t nd = result_shape(p, &pk, sizes, &d);
  aotrun_fb_contiguous_strides(sizes, nd, strides);
  AtenTensorHandle result = NULL;
  if (aoti_torch_empty_strided(nd, sizes, strides, p->self.dtype,
                               AOTRUN_FB_DEVICE_CUDA, p->self.device_index,
                               &result) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", kOp,
                            aotrun_shim_last_error());
  void *out = NULL;
  err = aoti_torch_get_data_ptr(result, &out) == AOTI_TORCH_SUCCESS
            ? AOTI_TORCH_SUCCESS
            : aotrun_shim_fail("%s: cannot read the result's data", kOp);
  if (!err) {
    cudaError_t e = aotrun_fb_index_gather(out, p->self.data, pk.sel, &d,
                                           p->self.elem_size, stream);
    if (e != cudaSuccess) err = cuda_fail("the gather kernel", e);
  }
  if (!err) err = check_bad_index(p, bad, stream);
  if (err) {
    aoti_torch_delete_tensor_object(result);
    return err;
  }
  *ret0 = result;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_Tensor(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  aotrun_fb_index_plan plan;
  AOTITorchError err =
      aotrun_fb_index_plan_build(kOp, self, indices, indices_len_, &plan);
  if (err) return err;
  if (plan.is_mask) {
    /* Must fail cleanly inside a capture, before any device work. */
    err = aotrun_shim_refuse_if_capturing(
        "aoti_torch_cuda_index_Tensor (boolean mask)");
    if (err) return err;
  }
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, plan.self.device_index, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, kOp, plan.self.device_index);
  err = run_plan(&plan, &temps, stream, ret0);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}
