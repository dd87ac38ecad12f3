/*
 * cpu_ref_identity.h: the cpu_ref backend's ABI 1.1 identity members:
 * get_info, its one device (the host CPU, kDLCPU, memory from sysconf) and
 * can_run (aot_loader/method_check.h with a CPU target).
 */
#ifndef AOTRUN_CPU_REF_IDENTITY_H
#define AOTRUN_CPU_REF_IDENTITY_H

#include "aot_loader/aotrun_error.h"
#include "plugin_api/aotrun_plugin.h"

/* Where a backend-wide call of this thread records its failure. */
aotrun_error *cpu_ref_thread_error(void);

aotrun_status cpu_ref_get_info(const aotrun_backend_api *self,
                               aotrun_backend_info *out);
aotrun_status cpu_ref_get_device_count(const aotrun_backend_api *self,
                                       int32_t *count);
aotrun_status cpu_ref_get_device_info(const aotrun_backend_api *self,
                                      int32_t device,
                                      aotrun_device_info *out);
aotrun_status cpu_ref_can_run(const aotrun_backend_api *self,
                              const aotrun_host_api *host,
                              const void *processed, size_t processed_size,
                              const aotrun_key_value *specs, size_t num_specs,
                              char *reason, size_t reason_size);

#endif /* AOTRUN_CPU_REF_IDENTITY_H */
