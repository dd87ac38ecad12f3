/*
 * container_api.h: the AOTInductorModelContainer* C entry points of a model
 * library, as function-pointer types, and their resolution with dlsym.
 *
 * Our own declarations of torch 2.11's aoti_runtime/interface.h ABI:
 * AOTIRuntimeError is int32_t (0 = success); handles are opaque pointers;
 * C++ `bool` parameters are C `_Bool` (same ABI on the supported platforms).
 */
#ifndef AOTRUN_CONTAINER_API_H
#define AOTRUN_CONTAINER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "shim_lib/aotrun_shim.h"

typedef int32_t aotrun_aoti_error; /* AOTIRuntimeError */
#define AOTRUN_AOTI_SUCCESS 0

struct AOTInductorModelContainerOpaque;
typedef struct AOTInductorModelContainerOpaque *aotrun_container_handle;
typedef void *aotrun_aoti_stream;         /* AOTInductorStreamHandle */
typedef void *aotrun_aoti_proxy_executor; /* AOTIProxyExecutorHandle */

/* AOTInductorConstantMapEntry. */
typedef struct aotrun_aoti_constant_entry {
  const char *name;
  AtenTensorHandle handle;
} aotrun_aoti_constant_entry;

typedef aotrun_aoti_error (*aotrun_container_create_fn)(
    aotrun_container_handle *container, size_t num_models,
    const char *device_str, const char *cubin_dir);
typedef aotrun_aoti_error (*aotrun_container_delete_fn)(
    aotrun_container_handle container);
typedef aotrun_aoti_error (*aotrun_container_get_count_fn)(
    aotrun_container_handle container, size_t *count);
/* Run / RunSingleThreaded: inputs stolen, outputs new references. */
typedef aotrun_aoti_error (*aotrun_container_run_fn)(
    aotrun_container_handle container, AtenTensorHandle *inputs,
    size_t num_inputs, AtenTensorHandle *outputs, size_t num_outputs,
    aotrun_aoti_stream stream, aotrun_aoti_proxy_executor proxy_executor);
typedef aotrun_aoti_error (*aotrun_container_get_string_fn)(
    aotrun_container_handle container, size_t idx, const char **out);
typedef aotrun_aoti_error (*aotrun_container_get_int32_fn)(
    aotrun_container_handle container, size_t idx, int32_t *out);
typedef aotrun_aoti_error (*aotrun_container_get_size_fn)(
    aotrun_container_handle container, size_t idx, size_t *out);
typedef aotrun_aoti_error (*aotrun_container_get_bool_fn)(
    aotrun_container_handle container, size_t idx, bool *out);
typedef aotrun_aoti_error (*aotrun_container_update_pairs_fn)(
    aotrun_container_handle container,
    const aotrun_aoti_constant_entry *pairs, size_t num_pairs,
    bool use_inactive, bool validate_full_update);
typedef aotrun_aoti_error (*aotrun_container_blob_size_fn)(
    aotrun_container_handle container, uint64_t *size);
typedef aotrun_aoti_error (*aotrun_container_update_from_blob_fn)(
    aotrun_container_handle container, const uint8_t *blob);

/* The resolved entry points. Optional ones are NULL when absent. */
typedef struct aotrun_container_api {
  /* required */
  aotrun_container_create_fn create_with_device;
  aotrun_container_delete_fn delete_container;
  aotrun_container_get_count_fn get_num_inputs;
  aotrun_container_get_count_fn get_num_outputs;
  aotrun_container_run_fn run;
  /* optional */
  aotrun_container_run_fn run_single_threaded;
  aotrun_container_get_count_fn get_num_constants;
  aotrun_container_get_string_fn get_constant_name;
  aotrun_container_get_string_fn get_constant_original_fqn;
  aotrun_container_get_int32_fn get_constant_dtype;
  aotrun_container_get_size_fn get_constant_data_size;
  aotrun_container_get_bool_fn get_constant_from_folded;
  aotrun_container_get_int32_fn get_constant_type;
  aotrun_container_update_pairs_fn update_user_managed_constant_buffer_pairs;
  aotrun_container_blob_size_fn get_constants_blob_size;
  aotrun_container_update_from_blob_fn update_constants_from_blob;
} aotrun_container_api;

/* Resolves every entry point from a dlopen handle. When required ones are
 * missing, returns AOTRUN_ERR_NOT_FOUND naming all of them (`what` names the
 * library) and leaves *api zeroed. */
aotrun_status aotrun_container_api_resolve(void *dl_handle, const char *what,
                                           aotrun_container_api *api,
                                           aotrun_error *err);

/* Whether the constant introspection entry points needed to list constants
 * (GetNumConstants, Name, OriginalFQN, Dtype, DataSize) are all present;
 * when not, *missing (if non-NULL) names the first absent one. */
int aotrun_container_api_has_constant_info(const aotrun_container_api *api,
                                           const char **missing);

#endif /* AOTRUN_CONTAINER_API_H */
