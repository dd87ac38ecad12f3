/*
 * method_run.c: one call of a method: fresh input handles (over the
 * caller's data or staged device copies), the model's run, output copies
 * into the caller's tensors (see method_runner.h).
 */
#include "aot_loader/method_runner_internal.h"

#include <stdlib.h>
#include <string.h>

#include "aot_loader/fault_point.h"

/* Up to this many inputs/outputs, per-call arrays live on the stack (no
 * heap allocation on the execute path). */
#define STACK_IO 16

/* ---- input handles ------------------------------------------------------ */

static aotrun_status shim_failed(aotrun_error *err, aotrun_status code,
                                 const char *what, size_t i) {
  return aotrun_error_set(err, code, "%s for input/output %zu failed: %s",
                          what, i, aotrun_shim_last_error());
}

static void *data_of(const DLTensor *t) {
  return t->data == NULL ? NULL : (char *)t->data + t->byte_offset;
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
static aotrun_status view_of(const DLTensor *t, size_t i,
                             AtenTensorHandle *out, aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_create_tensor_from_blob_v2(
      data_of(t), t->ndim, t->shape, strides, 0,
      aotrun_dl_dtype_to_scalar_type(t->dtype),
      shim_device_type(t->device.device_type),
      runner_host_memory(t->device.device_type) ? 0 : t->device.device_id, out,
      LAYOUT_STRIDED, NULL, 0);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return shim_failed(err, AOTRUN_ERR_INTERNAL,
                       "aoti_torch_create_tensor_from_blob_v2", i);
  }
  return AOTRUN_OK;
}

static aotrun_status copy_bytes(aotrun_method_runner *r, void *dst,
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
                                  size_t i, void *stream,
                                  AtenTensorHandle *out, aotrun_error *err) {
  int64_t strides[AOTRUN_MAX_DIMS];
  contiguous_strides(t->ndim, t->shape, strides);
  AOTITorchError rc = aoti_torch_empty_strided(
      t->ndim, t->shape, strides, aotrun_dl_dtype_to_scalar_type(t->dtype),
      SHIM_DEVICE_CUDA, r->device.device_id, out);
  if (rc != AOTI_TORCH_SUCCESS || *out == NULL) {
    *out = NULL;
    return shim_failed(err, AOTRUN_ERR_OUT_OF_MEMORY,
                       "staging (aoti_torch_empty_strided)", i);
  }
  void *dst = NULL;
  (void)aoti_torch_get_data_ptr(*out, &dst);
  size_t bytes = runner_numel(t->ndim, t->shape) * aotrun_dl_itemsize(t->dtype);
  aotrun_status st = copy_bytes(r, dst, data_of(t), bytes,
                                AOTRUN_COPY_HOST_TO_DEVICE, stream, err);
  if (st != AOTRUN_OK) {
    aoti_torch_delete_tensor_object(*out);
    *out = NULL;
    return aotrun_error_prefix(err, "staging input %zu: ", i);
  }
  return AOTRUN_OK;
}

void aotrun_method_runner_delete_handles(AtenTensorHandle *handles,
                                         size_t n) {
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
      st = view_of(t, i, &h[i], err);
    }
    if (st != AOTRUN_OK) {
      aotrun_method_runner_delete_handles(h, i);
      return st;
    }
  }
  return AOTRUN_OK;
}

/* The shim's current stream for staging and strided copies (cuda only). */
static aotrun_status open_guard(aotrun_method_runner *r, void *stream,
                                CUDAStreamGuardHandle *g, aotrun_error *err) {
  *g = NULL;
  if (!runner_is_cuda(r)) return AOTRUN_OK;
  if (aoti_torch_create_cuda_stream_guard(stream, r->device.device_id, g) !=
      AOTI_TORCH_SUCCESS) {
    *g = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "method %s: cannot make %s's stream current: %s",
                            r->method, r->device_str,
                            aotrun_shim_last_error());
  }
  return AOTRUN_OK;
}

static void close_guard(CUDAStreamGuardHandle g) {
  if (g != NULL) (void)aoti_torch_delete_cuda_stream_guard(g);
}

static aotrun_status run_model(aotrun_method_runner *r, AtenTensorHandle *in,
                               size_t n_in, AtenTensorHandle *out,
                               size_t n_out, void *stream,
                               aotrun_error *err) {
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
                            r->method, r->num_io[0], r->num_io[1], n_in,
                            n_out);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_run_handles(aotrun_method_runner *r,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               AtenTensorHandle *outputs,
                                               size_t num_outputs,
                                               void *stream,
                                               aotrun_error *err) {
  aotrun_status st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  /* On the stack for the usual counts: no heap work per call. */
  AtenTensorHandle stack[STACK_IO + 1] = {0};
  AtenTensorHandle *h = num_inputs <= STACK_IO
                            ? stack
                            : calloc(num_inputs + 1, sizeof *h);
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory running %s", r->method);
  st = input_handles(r, inputs, num_inputs, stream, 0, h, err);
  if (st == AOTRUN_OK)
    st = run_model(r, h, num_inputs, outputs, num_outputs, stream, err);
  if (h != stack) free(h);
  return st;
}

/* ---- output copies ------------------------------------------------------ */

/* What the shim says about one model output. */
typedef struct out_desc {
  int32_t dtype;
  int64_t ndim;
  int64_t *sizes;
  int64_t *strides;
  void *data;
  int32_t device_type;
} out_desc;

static aotrun_status describe_output(AtenTensorHandle h, size_t i,
                                     out_desc *o, aotrun_error *err) {
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "output %zu: the model returned no tensor", i);
  if (aoti_torch_get_dtype(h, &o->dtype) || aoti_torch_get_dim(h, &o->ndim) ||
      aoti_torch_get_sizes(h, &o->sizes) ||
      aoti_torch_get_strides(h, &o->strides) ||
      aoti_torch_get_data_ptr(h, &o->data) ||
      aoti_torch_get_device_type(h, &o->device_type))
    return shim_failed(err, AOTRUN_ERR_INTERNAL,
                       "reading the model's output tensor", i);
  return AOTRUN_OK;
}

/* A dynamic dim larger than the caller's room, with execute_ex's report:
 * AOTRUN_ERR_OUTPUT_TOO_SMALL and the needed shape. */
static aotrun_status output_too_small(const aotrun_method_runner *r,
                                      size_t i, const out_desc *o,
                                      const DLTensor *dst,
                                      aotrun_runner_call *call,
                                      aotrun_error *err) {
  char need[256], room[256];
  aotrun_runner_shape_text(o->ndim, o->sizes, need, sizeof need);
  aotrun_runner_shape_text(dst->ndim, dst->shape, room, sizeof room);
  call->too_small = (int64_t)i;
  call->needed_ndim = (int32_t)o->ndim;
  for (int64_t d = 0; d < o->ndim && d < AOTRUN_MAX_DIMS; d++)
    call->needed_shape[d] = o->sizes[d];
  return aotrun_error_set(err, AOTRUN_ERR_OUTPUT_TOO_SMALL,
                          "output %zu (%s) needs shape %s, the caller's "
                          "tensor has room for %s",
                          i, r->io[1][i].name, need, room);
}

static aotrun_status check_output_fits(const aotrun_method_runner *r,
                                       size_t i, const out_desc *o,
                                       const DLTensor *dst,
                                       aotrun_runner_call *call,
                                       aotrun_error *err) {
  const aotrun_io_info *decl = &r->io[1][i];
  char want[64];
  DLDataType src_dtype;
  if (!aotrun_dl_dtype_from_scalar_type(o->dtype, &src_dtype) ||
      !aotrun_dl_same_dtype(src_dtype, dst->dtype))
    return aotrun_error_set(
        err, AOTRUN_ERR_INVALID_ARGUMENT,
        "output %zu (%s) has dtype %s, the caller's tensor has %s", i,
        decl->name,
        aotrun_dl_scalar_name(o->dtype) ? aotrun_dl_scalar_name(o->dtype) : "unknown",
        aotrun_dl_dtype_describe(dst->dtype, want, sizeof want));
  if (o->ndim != dst->ndim)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has %lld dims, the caller's "
                            "tensor has %d",
                            i, decl->name, (long long)o->ndim,
                            (int)dst->ndim);
  if (dst->ndim > 0 && dst->shape == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has no shape array", i,
                            decl->name);
  for (int32_t d = 0; d < dst->ndim; d++) {
    int dynamic = d < decl->ndim && decl->shape[d] == AOTRUN_DYNAMIC_DIM;
    int64_t real = o->sizes[d], room = dst->shape[d];
    if (dynamic && real > room && call != NULL && call->report_too_small)
      return output_too_small(r, i, o, dst, call, err);
    if (dynamic ? real > room : real != room)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "output %zu (%s) has size %lld in dim %d, the "
                              "caller's tensor has %s%lld",
                              i, decl->name, (long long)real, (int)d,
                              dynamic ? "room for " : "", (long long)room);
  }
  if (!runner_is_compact(dst->ndim, dst->shape, dst->strides))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "output %zu (%s) is not contiguous (row-major "
                            "strides are required)",
                            i, decl->name);
  if (dst->data == NULL && runner_numel(dst->ndim, o->sizes) > 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has no data", i, decl->name);
  return aotrun_runner_check_device(r, "output", i, decl->name, dst->device, err);
}

static aotrun_copy_kind kind_of(int32_t src_shim_device, DLDeviceType dst) {
  int src_host = src_shim_device == SHIM_DEVICE_CPU;
  int dst_host = runner_host_memory(dst);
  if (src_host && dst_host) return AOTRUN_COPY_HOST_TO_HOST;
  if (src_host) return AOTRUN_COPY_HOST_TO_DEVICE;
  if (dst_host) return AOTRUN_COPY_DEVICE_TO_HOST;
  return AOTRUN_COPY_DEVICE_TO_DEVICE;
}

/* Copies one output (checked) and writes its real sizes. */
static aotrun_status copy_one_output(aotrun_method_runner *r, size_t i,
                                     AtenTensorHandle src, const out_desc *o,
                                     DLTensor *dst, void *stream,
                                     aotrun_error *err) {
  int32_t ndim = (int32_t)o->ndim;
  aotrun_status st = AOTRUN_OK;
  for (int32_t d = 0; d < ndim; d++) dst->shape[d] = o->sizes[d];
  size_t n = runner_numel(ndim, o->sizes);
  if (n == 0) return AOTRUN_OK;
  if (runner_is_compact(ndim, o->sizes, o->strides)) {
    st = copy_bytes(r, data_of(dst), o->data, n * aotrun_dl_itemsize(dst->dtype),
                    kind_of(o->device_type, dst->device.device_type), stream,
                    err);
  } else {
    /* Strided source: the shim's copy_ handles any strides and devices. */
    AtenTensorHandle view = NULL;
    st = view_of(dst, i, &view, err);
    if (st == AOTRUN_OK && aoti_torch_copy_(view, src, 0) != AOTI_TORCH_SUCCESS)
      st = shim_failed(err, AOTRUN_ERR_INTERNAL, "aoti_torch_copy_", i);
    if (view != NULL) aoti_torch_delete_tensor_object(view);
  }
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "output %zu (%s): ", i,
                               r->io[1][i].name);
  return AOTRUN_OK;
}

static aotrun_status synchronize(aotrun_method_runner *r, void *stream,
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


static int kept_output(const aotrun_runner_call *call, const DLTensor *dst) {
  return call != NULL && call->kept != NULL && dst->data == NULL;
}

/* Whether the copies need the shim's current stream to be `stream`: a
 * strided source goes through aoti_torch_copy_ and a kept output may be
 * copied by the shim, both on its current stream; a compact copy into the
 * caller's tensor names the stream itself. */
static int needs_current_stream(const aotrun_runner_call *call,
                                const DLTensor *outputs, const out_desc *d,
                                size_t n) {
  for (size_t i = 0; i < n; i++)
    if (kept_output(call, &outputs[i]) ||
        (runner_numel((int32_t)d[i].ndim, d[i].sizes) > 0 &&
         !runner_is_compact((int32_t)d[i].ndim, d[i].sizes, d[i].strides)))
      return 1;
  return 0;
}

/* Checks every output before the first byte is written, then copies each
 * on `stream`; no sync. With `guarded` the caller holds the stream guard;
 * without, one is opened only where needs_current_stream says so (the
 * replay of compact outputs into the caller's tensors opens none: no heap
 * work, no cudaGetDevice). Kept outputs (call->kept) are handed over or
 * copied instead (see aotrun_runner_call); on failure none stays kept. */
static aotrun_status copy_outputs_unsynced(aotrun_method_runner *r,
                                           AtenTensorHandle *sources,
                                           DLTensor *outputs,
                                           size_t num_outputs, void *stream,
                                           aotrun_runner_call *call,
                                           int may_hand_over, int guarded,
                                           aotrun_error *err) {
  out_desc stack[STACK_IO];
  out_desc *d = num_outputs <= STACK_IO ? stack
                                        : calloc(num_outputs, sizeof *d);
  if (d == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory copying the outputs of %s",
                            r->method);
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < num_outputs && st == AOTRUN_OK; i++) {
    st = describe_output(sources[i], i, &d[i], err);
    if (st == AOTRUN_OK && !kept_output(call, &outputs[i]))
      st = check_output_fits(r, i, &d[i], &outputs[i], call, err);
  }
  CUDAStreamGuardHandle guard = NULL;
  if (st == AOTRUN_OK && !guarded &&
      needs_current_stream(call, outputs, d, num_outputs))
    st = open_guard(r, stream, &guard, err);
  for (size_t i = 0; i < num_outputs && st == AOTRUN_OK; i++)
    st = kept_output(call, &outputs[i])
             ? aotrun_runner_keep_output(r, i, sources[i], may_hand_over,
                                         &call->kept[i], err)
             : copy_one_output(r, i, sources[i], &d[i], &outputs[i], stream,
                               err);
  /* Inside the guard: kept copies are freed on the stream that wrote them. */
  if (st != AOTRUN_OK && call != NULL && call->kept != NULL)
    aotrun_method_runner_delete_handles(call->kept, num_outputs);
  close_guard(guard);
  if (d != stack) free(d);
  return st;
}

aotrun_status aotrun_method_runner_copy_outputs(aotrun_method_runner *r,
                                                AtenTensorHandle *sources,
                                                DLTensor *outputs,
                                                size_t num_outputs,
                                                void *stream,
                                                aotrun_error *err) {
  return aotrun_method_runner_copy_outputs_call(r, sources, outputs,
                                                num_outputs, stream, NULL,
                                                err);
}

/* Starts a call's report: nothing kept, nothing too small. */
static void call_reset(aotrun_runner_call *call, size_t num_outputs) {
  if (call == NULL) return;
  call->too_small = -1;
  call->needed_ndim = 0;
  if (call->kept != NULL)
    memset(call->kept, 0, num_outputs * sizeof *call->kept);
}

/* The arguments every output entry point takes, checked. */
static aotrun_status check_output_args(const aotrun_method_runner *r,
                                       AtenTensorHandle *sources,
                                       const DLTensor *outputs,
                                       size_t num_outputs,
                                       aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (num_outputs != r->num_io[1])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s returns %zu outputs, got %zu",
                            r->method, r->num_io[1], num_outputs);
  if (num_outputs > 0 && (outputs == NULL || sources == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_copy_outputs_call(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, void *stream, aotrun_runner_call *call,
    aotrun_error *err) {
  aotrun_status st = check_output_args(r, sources, outputs, num_outputs,
                                       err);
  if (st != AOTRUN_OK) return st;
  call_reset(call, num_outputs);
  st = copy_outputs_unsynced(r, sources, outputs, num_outputs,
                                           stream, call, 0, 0, err);
  if (st != AOTRUN_OK || (call != NULL && call->no_sync)) return st;
  st = synchronize(r, stream, err);
  if (st != AOTRUN_OK && call != NULL && call->kept != NULL)
    aotrun_method_runner_delete_handles(call->kept, num_outputs);
  return st;
}

/* A copy a graph node can make: device to device, compact source, bytes. */
static int direct_copy(const out_desc *o, const DLTensor *dst) {
  return o->device_type != SHIM_DEVICE_CPU &&
         !runner_host_memory(dst->device.device_type) &&
         runner_numel((int32_t)o->ndim, o->sizes) > 0 &&
         runner_is_compact((int32_t)o->ndim, o->sizes, o->strides);
}

aotrun_status aotrun_method_runner_plan_output_copies(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, aotrun_runner_call *call, aotrun_output_copy *plan,
    aotrun_error *err) {
  aotrun_status st = check_output_args(r, sources, outputs, num_outputs,
                                       err);
  if (st != AOTRUN_OK) return st;
  if (num_outputs > 0 && plan == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the plan array is NULL", r->method);
  call_reset(call, num_outputs);
  for (size_t i = 0; i < num_outputs; i++) {
    memset(&plan[i], 0, sizeof plan[i]);
    if (kept_output(call, &outputs[i])) continue;
    out_desc o;
    st = describe_output(sources[i], i, &o, err);
    if (st == AOTRUN_OK)
      st = check_output_fits(r, i, &o, &outputs[i], call, err);
    if (st != AOTRUN_OK) return st;
    for (int64_t d = 0; d < o.ndim; d++) outputs[i].shape[d] = o.sizes[d];
    if (!direct_copy(&o, &outputs[i])) continue;
    plan[i] = (aotrun_output_copy){
        o.data, data_of(&outputs[i]),
        runner_numel((int32_t)o.ndim, o.sizes) *
            aotrun_dl_itemsize(outputs[i].dtype),
        1};
  }
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
  return synchronize(r, stream, err);
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
  call_reset(call, num_outputs);
  aotrun_status st = check_handle_args(r, num_inputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  if (num_outputs > 0 && outputs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  AtenTensorHandle in_stack[STACK_IO] = {0}, out_stack[STACK_IO] = {0};
  AtenTensorHandle *in = num_inputs <= STACK_IO
                             ? in_stack
                             : calloc(num_inputs, sizeof *in);
  AtenTensorHandle *out = num_outputs <= STACK_IO
                              ? out_stack
                              : calloc(num_outputs, sizeof *out);
  CUDAStreamGuardHandle guard = NULL;
  if (in == NULL || out == NULL)
    st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory running %s", r->method);
  if (st == AOTRUN_OK) st = open_guard(r, stream, &guard, err);
  if (st == AOTRUN_OK)
    st = input_handles(r, inputs, num_inputs, stream, 1, in, err);
  if (st == AOTRUN_OK)
    st = run_model(r, in, num_inputs, out, num_outputs, stream, err);
  if (st == AOTRUN_OK)
    st = copy_outputs_unsynced(r, out, outputs, num_outputs, stream, call, 1,
                               1, err);
  /* Inside the guard: the frees are ordered on the stream whose queued
   * copies still read these outputs (async calls return before they ran). */
  aotrun_method_runner_delete_handles(out, num_outputs);
  close_guard(guard);
  if (in != in_stack) free(in);
  if (out != out_stack) free(out);
  if (st != AOTRUN_OK || (call != NULL && call->no_sync)) return st;
  st = synchronize(r, stream, err);
  if (st != AOTRUN_OK && call != NULL && call->kept != NULL)
    aotrun_method_runner_delete_handles(call->kept, num_outputs);
  return st;
}

aotrun_status aotrun_method_runner_run(aotrun_method_runner *r,
                                       const DLTensor *inputs,
                                       size_t num_inputs, DLTensor *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err) {
  aotrun_status st = aotrun_method_runner_check_inputs(r, inputs, num_inputs,
                                                       err);
  if (st != AOTRUN_OK) return st;
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream,
                     NULL, err);
}

aotrun_status aotrun_method_runner_run_checked(aotrun_method_runner *r,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               DLTensor *outputs,
                                               size_t num_outputs,
                                               void *stream,
                                               aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream,
                     NULL, err);
}

aotrun_status aotrun_method_runner_run_checked_call(
    aotrun_method_runner *r, const DLTensor *inputs, size_t num_inputs,
    DLTensor *outputs, size_t num_outputs, void *stream,
    aotrun_runner_call *call, aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  return run_checked(r, inputs, num_inputs, outputs, num_outputs, stream,
                     call, err);
}
