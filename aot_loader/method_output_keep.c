/*
 * method_output_keep.c: model outputs handed to the caller as tensors
 * (execute_ex's backend-allocated outputs) instead of copied into the
 * caller's buffers. The model's own tensor is handed over when nothing
 * else owns its memory; otherwise the caller gets a row-major copy.
 */
#include "aot_loader/method_runner_internal.h"

#include <stdio.h>

void aotrun_runner_shape_text(int64_t ndim, const int64_t *shape, char *buf,
                              size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int64_t d = 0; d < ndim && shape != NULL && used < size; d++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "",
                             (long long)shape[d]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

static aotrun_status keep_failed(aotrun_error *err, aotrun_status code,
                                 const aotrun_method_runner *r, size_t i,
                                 const char *what) {
  return aotrun_error_set(err, code, "output %zu (%s): %s failed: %s", i,
                          r->io[1][i].name, what, aotrun_shim_last_error());
}

/* A fresh row-major tensor like src, filled from src on the current
 * stream (the shim's copy_ handles any source strides). */
static aotrun_status keep_copy(const aotrun_method_runner *r, size_t i,
                               AtenTensorHandle src, AtenTensorHandle *out,
                               aotrun_error *err) {
  int64_t ndim = 0, *sizes = NULL;
  int32_t dtype = 0, device_type = 0, device_index = 0;
  if (aoti_torch_get_dim(src, &ndim) || aoti_torch_get_sizes(src, &sizes) ||
      aoti_torch_get_dtype(src, &dtype) ||
      aoti_torch_get_device_type(src, &device_type) ||
      aoti_torch_get_device_index(src, &device_index))
    return keep_failed(err, AOTRUN_ERR_INTERNAL, r, i,
                       "reading the model's output tensor");
  if (ndim > AOTRUN_MAX_DIMS)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "output %zu (%s) has %lld dims (at most %d)", i,
                            r->io[1][i].name, (long long)ndim,
                            AOTRUN_MAX_DIMS);
  int64_t strides[AOTRUN_MAX_DIMS];
  int64_t step = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    strides[d] = step;
    step *= sizes[d] > 1 ? sizes[d] : 1;
  }
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype, device_type,
                               device_index, out) != AOTI_TORCH_SUCCESS ||
      *out == NULL) {
    *out = NULL;
    return keep_failed(err, AOTRUN_ERR_OUT_OF_MEMORY, r, i,
                       "allocating the caller's tensor");
  }
  if (aoti_torch_copy_(*out, src, 0) != AOTI_TORCH_SUCCESS) {
    aoti_torch_delete_tensor_object(*out);
    *out = NULL;
    return keep_failed(err, AOTRUN_ERR_INTERNAL, r, i, "aoti_torch_copy_");
  }
  return AOTRUN_OK;
}

static int is_row_major(AtenTensorHandle h) {
  int64_t ndim = 0, *sizes = NULL, *strides = NULL;
  if (aoti_torch_get_dim(h, &ndim) || aoti_torch_get_sizes(h, &sizes) ||
      aoti_torch_get_strides(h, &strides) || ndim > AOTRUN_MAX_DIMS)
    return 0;
  return runner_is_compact((int32_t)ndim, sizes, strides);
}

aotrun_status aotrun_runner_keep_output(aotrun_method_runner *r, size_t i,
                                        AtenTensorHandle src,
                                        int may_hand_over,
                                        AtenTensorHandle *out,
                                        aotrun_error *err) {
  *out = NULL;
  if (src == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "output %zu: the model returned no tensor", i);
  /* Owned memory: a new reference shares it (a model returning one tensor
   * in two outputs hands over two references to it). Borrowed memory (a
   * constant, an input) and a graph pool's are copied: they are not the
   * caller's to keep. */
  if (may_hand_over && aotrun_shim_tensor_owns_memory(src) &&
      is_row_major(src)) {
    if (aoti_torch_new_tensor_handle(src, out) != AOTI_TORCH_SUCCESS ||
        *out == NULL) {
      *out = NULL;
      return keep_failed(err, AOTRUN_ERR_OUT_OF_MEMORY, r, i,
                         "aoti_torch_new_tensor_handle");
    }
    return AOTRUN_OK;
  }
  return keep_copy(r, i, src, out, err);
}
