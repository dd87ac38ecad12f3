/* dl_table.c: see dl_table.h. */
#include "shim_lib/fallback/dl_table.h"

#include <dlfcn.h>
#include <string.h>

AOTITorchError aotrun_fb_dl_open(const char *op,
                                 const aotrun_fb_dl_library *lib,
                                 const char *name, void **handle) {
  dlerror();
  *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (*handle != NULL) return AOTI_TORCH_SUCCESS;
  const char *e = dlerror();
  return aotrun_shim_fail(
      "%s: cannot load the %s library '%s' (needed for %s): %s. Install %s "
      "and put its lib directory on LD_LIBRARY_PATH, or set %s to the "
      "library's path",
      op, lib->what, name, lib->needed, e ? e : "unknown dlopen error",
      lib->install, lib->env);
}

AOTITorchError aotrun_fb_dl_resolve(const char *op,
                                    const aotrun_fb_dl_library *lib,
                                    const char *name, void *handle,
                                    const aotrun_fb_dl_symbol *symbols,
                                    size_t count, void *table) {
  for (size_t i = 0; i < count; i++) {
    dlerror();
    void *p = dlsym(handle, symbols[i].name);
    if (p == NULL) {
      const char *e = dlerror();
      return aotrun_shim_fail("%s: the %s library '%s' lacks %s (%s); %s is "
                              "required",
                              op, lib->what, name, symbols[i].name,
                              e ? e : "no such symbol", lib->required);
    }
    /* A data pointer stored as a function pointer: POSIX's dlsym contract. */
    memcpy((char *)table + symbols[i].offset, &p, sizeof p);
  }
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_dl_once_get(aotrun_fb_dl_once *once,
                                     AOTITorchError (*load)(const char *op,
                                                            const void **table),
                                     const char *op, const void **table) {
  const void *t = atomic_load_explicit(&once->table, memory_order_acquire);
  if (t == NULL) {
    AOTITorchError err = AOTI_TORCH_SUCCESS;
    pthread_mutex_lock(&once->lock);
    t = atomic_load_explicit(&once->table, memory_order_relaxed);
    if (t == NULL) {
      err = load(op, &t);
      if (!err)
        atomic_store_explicit(&once->table, t, memory_order_release);
    }
    pthread_mutex_unlock(&once->lock);
    if (err) return err;
  }
  *table = t;
  return AOTI_TORCH_SUCCESS;
}

const void *aotrun_fb_dl_once_peek(aotrun_fb_dl_once *once) {
  return atomic_load_explicit(&once->table, memory_order_acquire);
}
