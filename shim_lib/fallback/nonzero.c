/* nonzero.c: aoti_torch_cuda_nonzero: the coordinates of self's non-zero
 * elements (NaN counts, -0.0 does not), int64 [count, ndim] with ATen's
 * CUDA layout: a contiguous [ndim, count] transposed, i.e. strides
 * (1, max(count, 1)). CUB counts them (the count is read back, so the op
 * refuses to run inside a capture), selects their flat positions straight
 * into column 0, and one kernel spreads those into coordinates. */
#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/mask_positions.h"

static const char kOp[] = "aoti_torch_cuda_nonzero";

typedef struct nz_input {
  aotrun_fb_tensor self;
  int32_t elem_size;
  uint64_t nz_bits;
  int64_t n;
} nz_input;

static AOTITorchError read_args(AtenTensorHandle self, nz_input *in) {
  AOTITorchError err = aotrun_fb_tensor_read(kOp, "self", self, &in->self);
  if (!err) err = aotrun_fb_require_cuda(kOp, &in->self, -1, NULL);
  if (err) return err;
  if (!aotrun_fb_nonzero_test(in->self.dtype, &in->elem_size, &in->nz_bits)) {
    char buf[24];
    return aotrun_shim_fail("%s: 'self' has dtype %s, which nonzero does not "
                            "support",
                            kOp, aotrun_fb_dtype_name(in->self.dtype, buf));
  }
  int overflow = 0;
  in->n = aotrun_fb_numel(in->self.sizes, in->self.ndim, &overflow);
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError make_result(const nz_input *in, int64_t count,
                                  AtenTensorHandle *result, int64_t **data) {
  int64_t sizes[2] = {count, in->self.ndim};
  int64_t strides[2] = {1, count > 1 ? count : 1};
  if (aoti_torch_empty_strided(2, sizes, strides, AOTRUN_FB_INT64,
                               AOTRUN_FB_DEVICE_CUDA, in->self.device_index,
                               result) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot allocate the result: %s", kOp,
                            aotrun_shim_last_error());
  void *p = NULL;
  if (aoti_torch_get_data_ptr(*result, &p) != AOTI_TORCH_SUCCESS)
    return aotrun_shim_fail("%s: cannot read the result's data", kOp);
  *data = (int64_t *)p;
  return AOTI_TORCH_SUCCESS;
}

static AOTITorchError run(const nz_input *in, aotrun_fb_temps *temps,
                          cudaStream_t stream, AtenTensorHandle *ret0) {
  const aotrun_fb_tensor *s = &in->self;
  int64_t count = 0;
  aotrun_fb_mask_args a = {0};
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (in->n > 0) {
    int dense = aotrun_fb_is_contiguous(s->sizes, s->strides, s->ndim);
    size_t sizes[2] = {sizeof(int64_t),
                       dense ? 0 : (size_t)in->n * (size_t)in->elem_size};
    void *b[2];
    err = aotrun_fb_temp_blocks(temps, 2, sizes, b);
    if (!err)
      err = aotrun_fb_dense_or_copy(temps, "'self'", s->data, s->sizes,
                                    s->strides, s->ndim, s->elem_size, b[1],
                                    stream, &a.data);
    a.elem_size = in->elem_size;
    a.nz_bits = in->nz_bits;
    a.n = in->n;
    a.count = (int64_t *)b[0];
    if (!err) err = aotrun_fb_mask_op(temps, "'self'", AOTRUN_FB_MASK_COUNT,
                                      &a, stream);
    if (!err) err = aotrun_fb_read_counts(kOp, a.count, 1, &count, stream);
    if (err) return err;
  }
  AtenTensorHandle result = NULL;
  int64_t *out = NULL;
  err = make_result(in, count, &result, &out);
  if (!err && count > 0 && s->ndim > 0) {
    a.out = out;
    err = aotrun_fb_mask_op(temps, "'self'", AOTRUN_FB_MASK_POSITIONS, &a,
                            stream);
    if (!err) {
      cudaError_t e = aotrun_fb_nonzero_coords(out, count, count, s->sizes,
                                               (int32_t)s->ndim, stream);
      if (e != cudaSuccess)
        err = aotrun_shim_fail("%s: the coordinate kernel failed: %s", kOp,
                               cudaGetErrorString(e));
    }
  }
  if (err) {
    aoti_torch_delete_tensor_object(result);
    return err;
  }
  *ret0 = result;
  return AOTI_TORCH_SUCCESS;
}

AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_nonzero(AtenTensorHandle self,
                                                       AtenTensorHandle *ret0) {
  if (ret0 == NULL)
    return aotrun_shim_fail("%s: the result pointer 'ret0' is NULL", kOp);
  *ret0 = NULL;
  nz_input in;
  AOTITorchError err = read_args(self, &in);
  if (!err) err = aotrun_shim_refuse_if_capturing(kOp);
  if (err) return err;
  aotrun_fb_device_scope scope;
  err = aotrun_fb_device_enter(kOp, in.self.device_index, &scope);
  if (err) return err;
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  aotrun_fb_temps temps;
  aotrun_fb_temps_init(&temps, kOp, in.self.device_index);
  err = run(&in, &temps, stream, ret0);
  aotrun_fb_temps_release(&temps);
  aotrun_fb_device_leave(&scope);
  return err;
}
