/*
 * shim_tensor_views.c: tensor views made by the shim library's
 * aoti_torch_create_tensor_from_blob_v2 / aoti_torch_delete_tensor_object.
 *
 * Like the model libraries, aot_loader does not link the shim: it is put in
 * the global scope at run time (global_symbols.h) before any model loads, so
 * the two functions are looked up there when first needed.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "aot_loader/tensor_views.h"

#define LAYOUT_STRIDED 0 /* DESIGN.md §2.3 */

typedef AOTITorchError (*create_fn)(void *, int64_t, const int64_t *,
                                    const int64_t *, int64_t, int32_t,
                                    int32_t, int32_t, AtenTensorHandle *,
                                    int32_t, const uint8_t *, int64_t);
typedef AOTITorchError (*delete_fn)(AtenTensorHandle);
typedef const char *(*last_error_fn)(void);

/* Looks a shim function up in the global scope. */
static void *lookup(const char *name) { return dlsym(RTLD_DEFAULT, name); }

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
                            "aoti_torch_create_tensor_from_blob_v2 is not in "
                            "the global scope (the shim library is not "
                            "loaded)");
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
