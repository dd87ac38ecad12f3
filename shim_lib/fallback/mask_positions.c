/* mask_positions.c: see mask_positions.h. */
#include "shim_lib/fallback/mask_positions.h"

int aotrun_fb_nonzero_test(int32_t dtype, int32_t *elem_size,
                           uint64_t *nz_bits) {
  switch (dtype) {
    case 0:  /* uint8 */
    case 1:  /* int8 */
    case 11: /* bool */
    case 25: /* float8_e5m2fnuz: 0x80 is NaN, so every set bit counts */
    case 26: /* float8_e4m3fnuz */
      *elem_size = 1, *nz_bits = 0xffu;
      return 1;
    case 23: /* float8_e5m2 */
    case 24: /* float8_e4m3fn */
      *elem_size = 1, *nz_bits = 0x7fu;
      return 1;
    case 2:  /* int16 */
    case 27: /* uint16 */
      *elem_size = 2, *nz_bits = 0xffffu;
      return 1;
    case 5:  /* float16 */
    case 15: /* bfloat16 */
      *elem_size = 2, *nz_bits = 0x7fffu;
      return 1;
    case 3:  /* int32 */
    case 28: /* uint32 */
      *elem_size = 4, *nz_bits = 0xffffffffu;
      return 1;
    case 6: /* float32 */
      *elem_size = 4, *nz_bits = 0x7fffffffu;
      return 1;
    case 8: /* complex32: two float16 */
      *elem_size = 4, *nz_bits = 0x7fff7fffu;
      return 1;
    case 4:  /* int64 */
    case 29: /* uint64 */
      *elem_size = 8, *nz_bits = ~(uint64_t)0;
      return 1;
    case 7: /* float64 */
      *elem_size = 8, *nz_bits = 0x7fffffffffffffffull;
      return 1;
    case 9: /* complex64: two float32 */
      *elem_size = 8, *nz_bits = 0x7fffffff7fffffffull;
      return 1;
    case 10: /* complex128: two float64, each word tested */
      *elem_size = 16, *nz_bits = 0x7fffffffffffffffull;
      return 1;
    default:
      return 0;
  }
}

static AOTITorchError cuda_fail(const aotrun_fb_temps *t, const char *what,
                                const char *step, cudaError_t e) {
  return aotrun_shim_fail("%s: %s %s failed: %s", t->op, step, what,
                          cudaGetErrorString(e));
}

AOTITorchError aotrun_fb_mask_op_bytes(const aotrun_fb_temps *t,
                                       const char *what, int kind,
                                       const aotrun_fb_mask_args *a,
                                       cudaStream_t stream, size_t *bytes) {
  *bytes = 0;
  cudaError_t e = aotrun_fb_mask_run(kind, NULL, bytes, a, stream);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                          : cuda_fail(t, what, "sizing the scan of", e);
}

AOTITorchError aotrun_fb_mask_op_run(const aotrun_fb_temps *t,
                                     const char *what, int kind,
                                     const aotrun_fb_mask_args *a,
                                     void *scratch, size_t bytes,
                                     cudaStream_t stream) {
  cudaError_t e = aotrun_fb_mask_run(kind, scratch, &bytes, a, stream);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                          : cuda_fail(t, what, "the scan of", e);
}

AOTITorchError aotrun_fb_mask_op(aotrun_fb_temps *t, const char *what,
                                 int kind, const aotrun_fb_mask_args *a,
                                 cudaStream_t stream) {
  size_t bytes = 0;
  void *scratch = NULL;
  AOTITorchError err = aotrun_fb_mask_op_bytes(t, what, kind, a, stream,
                                               &bytes);
  if (!err) err = aotrun_fb_temp_bytes(t, bytes, &scratch);
  if (!err) err = aotrun_fb_mask_op_run(t, what, kind, a, scratch, bytes,
                                        stream);
  return err;
}

AOTITorchError aotrun_fb_dense_or_copy(const aotrun_fb_temps *t,
                                       const char *what, const void *src,
                                       const int64_t *sizes,
                                       const int64_t *strides, int64_t ndim,
                                       size_t elem_size, void *dst,
                                       cudaStream_t stream,
                                       const void **data) {
  if (aotrun_fb_is_contiguous(sizes, strides, ndim)) {
    *data = src;
    return AOTI_TORCH_SUCCESS;
  }
  int64_t dense[AOTRUN_FB_MAX_DIMS];
  aotrun_fb_contiguous_strides(sizes, ndim, dense);
  *data = dst;
  return aotrun_fb_copy(t, what, dst, dense, src, strides, sizes, ndim,
                        elem_size, stream);
}

AOTITorchError aotrun_fb_read_counts(const char *op, const int64_t *d_counts,
                                     int n, int64_t *host,
                                     cudaStream_t stream) {
  cudaError_t e = cudaMemcpyAsync(host, d_counts, sizeof(int64_t) * (size_t)n,
                                  cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess)
    return aotrun_shim_fail("%s: reading the True count back failed: %s", op,
                            cudaGetErrorString(e));
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_temp_blocks(aotrun_fb_temps *t, int n,
                                     const size_t *bytes, void **blocks) {
  size_t total = 0, off[AOTRUN_FB_MAX_DIMS * 2];
  if (n > AOTRUN_FB_MAX_DIMS * 2)
    return aotrun_shim_fail("%s: internal error: %d scratch blocks", t->op, n);
  for (int i = 0; i < n; i++) {
    off[i] = total;
    total += (bytes[i] + 255) & ~(size_t)255;
  }
  void *base = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(t, total, &base);
  if (err) return err;
  for (int i = 0; i < n; i++) blocks[i] = (char *)base + off[i];
  return AOTI_TORCH_SUCCESS;
}
