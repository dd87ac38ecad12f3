/* cpu_ref_identity.c: see cpu_ref_identity.h. */
#include "testing/plugins/cpu_ref_identity.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aot_loader/method_check.h"
#include "aot_loader/method_runner.h"

#define CPU_REF_VERSION "0.1"

aotrun_status cpu_ref_get_info(const aotrun_backend_api *self,
                               aotrun_backend_info *out) {
  (void)self;
  if (out == NULL || out->struct_size < sizeof(uint32_t))
    return aotrun_error_set(cpu_ref_thread_error(),
                            AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_info: out is NULL or its struct_size is "
                            "below 4");
  aotrun_backend_info info = {0};
  info.version = CPU_REF_VERSION;
  info.vendor = "aotrun";
  info.build = "CPU reference backend: model libraries built for the CPU";
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

aotrun_status cpu_ref_get_device_count(const aotrun_backend_api *self,
                                       int32_t *count) {
  (void)self;
  if (count == NULL)
    return aotrun_error_set(cpu_ref_thread_error(),
                            AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_device_count: count is NULL");
  *count = 1;
  return AOTRUN_OK;
}

/* Pages times the page size, 0 when sysconf does not know. */
static uint64_t pages_bytes(int name) {
  long pages = sysconf(name), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

aotrun_status cpu_ref_get_device_info(const aotrun_backend_api *self,
                                      int32_t device,
                                      aotrun_device_info *out) {
  (void)self;
  aotrun_error *err = cpu_ref_thread_error();
  if (out == NULL || out->struct_size < sizeof(uint32_t))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_device_info: out is NULL or its "
                            "struct_size is below 4");
  if (device != 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "cpu_ref: device %d does not exist (1 device: "
                            "0, the host CPU)",
                            (int)device);
  aotrun_device_info info;
  memset(&info, 0, sizeof info);
  info.device_type = kDLCPU;
  info.total_memory = pages_bytes(_SC_PHYS_PAGES);
  info.free_memory = pages_bytes(_SC_AVPHYS_PAGES);
  snprintf(info.name, sizeof info.name, "host CPU (%ld online)",
           sysconf(_SC_NPROCESSORS_ONLN));
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

aotrun_status cpu_ref_can_run(const aotrun_backend_api *self,
                              const aotrun_host_api *host,
                              const void *processed, size_t processed_size,
                              const aotrun_key_value *specs, size_t num_specs,
                              char *reason, size_t reason_size) {
  (void)self;
  aotrun_error *err = cpu_ref_thread_error();
  aotrun_error_clear(err);
  const char *method = NULL;
  aotrun_status st =
      aotrun_method_runner_spec_method(specs, num_specs, &method, err);
  if (st == AOTRUN_OK) {
    aotrun_method_check_config c = {
        .host = host,
        .manifest = processed,
        .manifest_size = processed_size,
        .method = method,
        .device = "cpu",
        .gpu_arch = 0,
    };
    st = aotrun_method_check(&c, err);
  }
  if (reason != NULL && reason_size > 0)
    snprintf(reason, reason_size, "%s", st == AOTRUN_OK ? "" : err->message);
  return st;
}
