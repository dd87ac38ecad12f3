/* cuda_context.c: thread-local current device and streams, the stream and
 * device guards, and the capture check. */
#include "shim_lib/cuda_context.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

/* Per thread, as in libtorch: each host thread runs with its own stream. */
static _Thread_local int32_t tls_device = 0;
static _Thread_local void *tls_streams[AOTRUN_SHIM_MAX_DEVICES];

struct CUDAStreamGuardOpaque {
  int32_t device;
  void *prev_stream;
  int32_t prev_device;
  aotrun_device_scope scope;
};

struct CUDAGuardOpaque {
  int32_t prev_device;
  aotrun_device_scope scope; /* prev = CUDA device before the guard */
};

AOTITorchError aotrun_cuda_fail(const char *fn, const char *what, int err) {
  cudaError_t e = (cudaError_t)err;
  return aotrun_shim_fail("%s: %s failed: %s: %s (%d)", fn, what,
                          cudaGetErrorName(e), cudaGetErrorString(e), err);
}

void *aotrun_shim_current_stream(void) { return tls_streams[tls_device]; }

int32_t aotrun_shim_current_device(void) { return tls_device; }

void *aotrun_cuda_stream_for(int32_t device) {
  if (device < 0 || device >= AOTRUN_SHIM_MAX_DEVICES) return NULL;
  return tls_streams[device];
}

AOTITorchError aotrun_cuda_resolve_device(const char *fn, int32_t device,
                                          int32_t *out) {
  if (device == -1) device = tls_device;
  if (device < 0 || device >= AOTRUN_SHIM_MAX_DEVICES)
    return aotrun_shim_fail("%s: CUDA device index %d is out of range [0, %d)",
                            fn, (int)device, AOTRUN_SHIM_MAX_DEVICES);
  *out = device;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_cuda_device_enter(const char *fn, int32_t device,
                                        aotrun_device_scope *scope) {
  int cur = 0;
  cudaError_t e = cudaGetDevice(&cur);
  scope->prev = cur;
  scope->switched = 0;
  if (e != cudaSuccess) return aotrun_cuda_fail(fn, "cudaGetDevice", e);
  if (cur == device) return AOTI_TORCH_SUCCESS;
  e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    aotrun_shim_fail("%s: cudaSetDevice(%d) failed: %s: %s (%d)", fn,
                     (int)device, cudaGetErrorName(e), cudaGetErrorString(e),
                     (int)e);
    return AOTI_TORCH_FAILURE;
  }
  scope->switched = 1;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_cuda_device_exit(const aotrun_device_scope *scope) {
  if (scope->switched) (void)cudaSetDevice(scope->prev);
}

AOTITorchError aotrun_shim_refuse_if_capturing(const char *what) {
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaError_t e =
      cudaStreamIsCapturing((cudaStream_t)aotrun_shim_current_stream(), &st);
  if (e != cudaSuccess) {
    /* e.g. the legacy stream while another stream captures globally. */
    (void)cudaGetLastError();
    return aotrun_shim_fail(
        "%s: cannot check for a CUDA graph capture: cudaStreamIsCapturing "
        "failed: %s (%d)",
        what, cudaGetErrorName(e), (int)e);
  }
  if (st != cudaStreamCaptureStatusNone)
    return aotrun_shim_fail("%s cannot run inside a CUDA graph capture", what);
  return AOTI_TORCH_SUCCESS;
}

/* ---- stream guard ---- */

AOTITorchError aoti_torch_create_cuda_stream_guard(
    void *stream, int32_t device_index, CUDAStreamGuardHandle *ret) {
  static const char fn[] = "aoti_torch_create_cuda_stream_guard";
  if (!ret) return aotrun_shim_fail("%s: ret_guard is NULL", fn);
  *ret = NULL;
  int32_t dev = 0;
  if (aotrun_cuda_resolve_device(fn, device_index, &dev)) return AOTI_TORCH_FAILURE;
  struct CUDAStreamGuardOpaque *g = malloc(sizeof *g);
  if (!g) return aotrun_shim_fail("%s: out of host memory", fn);
  if (aotrun_cuda_device_enter(fn, dev, &g->scope)) {
    free(g);
    return AOTI_TORCH_FAILURE;
  }
  g->device = dev;
  g->prev_stream = tls_streams[dev];
  g->prev_device = tls_device;
  tls_streams[dev] = stream;
  tls_device = dev;
  *ret = g;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle g) {
  if (!g) return aotrun_shim_fail("aoti_torch_delete_cuda_stream_guard: guard is NULL");
  tls_streams[g->device] = g->prev_stream;
  tls_device = g->prev_device;
  aotrun_cuda_device_exit(&g->scope);
  free(g);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index,
                                                  void **ret_stream) {
  static const char fn[] = "aoti_torch_get_current_cuda_stream";
  if (!ret_stream) return aotrun_shim_fail("%s: ret_stream is NULL", fn);
  int32_t dev = 0;
  if (aotrun_cuda_resolve_device(fn, device_index, &dev)) return AOTI_TORCH_FAILURE;
  *ret_stream = tls_streams[dev];
  return AOTI_TORCH_SUCCESS;
}

/* ---- device guard ---- */

static AOTITorchError guard_set(const char *fn, struct CUDAGuardOpaque *g,
                                int32_t device_index) {
  int32_t dev = 0;
  if (aotrun_cuda_resolve_device(fn, device_index, &dev)) return AOTI_TORCH_FAILURE;
  cudaError_t e = cudaSetDevice(dev);
  if (e != cudaSuccess) {
    return aotrun_shim_fail("%s: cudaSetDevice(%d) failed: %s: %s (%d)", fn,
                            (int)dev, cudaGetErrorName(e),
                            cudaGetErrorString(e), (int)e);
  }
  g->scope.switched = 1;
  tls_device = dev;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index,
                                            CUDAGuardHandle *ret) {
  static const char fn[] = "aoti_torch_create_cuda_guard";
  if (!ret) return aotrun_shim_fail("%s: ret_guard is NULL", fn);
  *ret = NULL;
  int32_t dev = 0;
  if (aotrun_cuda_resolve_device(fn, device_index, &dev)) return AOTI_TORCH_FAILURE;
  struct CUDAGuardOpaque *g = malloc(sizeof *g);
  if (!g) return aotrun_shim_fail("%s: out of host memory", fn);
  if (aotrun_cuda_device_enter(fn, dev, &g->scope)) {
    free(g);
    return AOTI_TORCH_FAILURE;
  }
  g->prev_device = tls_device;
  tls_device = dev;
  *ret = g;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle g,
                                               int32_t device_index) {
  static const char fn[] = "aoti_torch_cuda_guard_set_index";
  if (!g) return aotrun_shim_fail("%s: guard is NULL", fn);
  return guard_set(fn, g, device_index);
}

AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle g) {
  if (!g) return aotrun_shim_fail("aoti_torch_delete_cuda_guard: guard is NULL");
  tls_device = g->prev_device;
  aotrun_cuda_device_exit(&g->scope);
  free(g);
  return AOTI_TORCH_SUCCESS;
}

/* Device-generic spellings: CUDA is the only guarded device here. */
AOTITorchError aoti_torch_create_device_guard(int32_t device_index,
                                              DeviceGuardHandle *ret) {
  return aoti_torch_create_cuda_guard(device_index, (CUDAGuardHandle *)ret);
}

AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle g) {
  return aoti_torch_delete_cuda_guard((CUDAGuardHandle)g);
}

AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle g,
                                                 int32_t device_index) {
  return aoti_torch_cuda_guard_set_index((CUDAGuardHandle)g, device_index);
}

AOTITorchError aoti_torch_get_current_device_index(int32_t *ret) {
  if (!ret) return aotrun_shim_fail("aoti_torch_get_current_device_index: ret_device_index is NULL");
  *ret = tls_device;
  return AOTI_TORCH_SUCCESS;
}

/* A StreamHandle is a small box holding the cudaStream_t. */
struct StreamOpaque {
  void *stream;
};

AOTITorchError aoti_torch_get_current_stream(int32_t device_index,
                                             StreamHandle *ret) {
  static const char fn[] = "aoti_torch_get_current_stream";
  if (!ret) return aotrun_shim_fail("%s: ret_stream is NULL", fn);
  int32_t dev = 0;
  if (aotrun_cuda_resolve_device(fn, device_index, &dev)) return AOTI_TORCH_FAILURE;
  struct StreamOpaque *s = malloc(sizeof *s);
  if (!s) return aotrun_shim_fail("%s: out of host memory", fn);
  s->stream = tls_streams[dev];
  *ret = s;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_delete_stream(StreamHandle s) {
  free(s);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_stream_id(StreamHandle s, int64_t *ret) {
  if (!s || !ret) return aotrun_shim_fail("aoti_torch_stream_id: %s is NULL", s ? "ret_stream_id" : "stream");
  *ret = (int64_t)(intptr_t)s->stream;
  return AOTI_TORCH_SUCCESS;
}
