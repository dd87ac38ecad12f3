/*
 * fake_plugin.c: a stand-in for the CUDA plugin in
 * test_torch_isolation.c: aotrun's loader linked in, and one aoti_torch_*
 * function called by the plugin's own code (imported from the shim at link
 * time, found in the global scope at run time).
 */
#include <stddef.h>
#include <stdint.h>

#include "aot_loader/model_library.h"

#define API __attribute__((visibility("default")))

typedef struct AtenTensorOpaque *AtenTensorHandle_;
int32_t aoti_torch_get_dim(AtenTensorHandle_ t, int64_t *out);

/* What the plugin's GOT holds for aoti_torch_get_dim now. */
API void *fake_plugin_get_dim_address(void) {
  int32_t (*volatile f)(AtenTensorHandle_, int64_t *) = aoti_torch_get_dim;
  return (void *)(uintptr_t)f;
}

/* Loads (and unloads) a cpu model; 0 on success. */
API int fake_plugin_load(const void *bytes, size_t size) {
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  if (aotrun_model_library_load(bytes, size, "cpu", &lib, &err) != AOTRUN_OK)
    return 1;
  aotrun_model_library_destroy(lib);
  return 0;
}
