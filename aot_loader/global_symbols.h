/*
 * global_symbols.h: puts the shim library (and libcudart for CUDA models) in
 * the process's global symbol scope before a model library is dlopened.
 *
 * Why: a model imports every aoti_torch_* function and a dozen cuda* runtime
 * functions without linking the libraries that define them; the dynamic
 * loader resolves them from the global scope at dlopen (RTLD_NOW). A host may
 * have loaded us RTLD_LOCAL, so being loaded is not enough.
 *
 * For each library, the first of these that works is used:
 *  1. dlopen(name, RTLD_NOW|RTLD_NOLOAD|RTLD_GLOBAL): already loaded under
 *     that name or SONAME (libaotrun_shim.so, libcudart.so.13) -> promote;
 *  2. the object our own code binds a marker symbol to
 *     (aoti_torch_empty_strided, cudaMalloc), reopened
 *     RTLD_NOLOAD|RTLD_GLOBAL -> promote; for the shim only when that
 *     object also exports aotrun_shim_last_error (libtorch, loaded
 *     RTLD_GLOBAL, exports the marker too and must never be taken);
 *  3. <directory of the object holding this code>/<name>, RTLD_NOW|RTLD_GLOBAL;
 *  4. dlopen(name, RTLD_NOW|RTLD_GLOBAL): the default search path.
 * Then every loaded object that links the shim (the plugin) has its
 * aoti_torch_* imports bound to it (aotrun_global_symbols_bind_self).
 * Success is remembered until aotrun_global_symbols_release (a backend's
 * deinit): loaded models bind to the handles. The shim itself is linked
 * -z nodelete (its thread-local state and pthread keys outlive any one
 * plugin), so releasing the handles never unloads it.
 * Thread-safe.
 */
#ifndef AOTRUN_GLOBAL_SYMBOLS_H
#define AOTRUN_GLOBAL_SYMBOLS_H

#include "aot_loader/aotrun_error.h"
#include "shim_lib/aotrun_shim.h"

#define AOTRUN_SHIM_LIBRARY_NAME "libaotrun_shim.so"
#define AOTRUN_CUDART_LIBRARY_NAME "libcudart.so.13"

/* Makes the shim global and, when need_cudart, libcudart too. On failure
 * returns AOTRUN_ERR_ACCESS_FAILED naming the library and every place that
 * was tried (with dlerror's text). */
aotrun_status aotrun_global_symbols_ensure(int need_cudart,
                                           aotrun_error *err);

/* dlsym(name) on the shim library made global by the last successful
 * ensure (NULL before one, or when it lacks name): what a model's
 * aoti_torch_* imports are bound to (shim_binding.h). ctx: NULL, or a
 * shim handle to use instead. */
void *aotrun_global_symbols_shim_lookup(void *ctx, const char *name);
/* The shim's path as the dynamic loader knows it (for messages), or
 * AOTRUN_SHIM_LIBRARY_NAME. */
const char *aotrun_global_symbols_shim_path(void);

/* self_binding.c, called by every successful ensure (under its lock:
 * RELRO pages are opened and closed one caller at a time): points the
 * aoti_torch_* imports of every loaded object that links the shim
 * (DT_NEEDED libaotrun_shim.so) at the shim; they may have been bound to
 * libtorch's. *rebound: slots changed. A file that cannot be read is left
 * as the dynamic loader bound it. */
aotrun_status aotrun_global_symbols_bind_self(void *shim, size_t *rebound,
                                              aotrun_error *err);

/* Closes the handles ensure took (this copy of the loader's: each plugin
 * links its own) and forgets the shim functions, so that a plugin can be
 * unloaded without leaving references behind; the next ensure takes them
 * again. Only when no model library loaded through this copy is alive. */
void aotrun_global_symbols_release(void);

/* The shim's aotrun_shim_last_error() text for the calling thread, or ""
 * when the shim is not loaded or has no such function. */
const char *aotrun_global_symbols_shim_last_error(void);
/* aotrun_shim_clear_error() when available; a no-op otherwise. */
void aotrun_global_symbols_shim_clear_error(void);
/* The shim's aoti_torch_delete_tensor_object, or NULL when not loaded. */
typedef int32_t (*aotrun_delete_tensor_fn)(AtenTensorHandle);
aotrun_delete_tensor_fn aotrun_global_symbols_shim_delete_tensor(void);

#endif /* AOTRUN_GLOBAL_SYMBOLS_H */
