/* copy.c: the strided copy engine (host loops here, device loops in
 * copy_kernels.cu) and the staging needed to cross host<->device. */
#include "shim_lib/copy.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_lib/allocator.h"
#include "shim_lib/copy_kernels.h"
#include "shim_lib/cuda_context.h"
#include "shim_lib/dtype.h"
#include "shim_lib/scalar_convert.h"

aotrun_strided aotrun_strided_of(const aotrun_tensor_impl *t) {
  aotrun_strided s = {aotrun_tensor_data(t), t->dtype, t->device_type,
                      t->device_index, t->ndim, t->sizes, t->strides};
  return s;
}

/* ---- planning ---- */

/* src's strides broadcast to dst's sizes (stride 0 for broadcast dims). */
static AOTITorchError broadcast(const char *fn, const aotrun_strided *dst,
                                const aotrun_strided *src, int64_t *out) {
  if (src->ndim > dst->ndim)
    return aotrun_shim_fail("%s: src has %lld dims, more than dst's %lld", fn,
                            (long long)src->ndim, (long long)dst->ndim);
  int64_t lead = dst->ndim - src->ndim;
  for (int64_t d = 0; d < dst->ndim; d++) {
    int64_t sd = d - lead;
    if (sd < 0 || src->sizes[sd] == 1) {
      out[d] = 0;
    } else if (src->sizes[sd] == dst->sizes[d]) {
      out[d] = src->strides[sd];
    } else {
      return aotrun_shim_fail(
          "%s: src size %lld in dim %lld does not broadcast to dst size %lld "
          "in dim %lld",
          fn, (long long)src->sizes[sd], (long long)sd,
          (long long)dst->sizes[d], (long long)d);
    }
    if (sd >= 0 && src->sizes[sd] == 1 && dst->sizes[d] == 1) out[d] = 0;
  }
  return AOTI_TORCH_SUCCESS;
}

/* Drops size-1 dims and merges dims that are contiguous on both sides, so
 * the loops run over as few dims as possible. */
static void coalesce(aotrun_copy_plan *p, int64_t ndim, const int64_t *sizes,
                     const int64_t *dst_strides, const int64_t *src_strides) {
  int32_t n = 0;
  p->numel = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) { /* inner to outer */
    p->numel *= sizes[d];
    if (sizes[d] == 1) continue;
    if (n > 0 &&
        dst_strides[d] == p->dst_strides[n - 1] * p->sizes[n - 1] &&
        src_strides[d] == p->src_strides[n - 1] * p->sizes[n - 1]) {
      p->sizes[n - 1] *= sizes[d];
      continue;
    }
    p->sizes[n] = sizes[d];
    p->dst_strides[n] = dst_strides[d];
    p->src_strides[n] = src_strides[d];
    n++;
  }
  for (int32_t i = 0; i < n / 2; i++) { /* back to outer-to-inner order */
    int32_t j = n - 1 - i;
    int64_t t;
    t = p->sizes[i]; p->sizes[i] = p->sizes[j]; p->sizes[j] = t;
    t = p->dst_strides[i]; p->dst_strides[i] = p->dst_strides[j]; p->dst_strides[j] = t;
    t = p->src_strides[i]; p->src_strides[i] = p->src_strides[j]; p->src_strides[j] = t;
  }
  p->ndim = n;
}

static int dst_contiguous(const aotrun_copy_plan *p) {
  return p->ndim == 0 || (p->ndim == 1 && p->dst_strides[0] == 1);
}

static int src_contiguous(const aotrun_copy_plan *p) {
  return p->ndim == 0 || (p->ndim == 1 && p->src_strides[0] == 1);
}

/* The same plan with one side replaced by a contiguous buffer. */
static aotrun_copy_plan with_contiguous(const aotrun_copy_plan *p, int dst_side) {
  aotrun_copy_plan q = *p;
  int64_t stride = 1;
  for (int32_t d = q.ndim - 1; d >= 0; d--) {
    if (dst_side) q.dst_strides[d] = stride; else q.src_strides[d] = stride;
    stride *= q.sizes[d];
  }
  return q;
}

/* ---- host loops ---- */

static void cpu_copy(const aotrun_copy_plan *p, char *dst, int32_t dd,
                     const char *src, int32_t sd) {
  size_t di = aotrun_dtype_size(dd), si = aotrun_dtype_size(sd);
  int same = src == NULL || dd == sd;
  if (same && dst_contiguous(p) && (src == NULL || src_contiguous(p))) {
    if (src) memcpy(dst, src, (size_t)p->numel * di);
    else memset(dst, 0, (size_t)p->numel * di);
    return;
  }
  int64_t idx[AOTRUN_COPY_MAX_DIMS] = {0};
  int64_t inner = p->ndim ? p->sizes[p->ndim - 1] : 1;
  int64_t dstep = p->ndim ? p->dst_strides[p->ndim - 1] * (int64_t)di : 0;
  int64_t sstep = p->ndim ? p->src_strides[p->ndim - 1] * (int64_t)si : 0;
  for (int64_t done = 0; done < p->numel; done += inner) {
    int64_t doff = 0, soff = 0;
    for (int32_t d = 0; d + 1 < p->ndim; d++) {
      doff += idx[d] * p->dst_strides[d];
      soff += idx[d] * p->src_strides[d];
    }
    char *dp = dst + doff * (int64_t)di;
    const char *sp = src ? src + soff * (int64_t)si : NULL;
    for (int64_t i = 0; i < inner; i++, dp += dstep) {
      if (!sp) memset(dp, 0, di);
      else if (same) memcpy(dp, sp, di);
      else aotrun_store(dp, dd, aotrun_load(sp, sd));
      if (sp) sp += sstep;
    }
    for (int32_t d = p->ndim - 2; d >= 0; d--) { /* odometer */
      if (++idx[d] < p->sizes[d]) break;
      idx[d] = 0;
    }
  }
}

/* ---- device helpers ---- */

static AOTITorchError dev_alloc(const char *fn, size_t bytes, void *stream,
                                void **out) {
  const aotrun_shim_allocator *a = aotrun_thread_allocator();
  *out = a->alloc(a->ctx, bytes, stream);
  if (!*out)
    return aotrun_shim_fail("%s: cannot allocate a %zu-byte device staging buffer",
                            fn, bytes);
  return AOTI_TORCH_SUCCESS;
}

static void dev_free(void *p, void *stream) {
  if (!p) return;
  const aotrun_shim_allocator *a = aotrun_thread_allocator();
  a->free(a->ctx, p, stream);
}

static AOTITorchError cuda_check(const char *fn, const char *what, cudaError_t e) {
  if (e == cudaSuccess) return AOTI_TORCH_SUCCESS;
  return aotrun_cuda_fail(fn, what, e);
}

static AOTITorchError kernel(const char *fn, void *dst, int32_t dd,
                             const void *src, int32_t sd,
                             const aotrun_copy_plan *p, void *stream) {
  return cuda_check(fn, "the strided copy kernel launch",
                    (cudaError_t)aotrun_cuda_strided_copy(dst, dd, src, sd, p, stream));
}

static AOTITorchError sync(const char *fn, void *stream) {
  return cuda_check(fn, "cudaStreamSynchronize",
                    cudaStreamSynchronize((cudaStream_t)stream));
}

/* Device -> device on one device: one memcpy when both are contiguous in
 * the same dtype, else the kernel. */
static AOTITorchError d2d_same_device(const char *fn, const aotrun_copy_plan *p,
                                      void *dst, int32_t dd, const void *src,
                                      int32_t sd, void *stream) {
  if (dd == sd && dst_contiguous(p) && src_contiguous(p))
    return cuda_check(fn, "cudaMemcpyAsync (device to device)",
                      cudaMemcpyAsync(dst, src, (size_t)p->numel * aotrun_dtype_size(dd),
                                      cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
  return kernel(fn, dst, dd, src, sd, p, stream);
}

/* Host -> device: convert/compact on the host if needed, upload, scatter
 * on the device if dst is strided. */
static AOTITorchError h2d(const char *fn, const aotrun_copy_plan *p,
                          const aotrun_strided *dst, const aotrun_strided *src,
                          int blocking, void *stream) {
  size_t di = aotrun_dtype_size(dst->dtype);
  size_t bytes = (size_t)p->numel * di;
  if (dst->dtype == src->dtype && dst_contiguous(p) && src_contiguous(p)) {
    if (cuda_check(fn, "cudaMemcpyAsync (host to device)",
                   cudaMemcpyAsync(dst->data, src->data, bytes,
                                   cudaMemcpyHostToDevice, (cudaStream_t)stream)))
      return AOTI_TORCH_FAILURE;
    return blocking ? sync(fn, stream) : AOTI_TORCH_SUCCESS;
  }
  char *host = malloc(bytes);
  if (!host) return aotrun_shim_fail("%s: out of host memory (%zu-byte staging)", fn, bytes);
  aotrun_copy_plan to_host = with_contiguous(p, 1);
  cpu_copy(&to_host, host, dst->dtype, src->data, src->dtype);
  void *dev = NULL;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (!dst_contiguous(p)) err = dev_alloc(fn, bytes, stream, &dev);
  if (!err)
    err = cuda_check(fn, "cudaMemcpyAsync (host to device)",
                     cudaMemcpyAsync(dev ? dev : dst->data, host, bytes,
                                     cudaMemcpyHostToDevice, (cudaStream_t)stream));
  if (!err && dev) {
    aotrun_copy_plan scatter = with_contiguous(p, 0);
    err = kernel(fn, dst->data, dst->dtype, dev, dst->dtype, &scatter, stream);
  }
  /* The host staging buffer must outlive the upload. */
  AOTITorchError serr = sync(fn, stream);
  dev_free(dev, stream);
  free(host);
  return err ? err : serr;
}

/* Device -> host: compact on the device if needed, download, then
 * convert/scatter on the host. */
static AOTITorchError d2h(const char *fn, const aotrun_copy_plan *p,
                          const aotrun_strided *dst, const aotrun_strided *src,
                          int blocking, void *stream) {
  size_t si = aotrun_dtype_size(src->dtype);
  size_t bytes = (size_t)p->numel * si;
  if (dst->dtype == src->dtype && dst_contiguous(p) && src_contiguous(p)) {
    if (cuda_check(fn, "cudaMemcpyAsync (device to host)",
                   cudaMemcpyAsync(dst->data, src->data, bytes,
                                   cudaMemcpyDeviceToHost, (cudaStream_t)stream)))
      return AOTI_TORCH_FAILURE;
    return blocking ? sync(fn, stream) : AOTI_TORCH_SUCCESS;
  }
  void *dev = NULL;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (!src_contiguous(p)) {
    aotrun_copy_plan gather = with_contiguous(p, 1);
    err = dev_alloc(fn, bytes, stream, &dev);
    if (!err) err = kernel(fn, dev, src->dtype, src->data, src->dtype, &gather, stream);
  }
  char *host = err ? NULL : malloc(bytes);
  if (!err && !host) err = aotrun_shim_fail("%s: out of host memory (%zu-byte staging)", fn, bytes);
  if (!err)
    err = cuda_check(fn, "cudaMemcpyAsync (device to host)",
                     cudaMemcpyAsync(host, dev ? dev : src->data, bytes,
                                     cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  if (!err) err = sync(fn, stream);
  dev_free(dev, stream);
  if (!err) {
    aotrun_copy_plan from_host = with_contiguous(p, 0);
    cpu_copy(&from_host, dst->data, dst->dtype, host, src->dtype);
  }
  free(host);
  return err;
}

/* Device -> other device: compact on the source device, peer-copy into a
 * staging buffer on the destination device, scatter there. Synchronous
 * (rare in models; keeps the cross-stream ordering obvious). */
static AOTITorchError d2d_cross_device(const char *fn, const aotrun_copy_plan *p,
                                       const aotrun_strided *dst,
                                       const aotrun_strided *src) {
  size_t si = aotrun_dtype_size(src->dtype);
  size_t bytes = (size_t)p->numel * si;
  void *sstream = aotrun_cuda_stream_for(src->device_index);
  void *dstream = aotrun_cuda_stream_for(dst->device_index);
  aotrun_device_scope scope;
  void *packed = NULL, *landed = NULL;
  if (aotrun_cuda_device_enter(fn, src->device_index, &scope)) return AOTI_TORCH_FAILURE;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (!src_contiguous(p)) {
    aotrun_copy_plan gather = with_contiguous(p, 1);
    err = dev_alloc(fn, bytes, sstream, &packed);
    if (!err) err = kernel(fn, packed, src->dtype, src->data, src->dtype, &gather, sstream);
  }
  if (!err) err = sync(fn, sstream); /* src ready before another stream reads it */
  aotrun_cuda_device_exit(&scope);
  if (!err && !aotrun_cuda_device_enter(fn, dst->device_index, &scope)) {
    err = dev_alloc(fn, bytes, dstream, &landed);
    if (!err)
      err = cuda_check(fn, "cudaMemcpyPeerAsync",
                       cudaMemcpyPeerAsync(landed, dst->device_index,
                                           packed ? packed : src->data,
                                           src->device_index, bytes,
                                           (cudaStream_t)dstream));
    if (!err) {
      aotrun_copy_plan scatter = with_contiguous(p, 0);
      err = kernel(fn, dst->data, dst->dtype, landed, src->dtype, &scatter, dstream);
    }
    AOTITorchError serr = sync(fn, dstream); /* before packed is freed */
    if (!err) err = serr;
    dev_free(landed, dstream);
    aotrun_cuda_device_exit(&scope);
  } else if (!err) {
    err = AOTI_TORCH_FAILURE;
  }
  if (packed && !aotrun_cuda_device_enter(fn, src->device_index, &scope)) {
    dev_free(packed, sstream);
    aotrun_cuda_device_exit(&scope);
  }
  return err;
}

static AOTITorchError check_pair(const char *fn, const aotrun_strided *dst,
                                 const aotrun_strided *src) {
  if (dst->dtype != src->dtype &&
      !(aotrun_dtype_is_real(dst->dtype) && aotrun_dtype_is_real(src->dtype)))
    return aotrun_shim_fail("%s: converting %s to %s is not supported", fn,
                            aotrun_dtype_name(src->dtype),
                            aotrun_dtype_name(dst->dtype));
  const aotrun_strided *sides[2] = {dst, src};
  for (int i = 0; i < 2; i++)
    if (sides[i]->device_type != AOTRUN_DEV_CPU &&
        sides[i]->device_type != AOTRUN_DEV_CUDA)
      return aotrun_shim_fail("%s: %s is on device type %s (cpu and cuda are supported)",
                              fn, i ? "src" : "dst",
                              aotrun_device_name(sides[i]->device_type));
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_copy(const char *fn, const aotrun_strided *dst,
                           const aotrun_strided *src, int blocking) {
  int64_t bstrides[AOTRUN_COPY_MAX_DIMS];
  aotrun_copy_plan plan;
  if (check_pair(fn, dst, src) || broadcast(fn, dst, src, bstrides))
    return AOTI_TORCH_FAILURE;
  coalesce(&plan, dst->ndim, dst->sizes, dst->strides, bstrides);
  if (plan.numel == 0) return AOTI_TORCH_SUCCESS;
  for (int32_t d = 0; d < plan.ndim; d++)
    if (plan.dst_strides[d] == 0)
      return aotrun_shim_fail(
          "%s: dst has stride 0 over %lld elements: several elements would "
          "be written to one memory location",
          fn, (long long)plan.sizes[d]);
  int dst_cuda = dst->device_type == AOTRUN_DEV_CUDA;
  int src_cuda = src->device_type == AOTRUN_DEV_CUDA;
  if (!dst_cuda && !src_cuda) {
    cpu_copy(&plan, dst->data, dst->dtype, src->data, src->dtype);
    return AOTI_TORCH_SUCCESS;
  }
  int cross = dst_cuda && src_cuda && dst->device_index != src->device_index;
  if (dst_cuda != src_cuda || cross) {
    /* Host staging and synchronization cannot be captured. */
    char what[160];
    snprintf(what, sizeof what, "%s between %s and %s", fn,
             src_cuda ? "cuda" : "cpu", dst_cuda ? "cuda" : "cpu");
    if (aotrun_shim_refuse_if_capturing(what)) return AOTI_TORCH_FAILURE;
  }
  if (cross) return d2d_cross_device(fn, &plan, dst, src);
  int32_t device = dst_cuda ? dst->device_index : src->device_index;
  void *stream = aotrun_cuda_stream_for(device);
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, device, &scope)) return AOTI_TORCH_FAILURE;
  AOTITorchError err;
  if (dst_cuda && src_cuda)
    err = d2d_same_device(fn, &plan, dst->data, dst->dtype, src->data, src->dtype, stream);
  else if (dst_cuda)
    err = h2d(fn, &plan, dst, src, blocking, stream);
  else
    err = d2h(fn, &plan, dst, src, blocking, stream);
  aotrun_cuda_device_exit(&scope);
  return err;
}

AOTITorchError aotrun_zero(const char *fn, const aotrun_strided *dst) {
  int64_t zeros[AOTRUN_COPY_MAX_DIMS] = {0};
  aotrun_copy_plan plan;
  if (dst->device_type != AOTRUN_DEV_CPU && dst->device_type != AOTRUN_DEV_CUDA)
    return aotrun_shim_fail("%s: device type %s is not supported", fn,
                            aotrun_device_name(dst->device_type));
  coalesce(&plan, dst->ndim, dst->sizes, dst->strides, zeros);
  if (plan.numel == 0) return AOTI_TORCH_SUCCESS;
  if (dst->device_type == AOTRUN_DEV_CPU) {
    cpu_copy(&plan, dst->data, dst->dtype, NULL, dst->dtype);
    return AOTI_TORCH_SUCCESS;
  }
  void *stream = aotrun_cuda_stream_for(dst->device_index);
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, dst->device_index, &scope)) return AOTI_TORCH_FAILURE;
  AOTITorchError err;
  if (dst_contiguous(&plan))
    err = cuda_check(fn, "cudaMemsetAsync",
                     cudaMemsetAsync(dst->data, 0,
                                     (size_t)plan.numel * aotrun_dtype_size(dst->dtype),
                                     (cudaStream_t)stream));
  else
    err = kernel(fn, dst->data, dst->dtype, NULL, dst->dtype, &plan, stream);
  aotrun_cuda_device_exit(&scope);
  return err;
}
