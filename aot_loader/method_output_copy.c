/*
 * method_output_copy.c: a call's outputs into the caller's tensors: each
 * model output described and checked against the caller's DLTensor before
 * the first byte is written, then copied (any strides, any device pair) or
 * kept (execute_ex), or planned for someone else's copy (a CUDA graph's
 * copy nodes: aotrun_method_runner_plan_output_copies). See
 * method_runner.h.
 */
#include "aot_loader/method_runner_internal.h"

#include <stdlib.h>
#include <string.h>

/* What the shim says about one model output. */
typedef struct out_desc {
  int32_t dtype;
  int64_t ndim;
  int64_t *sizes;
  int64_t *strides;
  void *data;
  int32_t device_type;
} out_desc;

static aotrun_status describe_output(AtenTensorHandle h, size_t i, out_desc *o,
                                     aotrun_error *err) {
  if (h == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "output %zu: the model returned no tensor", i);
  if (aoti_torch_get_dtype(h, &o->dtype) || aoti_torch_get_dim(h, &o->ndim) ||
      aoti_torch_get_sizes(h, &o->sizes) ||
      aoti_torch_get_strides(h, &o->strides) ||
      aoti_torch_get_data_ptr(h, &o->data) ||
      aoti_torch_get_device_type(h, &o->device_type))
    return aotrun_runner_shim_failed(err, AOTRUN_ERR_INTERNAL,
                                     "reading the model's output tensor", i);
  return AOTRUN_OK;
}

/* A dynamic dim larger than the caller's room, with execute_ex's report:
 * AOTRUN_ERR_OUTPUT_TOO_SMALL and the needed shape. */
static aotrun_status output_too_small(const aotrun_method_runner *r, size_t i,
                                      const out_desc *o, const DLTensor *dst,
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

static aotrun_status check_output_fits(const aotrun_method_runner *r, size_t i,
                                       const out_desc *o, const DLTensor *dst,
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
        aotrun_dl_scalar_name(o->dtype) ? aotrun_dl_scalar_name(o->dtype)
                                        : "unknown",
        aotrun_dl_dtype_describe(dst->dtype, want, sizeof want));
  if (o->ndim != dst->ndim)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "output %zu (%s) has %lld dims, the caller's "
                            "tensor has %d",
                            i, decl->name, (long long)o->ndim, (int)dst->ndim);
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
  return aotrun_runner_check_device(r, "output", i, decl->name, dst->device,
                                    err);
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
  int compact = runner_is_compact(ndim, o->sizes, o->strides);
  /* Written in place (output_placement.h): nothing to copy. */
  if (compact && o->data == runner_data_of(dst)) return AOTRUN_OK;
  if (compact) {
    st = aotrun_runner_copy_bytes(
        r, runner_data_of(dst), o->data, n * aotrun_dl_itemsize(dst->dtype),
        kind_of(o->device_type, dst->device.device_type), stream, err);
  } else {
    /* Strided source: the shim's copy_ handles any strides and devices. */
    AtenTensorHandle view = NULL;
    st = aotrun_runner_view_of(dst, i, &view, err);
    if (st == AOTRUN_OK && aoti_torch_copy_(view, src, 0) != AOTI_TORCH_SUCCESS)
      st = aotrun_runner_shim_failed(err, AOTRUN_ERR_INTERNAL,
                                     "aoti_torch_copy_", i);
    if (view != NULL) aoti_torch_delete_tensor_object(view);
  }
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "output %zu (%s): ", i, r->io[1][i].name);
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
aotrun_status aotrun_runner_copy_outputs_unsynced(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, void *stream, aotrun_runner_call *call,
    int may_hand_over, int guarded, aotrun_error *err) {
  out_desc stack[RUNNER_STACK_IO];
  out_desc *d =
      num_outputs <= RUNNER_STACK_IO ? stack : calloc(num_outputs, sizeof *d);
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
    st = aotrun_runner_open_guard(r, stream, &guard, err);
  for (size_t i = 0; i < num_outputs && st == AOTRUN_OK; i++)
    st = kept_output(call, &outputs[i])
             ? aotrun_runner_keep_output(r, i, sources[i], may_hand_over,
                                         &call->kept[i], err)
             : copy_one_output(r, i, sources[i], &d[i], &outputs[i], stream,
                               err);
  /* Inside the guard: kept copies are freed on the stream that wrote them. */
  if (st != AOTRUN_OK && call != NULL && call->kept != NULL)
    aotrun_method_runner_delete_handles(call->kept, num_outputs);
  aotrun_runner_close_guard(guard);
  if (d != stack) free(d);
  return st;
}

aotrun_status aotrun_method_runner_copy_outputs(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, void *stream, aotrun_error *err) {
  return aotrun_method_runner_copy_outputs_call(r, sources, outputs,
                                                num_outputs, stream, NULL, err);
}

void aotrun_runner_call_reset(aotrun_runner_call *call, size_t num_outputs) {
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
                                       size_t num_outputs, aotrun_error *err) {
  if (r == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method handle is NULL");
  if (num_outputs != r->num_io[1])
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s returns %zu outputs, got %zu", r->method,
                            r->num_io[1], num_outputs);
  if (num_outputs > 0 && (outputs == NULL || sources == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the outputs array is NULL", r->method);
  return AOTRUN_OK;
}

aotrun_status aotrun_method_runner_copy_outputs_call(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, void *stream, aotrun_runner_call *call,
    aotrun_error *err) {
  aotrun_status st = check_output_args(r, sources, outputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  aotrun_runner_call_reset(call, num_outputs);
  st = aotrun_runner_copy_outputs_unsynced(r, sources, outputs, num_outputs,
                                           stream, call, 0, 0, err);
  if (st != AOTRUN_OK || (call != NULL && call->no_sync)) return st;
  st = aotrun_runner_synchronize(r, stream, err);
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
  aotrun_status st = check_output_args(r, sources, outputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  if (num_outputs > 0 && plan == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method %s: the plan array is NULL", r->method);
  aotrun_runner_call_reset(call, num_outputs);
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
    plan[i] = (aotrun_output_copy){o.data, runner_data_of(&outputs[i]),
                                   runner_numel((int32_t)o.ndim, o.sizes) *
                                       aotrun_dl_itemsize(outputs[i].dtype),
                                   1};
  }
  return AOTRUN_OK;
}
