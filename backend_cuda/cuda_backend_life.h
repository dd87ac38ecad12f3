/*
 * cuda_backend_life.h: when the CUDA backend gives back what it holds for
 * the whole process (ABI 1.1 deinit, docs/plugin-abi.md "Unloading").
 *
 * Each successful entry-symbol call is balanced by one deinit. When the
 * last deinit comes and no method handle is alive, deinit frees the
 * process-wide state the backend made through the shim (library handles
 * of every thread, workspaces, caches, random states, cached device
 * memory: aotrun_shim_release_process_state) and the loader's handles on
 * the global symbol scope, so that nothing refers into the library when
 * the host dlcloses it and a new entry-symbol call starts afresh. Per
 * method state (streams, graphs and their pools, weight caches) is freed
 * by destroy already. A deinit that finds handles alive (a host that broke
 * the rule, or another host sharing the library) frees nothing.
 */
#ifndef AOTRUN_CUDA_BACKEND_LIFE_H
#define AOTRUN_CUDA_BACKEND_LIFE_H

#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

/* The entry symbol handed out the table. */
void aotrun_cuda_backend_acquire(void);
/* A method handle was created / destroyed. */
void aotrun_cuda_method_born(void);
void aotrun_cuda_method_gone(void);
/* The table's deinit. */
void aotrun_cuda_deinit(const aotrun_backend_api *self);

/* Outstanding entry-symbol calls, live method handles, and how many
 * deinits freed the process-wide state (tests). */
int64_t aotrun_cuda_backend_users(void);
int64_t aotrun_cuda_live_methods(void);
int64_t aotrun_cuda_releases(void);

#endif /* AOTRUN_CUDA_BACKEND_LIFE_H */
