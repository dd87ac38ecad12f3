/*
 * container_api.c: see container_api.h.
 */
#include "aot_loader/container_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "aot_loader/fault_point.h"

/* POSIX guarantees data and function pointers have the same size; copying
 * dlsym's void* into a function-pointer field relies on it. */
_Static_assert(sizeof(void *) == sizeof(aotrun_container_run_fn),
               "function pointers must be the size of void*");

typedef struct entry_point {
  const char *symbol;
  size_t offset; /* of the field in aotrun_container_api */
  int required;
} entry_point;

#define EP(sym, field, req) \
  { sym, offsetof(aotrun_container_api, field), req }

static const entry_point kEntryPoints[] = {
    EP("AOTInductorModelContainerCreateWithDevice", create_with_device, 1),
    EP("AOTInductorModelContainerDelete", delete_container, 1),
    EP("AOTInductorModelContainerGetNumInputs", get_num_inputs, 1),
    EP("AOTInductorModelContainerGetNumOutputs", get_num_outputs, 1),
    EP("AOTInductorModelContainerRun", run, 1),
    EP("AOTInductorModelContainerRunSingleThreaded", run_single_threaded, 0),
    EP("AOTInductorModelContainerGetNumConstants", get_num_constants, 0),
    EP("AOTInductorModelContainerGetConstantName", get_constant_name, 0),
    EP("AOTInductorModelContainerGetConstantOriginalFQN",
       get_constant_original_fqn, 0),
    EP("AOTInductorModelContainerGetConstantDtype", get_constant_dtype, 0),
    EP("AOTInductorModelContainerGetConstantDataSize", get_constant_data_size,
       0),
    EP("AOTInductorModelContainerGetConstantFromFolded",
       get_constant_from_folded, 0),
    EP("AOTInductorModelContainerGetConstantType", get_constant_type, 0),
    EP("AOTInductorModelContainerUpdateUserManagedConstantBufferPairs",
       update_user_managed_constant_buffer_pairs, 0),
    EP("AOTInductorModelContainerGetConstantsBlobSize",
       get_constants_blob_size, 0),
    EP("AOTInductorModelUpdateConstantsFromBlob", update_constants_from_blob,
       0),
};

#undef EP

aotrun_status aotrun_container_api_resolve(void *dl_handle, const char *what,
                                           aotrun_container_api *api,
                                           aotrun_error *err) {
  memset(api, 0, sizeof *api);
  char missing[AOTRUN_ERROR_MESSAGE_SIZE] = "";
  size_t used = 0;
  int num_missing = 0;
  for (size_t i = 0; i < sizeof kEntryPoints / sizeof kEntryPoints[0]; i++) {
    const entry_point *ep = &kEntryPoints[i];
    void *sym = dlsym(dl_handle, ep->symbol);
    if (sym != NULL && ep->required &&
        aotrun_fault_point("container_api.symbol") != 0)
      sym = NULL; /* as if the library lacked it */
    memcpy((char *)api + ep->offset, &sym, sizeof sym);
    if (sym != NULL || !ep->required) continue;
    /* Collect every missing name: one error lists them all. */
    int n = snprintf(missing + used, sizeof missing - used, "%s%s",
                     num_missing ? ", " : "", ep->symbol);
    if (n > 0 && (size_t)n < sizeof missing - used) used += (size_t)n;
    num_missing++;
  }
  if (num_missing == 0) return AOTRUN_OK;
  memset(api, 0, sizeof *api);
  return aotrun_error_set(err, AOTRUN_ERR_NOT_FOUND,
                          "%s is not an AOTInductor model library: missing "
                          "required entry point%s %s",
                          what, num_missing > 1 ? "s" : "", missing);
}

int aotrun_container_api_has_constant_info(const aotrun_container_api *api,
                                           const char **missing) {
  const char *absent = NULL;
  if (api->get_num_constants == NULL)
    absent = "AOTInductorModelContainerGetNumConstants";
  else if (api->get_constant_name == NULL)
    absent = "AOTInductorModelContainerGetConstantName";
  else if (api->get_constant_original_fqn == NULL)
    absent = "AOTInductorModelContainerGetConstantOriginalFQN";
  else if (api->get_constant_dtype == NULL)
    absent = "AOTInductorModelContainerGetConstantDtype";
  else if (api->get_constant_data_size == NULL)
    absent = "AOTInductorModelContainerGetConstantDataSize";
  if (missing != NULL) *missing = absent;
  return absent == NULL;
}
