/*
 * cuda_method.h: one method handle of the CUDA backend (struct
 * aotrun_method of the plugin ABI): the method runner on "cuda:N", its
 * stream, its CUDA graph state, its options and its program's weight cache.
 */
#ifndef AOTRUN_CUDA_METHOD_H
#define AOTRUN_CUDA_METHOD_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "backend_cuda/cuda_options.h"
#include "plugin_api/aotrun_plugin.h"

/* specs: "method" (default "forward"), "device" ("N", "cuda:N" or "cuda",
 * default 0; cuda_device_spec.h). Runs on that device and restores the
 * caller's current device. defaults: the backend-wide options (copied). */
aotrun_status aotrun_cuda_method_create(const aotrun_host_api *host,
                                        const void *manifest, size_t size,
                                        const aotrun_key_value *specs,
                                        size_t num_specs,
                                        const aotrun_cuda_options *defaults,
                                        aotrun_method **out,
                                        aotrun_error *err);
void aotrun_cuda_method_destroy(aotrun_method *m);

aotrun_status aotrun_cuda_method_execute(aotrun_method *m,
                                         const DLTensor *inputs, size_t ni,
                                         DLTensor *outputs, size_t no);
aotrun_status aotrun_cuda_method_set_option(aotrun_method *m,
                                            const aotrun_option *option);
aotrun_status aotrun_cuda_method_get_option(aotrun_method *m, const char *key,
                                            aotrun_option *out);
aotrun_status aotrun_cuda_method_num_io(const aotrun_method *m, int32_t kind,
                                        size_t *count);
aotrun_status aotrun_cuda_method_io_info(const aotrun_method *m, int32_t kind,
                                         size_t index, aotrun_io_info *out);
const char *aotrun_cuda_method_last_error(const aotrun_method *m);

#endif /* AOTRUN_CUDA_METHOD_H */
