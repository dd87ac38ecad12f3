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
 *     RTLD_NOLOAD|RTLD_GLOBAL -> promote;
 *  3. <directory of the object holding this code>/<name>, RTLD_NOW|RTLD_GLOBAL;
 *  4. dlopen(name, RTLD_NOW|RTLD_GLOBAL): the default search path.
 * Success is remembered for the life of the process and the handles are
 * never closed: loaded models bind to them, and the shim's thread-local
 * state (stream, allocator, last error) must outlive every model.
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

/* The shim's aotrun_shim_last_error() text for the calling thread, or ""
 * when the shim is not loaded or has no such function. */
const char *aotrun_global_symbols_shim_last_error(void);
/* aotrun_shim_clear_error() when available; a no-op otherwise. */
void aotrun_global_symbols_shim_clear_error(void);
/* The shim's aoti_torch_delete_tensor_object, or NULL when not loaded. */
typedef int32_t (*aotrun_delete_tensor_fn)(AtenTensorHandle);
aotrun_delete_tensor_fn aotrun_global_symbols_shim_delete_tensor(void);

#endif /* AOTRUN_GLOBAL_SYMBOLS_H */
