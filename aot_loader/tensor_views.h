/*
 * tensor_views.h: how method_weights makes the non-owning tensor views it
 * hands to a container, as a table of functions (tests pass fakes). The
 * shim-backed table is aotrun_shim_tensor_view_ops() (shim_tensor_views.c),
 * which finds the shim's functions in the global scope at run time.
 */
#ifndef AOTRUN_TENSOR_VIEWS_H
#define AOTRUN_TENSOR_VIEWS_H

#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "shim_lib/aotrun_shim.h"

typedef struct aotrun_tensor_view_ops {
  void *ctx;
  /* A view of memory it does not own (create_tensor_from_blob_v2). */
  aotrun_status (*create)(void *ctx, void *data, int32_t ndim,
                          const int64_t *sizes, const int64_t *strides,
                          int64_t storage_offset, int32_t dtype,
                          int32_t device_type, int32_t device_index,
                          AtenTensorHandle *out, aotrun_error *err);
  void (*destroy)(void *ctx, AtenTensorHandle handle);
} aotrun_tensor_view_ops;

/* aoti_torch_create_tensor_from_blob_v2 / aoti_torch_delete_tensor_object. */
const aotrun_tensor_view_ops *aotrun_shim_tensor_view_ops(void);

#endif /* AOTRUN_TENSOR_VIEWS_H */
