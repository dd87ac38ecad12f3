/* cuda_identity.c: see cuda_identity.h. */
#include "backend_cuda/cuda_identity.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "aot_loader/method_check.h"
#include "aot_loader/method_runner.h"
#include "backend_cuda/cuda_device_scope.h"
#include "backend_cuda/cuda_device_spec.h"

#define CUDA_BACKEND_VERSION "0.1"

/* The build string, made once: the runtime and driver do not change while
 * the process runs. Static so it outlives every caller (until unload). */
static pthread_once_t g_build_once = PTHREAD_ONCE_INIT;
static char g_build[160];

static void version_text(int v, char *buf, size_t size) {
  if (v <= 0)
    snprintf(buf, size, "none");
  else
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void make_build(void) {
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  char rt[32], dr[32], built[32];
  version_text(runtime, rt, sizeof rt);
  version_text(driver, dr, sizeof dr);
  version_text(CUDART_VERSION, built, sizeof built);
  snprintf(g_build, sizeof g_build,
           "CUDA runtime %s (built with %s), driver %s", rt, built, dr);
}

/* The callee-filled rule: min(caller size, ours), struct_size set to it. */
static void copy_out(void *out, const void *ours, size_t our_size) {
  uint32_t caller;
  memcpy(&caller, out, sizeof caller);
  size_t n = caller < our_size ? caller : our_size;
  memcpy(out, ours, n);
  uint32_t reported = (uint32_t)n;
  memcpy(out, &reported, sizeof reported);
}

static aotrun_status check_out(const void *out, const char *what,
                               aotrun_error *err) {
  uint32_t caller = 0;
  if (out != NULL) memcpy(&caller, out, sizeof caller);
  if (out != NULL && caller >= sizeof(uint32_t)) return AOTRUN_OK;
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s: out is NULL or its struct_size (%u) is below "
                          "4",
                          what, (unsigned)caller);
}

aotrun_status aotrun_cuda_get_info(aotrun_backend_info *out,
                                   aotrun_error *err) {
  aotrun_status st = check_out(out, "get_info", err);
  if (st != AOTRUN_OK) return st;
  pthread_once(&g_build_once, make_build);
  aotrun_backend_info info = {0};
  info.struct_size = sizeof info;
  info.version = CUDA_BACKEND_VERSION;
  info.vendor = "aotrun";
  info.build = g_build;
  copy_out(out, &info, sizeof info);
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_device_count(int32_t *count, aotrun_error *err) {
  if (count == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_device_count: count is NULL");
  *count = 0;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice) {
    (void)cudaGetLastError();
    return AOTRUN_OK;
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGetDeviceCount failed: %s (%s, error %d)",
                            cudaGetErrorString(e), cudaGetErrorName(e),
                            (int)e);
  }
  *count = n;
  return AOTRUN_OK;
}

/* Free memory of `device` (its primary context), the caller's device
 * restored. */
static aotrun_status free_memory(int32_t device, uint64_t *free_bytes,
                                 aotrun_error *err) {
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(device, &scope, err);
  if (st != AOTRUN_OK) return st;
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  aotrun_cuda_device_leave(&scope);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaMemGetInfo on device %d failed: %s",
                            (int)device, cudaGetErrorString(e));
  }
  *free_bytes = free_b;
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_device_info(int32_t device, aotrun_device_info *out,
                                      aotrun_error *err) {
  aotrun_status st = check_out(out, "get_device_info", err);
  int32_t n = 0;
  if (st == AOTRUN_OK) st = aotrun_cuda_device_count(&n, err);
  if (st != AOTRUN_OK) return st;
  if (device < 0 || device >= n)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_device_info: CUDA device %d does not exist "
                            "(this machine has %d device%s)",
                            (int)device, (int)n, n == 1 ? "" : "s");
  struct cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cudaGetDeviceProperties(%d) failed: %s",
                            (int)device, cudaGetErrorString(e));
  }
  aotrun_device_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.device_type = kDLCUDA;
  info.device_id = device;
  info.compute_major = p.major;
  info.compute_minor = p.minor;
  info.total_memory = p.totalGlobalMem;
  snprintf(info.name, sizeof info.name, "%s", p.name);
  st = free_memory(device, &info.free_memory, err);
  if (st != AOTRUN_OK) return st;
  copy_out(out, &info, sizeof info);
  return AOTRUN_OK;
}

/* major * 10 + minor, from attributes (no context). */
static aotrun_status compute_capability(int device, uint32_t *arch,
                                        aotrun_error *err) {
  int major = 0, minor = 0;
  cudaError_t e =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                               device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "the compute capability of CUDA device %d: %s",
                            device, cudaGetErrorString(e));
  }
  *arch = (uint32_t)(major * 10 + minor);
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_can_run(const aotrun_host_api *host,
                                  const void *processed, size_t size,
                                  const aotrun_key_value *specs,
                                  size_t num_specs, aotrun_error *err) {
  const char *method = NULL;
  int device = 0;
  uint32_t arch = 0;
  aotrun_status st =
      aotrun_method_runner_spec_method(specs, num_specs, &method, err);
  if (st == AOTRUN_OK)
    st = aotrun_cuda_spec_device(specs, num_specs, &device, err);
  if (st == AOTRUN_OK) st = compute_capability(device, &arch, err);
  if (st != AOTRUN_OK) return st;
  char name[32];
  snprintf(name, sizeof name, "cuda:%d", device);
  aotrun_method_check_config c = {
      .host = host,
      .manifest = processed,
      .manifest_size = size,
      .method = method,
      .device = name,
      .gpu_arch = arch,
  };
  return aotrun_method_check(&c, err);
}
