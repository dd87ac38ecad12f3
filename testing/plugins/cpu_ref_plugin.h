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
  aotrun_error err; /* last failed non-const call on this handle */
  uint64_t serial;  /* tells handles at a reused address apart */
};

/* Records "<call>: the method handle is NULL" as this thread's error
 * (last_error(NULL)) and returns AOTRUN_ERR_INVALID_ARGUMENT. */
aotrun_status cpu_ref_null_handle(const char *call);
/* A non-const call on m starts: the thread's kept query failure for m (if
 * any) is no longer m's last error. */
void cpu_ref_forget_query_error(const aotrun_method *m);

aotrun_status aotrun_cpu_ref_execute_ex(aotrun_method *m,
                                        aotrun_execute_args *args);
aotrun_status aotrun_cpu_ref_synchronize(aotrun_method *m);

#endif /* AOTRUN_CPU_REF_PLUGIN_H */
