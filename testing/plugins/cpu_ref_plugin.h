/*
 * cpu_ref_plugin.h: the CPU reference backend's method handle, shared by
 * cpu_ref_plugin.c (the table, init, execute) and cpu_ref_execute_ex.c
 * (ABI 1.1 execute_ex / synchronize).
 */
#ifndef AOTRUN_CPU_REF_PLUGIN_H
#define AOTRUN_CPU_REF_PLUGIN_H

#include "aot_loader/method_runner.h"
#include "plugin_api/aotrun_plugin.h"

struct aotrun_method {
  aotrun_method_runner *runner;
  aotrun_error err; /* last failed call on this handle */
};

aotrun_status aotrun_cpu_ref_execute_ex(aotrun_method *m,
                                        aotrun_execute_args *args);
aotrun_status aotrun_cpu_ref_synchronize(aotrun_method *m);

#endif /* AOTRUN_CPU_REF_PLUGIN_H */
