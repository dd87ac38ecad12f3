/*
 * cuda_execute_ex.h: the CUDA backend's execute_ex and synchronize (ABI
 * 1.1; behaviour in docs/cuda-backend.md).
 */
#ifndef AOTRUN_CUDA_EXECUTE_EX_H
#define AOTRUN_CUDA_EXECUTE_EX_H

#include "plugin_api/aotrun_plugin.h"

aotrun_status aotrun_cuda_method_execute_ex(aotrun_method *m,
                                            aotrun_execute_args *args);
aotrun_status aotrun_cuda_method_synchronize(aotrun_method *m);

#endif /* AOTRUN_CUDA_EXECUTE_EX_H */
