/*
 * method_run.c: one call of a method: fresh input handles (over the
 * caller's data or staged device copies), the model's run, then the output
 * copies of method_output_copy.c, the wait (see method_runner.h).
 */
#include "aot_loader/method_runner_internal.h"

#include <stdlib.h>
#include <string.h>

#include "aot_loader/fault_point.h"

/* ---- input handles ------------------------------------------------------ */

aotrun_status aotrun_runner_shim_failed(aotrun_error *err, aotrun_status code,
                                        const char *what, size_t i) {
  return aotrun_error_set(err, code, "%s for input/output %zu failed: %s", what,
                          i, aotrun_shim_last_error());
}

static void contiguous_strides(int32_t ndim, const int64_t *shape,
                               int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d] > 1 ? shape[d] : 1;
  }
}

static int32_t shim_device_type(DLDeviceType t) {
  return runner_host_memory(t) ? SHIM_DEVICE_CPU : SHIM_DEVICE_CUDA;
}

/* A non-owning handle over t's memory, contiguous. */
aotrun_status aotrun_runner_view_of(const DLTensor *t, size_t i,
                                    AtenTensorHandle *out, aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_create_tensor_from_blob_v2(
      runner_data_of(t), t->ndim, t->shape, strides, 0,
      aotrun_dl_dtype_to_scalar_type(t->dtype),
      shim_device_type(t->device.device_type),
      runner_host_memory(t->device.device_type) ? 0 : t->device.device_id, out,
      LAYOUT_STRIDED, NULL, 0);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return aotrun_runner_shim_failed(
        err, AOTRUN_ERR_INTERNAL, "aoti_torch_create_tensor_from_blob_v2", i);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_runner_copy_bytes(aotrun_method_runner *r, void *dst,
                                       const void *src, size_t bytes,
                                       aotrun_copy_kind kind, void *stream,
                                       aotrun_error *err) {
  if (bytes == 0) return AOTRUN_OK;
  int fault = aotrun_fault_point("method_run.copy");
  if (fault)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "method %s: copying %zu bytes failed: %s",
                            r->method, bytes, strerror(fault));
  if (r->ops.copy != NULL)
    return r->ops.copy(r->ops.ctx, dst, src, bytes, kind, stream, err);
  if (kind != AOTRUN_COPY_HOST_TO_HOST)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "method %s: no device copy for copy kind %d",
                            r->method, (int)kind);
  memcpy(dst, src, bytes);
  return AOTRUN_OK;
}

/* A device copy of host input t, in a fresh tensor the model will own. */
static aotrun_status staged_input(aotrun_method_runner *r, const DLTensor *t,
                                  size_t i, void *stream, AtenTensorHandle *out,
                                  aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_empty_strided(
      t->ndim, t->shape, strides, aotrun_dl_dtype_to_scalar_type(t->dtype),
      SHIM_DEVICE_CUDA, r->device.device_id, out);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return aotrun_runner_shim_failed(err, AOTRUN_ERR_OUT_OF_MEMORY,
                                     "staging (aoti_torch_empty_strided)", i);
  }
  void *dst = NULL;
  (void)aoti_torch_get_data_ptr(*out, &dst);
  size_t bytes = runner_numel(t->ndim, t->shape) * aotrun_dl_itemsize(t->dtype);
  aotrun_status st =
      aotrun_runner_copy_bytes(r, dst, runner_data_of(t), bytes,
                               AOTRUN_COPY_HOST_TO_DEVICE, stream, err);
  if (st != AOTRUN_OK) {
    aoti_torch_delete_tensor_object(*out);
    *out = NULL;
    return aotrun_error_prefix(err, "staging input %zu: ", i);
  }
  return AOTRUN_OK;
}

void aotrun_method_runner_delete_handles(AtenTensorHandle *handles, size_t n) {
  aotrun_model_library_delete_outputs(handles, n);
}

/* Fresh handles for one call: views of model-device memory, staged copies
 * of host memory on a cuda runner. */
static aotrun_status input_handles(aotrun_method_runner *r,
                                   const DLTensor *inputs, size_t n,
                                   void *stream, int allow_staging,
                                   AtenTensorHandle *h, aotrun_error *err) {
  for (size_t i = 0; i < n; i++) {
    const DLTensor *t = &inputs[i];
    aotrun_status st;
    if (runner_is_cuda(r) && runner_host_memory(t->device.device_type)) {
      if (!allow_staging)
        st = aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu is in host memory; run_handles "
                              "takes %s memory",
                              i, r->device_str);
      else
        st = staged_input(r, t, i, stream, &h[i], err);
    } else {
      st = aotrun_runner_view_of(t, i, &h[i], err);
    }
    if (st != AOTRUN_OK) {
      aotrun_method_runner_delete_handles(h, i);
      return st;
    }
  }
  return AOTRUN_OK;
}

/* The shim's current stream for staging and strided copies (cuda only). */
aotrun_status aotrun_runner_open_guard(aotrun_method_runner *r, void *stream,
                                       CUDAStreamGuardHandle *g,
                                       aotrun_error *err) {
  *g = NULL;
  if (!runner_is_cuda(r)) return AOTRUN_OK;
  if (aoti_torch_create_cuda_stream_guard(stream, r->device.device_id, g) !=
      AOTI_TORCH_SUCCESS) {
    *g = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "method %s: cannot make %s's stream current: %s",
                            r->method, r->device_str, aotrun_shim_last_error());
  }
  return AOTRUN_OK;
}

void aotrun_runner_close_guard(CUDAStreamGuardHandle g) {
  if (g != NULL) (void)aoti_torch_delete_cuda_stream_guard(g);
}

static aotrun_status run_model(aotrun_method_runner *r, AtenTensorHandle *in,
                               size_t n_in, AtenTensorHandle *out, size_t n_out,
                               void *stream, aotrun_error *err) {
  /* The model steals `in`, even when it fails. */
  aotrun_status st =
      aotrun_model_library_run(r->lib, in, n_in, out, n_out, stream, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

static aotrun_status check_handle_args(const aotrun_method_runner *r,
                                       size_t n_in, size_t n_out,
                                       aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (n_in != r->num_io[0] || n_out != r->num_io[1])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s takes %zu inputs and %zu outputs, got "
                            "%zu and %zu",
                            r->method, r->num_io[0], r->num_io[1], n_in, n_out);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_run_handles(aotrun_method_runner *r,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               AtenTensorHandle *outputs,
                                               size_t num_outputs, void *stream,
                                               aotrun_error *err) {
  aotrun_status st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  /* On the stack for the usual counts: no heap work per call. */
  AtenTensorHandle stack[RUNNER_STACK_IO + 1] = {0};
  AtenTensorHandle *h =
      num_inputs <= RUNNER_STACK_IO ? stack : calloc(num_inputs + 1, sizeof *h);
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory running %s", r->method);
  st = input_handles(r, inputs, num_inputs, stream, 0, h, err);
  if (st == AOTRUN_OK)
    st = run_model(r, h, num_inputs, outputs, num_outputs, stream, err);
  if (h != stack) free(h);
  return st;
}

aotrun_status aotrun_runner_synchronize(aotrun_method_runner *r, void *stream,
                                        aotrun_error *err) {
  aotrun_status st = AOTRUN_OK;
  if (r->ops.synchronize != NULL)
    st = r->ops.synchronize(r->ops.ctx, stream, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  /* The fault point stands for an error the synchronisation reports (a
   * kernel that failed); the work has finished either way. */
  int fault = aotrun_fault_point("method_run.synchronize");
  if (fault)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "method %s: waiting for the stream failed: %s",
                            r->method, strerror(fault));
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_finish_call(aotrun_method_runner *r,
                                               void *stream,
                                               const aotrun_runner_call *call,
                                               aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (call != NULL && call->no_sync) return AOTRUN_OK;
  return aotrun_runner_synchronize(r, stream, err);
}

/* ---- the whole call ----------------------------------------------------- */

/* One call, inputs already checked: one stream guard around staging, the
 * model and the output copies; then the handles go and the stream is
 * synchronised. */
static aotrun_status run_checked(aotrun_method_runner *r,
                                 const DLTensor *inputs, size_t num_inputs,
                                 DLTensor *outputs, size_t num_outputs,
                                 void *stream, aotrun_runner_call *call,
                                 aotrun_error *err) {
  aotrun_runner_call_reset(call, num_outputs);
  aotrun_status st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  if (num_outputs > 0 && outputs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  AtenTensorHandle in_stack[RUNNER_STACK_IO] = {0},
                   out_stack[RUNNER_STACK_IO] = {0};
  AtenTensorHandle *in =
      num_inputs <= RUNNER_STACK_IO ? in_stack : calloc(num_inputs, sizeof *in);
  AtenTensorHandle *out = num_outputs <= RUNNER_STACK_IO
                              ? out_stack
                              : calloc(num_outputs, sizeof *out);
  CUDAStreamGuardHandle guard = NULL;
  if (in == NULL || out == NULL)
    st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory running %s", r->method);
  if (st == AOTRUN_OK) st = aotrun_runner_open_guard(r, stream, &guard, err);
  if (st == AOTRUN_OK)
    st = input_handles(r, inputs, num_inputs, stream, 1, in, err);
  if (st == AOTRUN_OK) {
    /* The model may write outputs straight into the caller's tensors. */
    aotrun_output_placement_begin(r->placement, inputs, num_inputs, outputs,
                                  num_outputs);
    st = run_model(r, in, num_inputs, out, num_outputs, stream, err);
    aotrun_output_placement_end(r->placement);
  }
  if (st == AOTRUN_OK)
    st = aotrun_output_placement_settle(r->placement, out, outputs,
                                        num_outputs, err);
  if (st == AOTRUN_OK)
    st = aotrun_runner_copy_outputs_unsynced(r, out, outputs, num_outputs,
                                             stream, call, 1, 1, err);
  /* Inside the guard: the frees are ordered on the stream whose queued
   * copies still read these outputs (async calls return before they ran). */
  aotrun_method_runner_delete_handles(out, num_outputs);
  aotrun_output_placement_after(r->placement);
  aotrun_runner_close_guard(guard);
  if (in != in_stack) free(in);
  if (out != out_stack) free(out);
  if (st != AOTRUN_OK || (call != NULL && call->no_sync)) return st;
  st = aotrun_runner_synchronize(r, stream, err);
  if (st != AOTRUN_OK && call != NULL && call->kept != NULL)
    aotrun_method_runner_delete_handles(call->kept, num_outputs);
  return st;
}

aotrun_status aotrun_method_runner_run(aotrun_method_runner *r,
                                       const DLTensor *inputs,
                                       size_t num_inputs, DLTensor *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err) {
  aotrun_status st =
      aotrun_method_runner_check_inputs(r, inputs, num_inputs, err);
  if (st != AOTRUN_OK) return st;
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream, NULL,
                     err);
}

aotrun_status aotrun_method_runner_run_checked(
    aotrun_method_runner *r, const DLTensor *inputs, size_t num_inputs,
    DLTensor *outputs, size_t num_outputs, void *stream, aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream, NULL,
                     err);
}

aotrun_status aotrun_method_runner_run_checked_call(
    aotrun_method_runner *r, const DLTensor *inputs, size_t num_inputs,
    DLTensor *outputs, size_t num_outputs, void *stream,
    aotrun_runner_call *call, aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream, call,
                     err);
}
