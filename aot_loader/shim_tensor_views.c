/*
 * shim_tensor_views.c: tensor views made by the shim library's
 * aoti_torch_create_tensor_from_blob_v2 / aoti_torch_delete_tensor_object.
 *
 * Like the model libraries, aot_loader does not link the shim: it is put in
 * the global scope at run time (global_symbols.h) before any model loads,
 * and the functions are looked up in it (never in the global scope, where
 * libtorch's aoti_torch_* may come first: docs/loading.md).
 */
#include <stddef.h>

#include "aot_loader/global_symbols.h"
#include "aot_loader/tensor_views.h"

#define LAYOUT_STRIDED 0 /* DESIGN.md §2.3 */

typedef AOTITorchError (*create_fn)(void *, int64_t, const int64_t *,
                                    const int64_t *, int64_t, int32_t,
                                    int32_t, int32_t, AtenTensorHandle *,
                                    int32_t, const uint8_t *, int64_t);
typedef AOTITorchError (*delete_fn)(AtenTensorHandle);
typedef const char *(*last_error_fn)(void);

/* Looks a shim function up in the shim library, finding it first when no
 * model has been loaded yet. */
static void *lookup(const char *name) {
  void *fn = aotrun_global_symbols_shim_lookup(NULL, name);
  if (fn != NULL) return fn;
  aotrun_error ignored;
  if (aotrun_global_symbols_ensure(0, &ignored) != AOTRUN_OK) return NULL;
  return aotrun_global_symbols_shim_lookup(NULL, name);
}

static aotrun_status shim_create(void *ctx, void *data, int32_t ndim,
                                 const int64_t *sizes, const int64_t *strides,
                                 int64_t storage_offset, int32_t dtype,
                                 int32_t device_type, int32_t device_index,
                                 AtenTensorHandle *out, aotrun_error *err) {
  (void)ctx;
  *out = NULL;
  create_fn create = (create_fn)lookup("aoti_torch_create_tensor_from_blob_v2");
  last_error_fn last_error = (last_error_fn)lookup("aotrun_shim_last_error");
  if (create == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "aoti_torch_create_tensor_from_blob_v2 is not "
                            "available (the shim library %s is not loaded)",
                            AOTRUN_SHIM_LIBRARY_NAME);
  AOTITorchError rc = create(data, ndim, sizes, strides, storage_offset,
                             dtype, device_type, device_index, out,
                             LAYOUT_STRIDED, NULL, 0);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "aoti_torch_create_tensor_from_blob_v2 failed: %s",
                            last_error ? last_error() : "(no shim message)");
  }
  return AOTRUN_OK;
}

static void shim_destroy(void *ctx, AtenTensorHandle handle) {
  (void)ctx;
  delete_fn del = (delete_fn)lookup("aoti_torch_delete_tensor_object");
  if (handle != NULL && del != NULL) (void)del(handle);
}

const aotrun_tensor_view_ops *aotrun_shim_tensor_view_ops(void) {
  static const aotrun_tensor_view_ops kOps = {NULL, shim_create, shim_destroy};
  return &kOps;
}
