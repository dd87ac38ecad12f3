/* cuda_execute_args.c: see cuda_execute_args.h. */
#include "backend_cuda/cuda_execute_args.h"

#include <string.h>

#define KNOWN_FLAGS AOTRUN_EXECUTE_ASYNC

static void reset_answers(aotrun_execute_args *args) {
  if (AOTRUN_TABLE_HAS(args, managed_outputs) && args->managed_outputs) {
    for (size_t i = 0; i < args->num_outputs; i++)
      args->managed_outputs[i] = NULL;
  }
  if (AOTRUN_TABLE_HAS(args, too_small_output)) args->too_small_output = -1;
  if (AOTRUN_TABLE_HAS(args, needed_ndim)) args->needed_ndim = 0;
}

static aotrun_status check_async_outputs(const aotrun_cuda_call_args *a,
                                         aotrun_error *err) {
  if (!(a->flags & AOTRUN_EXECUTE_ASYNC)) return AOTRUN_OK;
  for (size_t i = 0; i < a->num_outputs; i++) {
    const DLTensor *t = &a->outputs[i];
    int managed = a->managed != NULL && t->data == NULL;
    if (!managed && t->device.device_type == kDLCPU)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "execute_ex: output %zu is in pageable host "
                              "memory (kDLCPU), which AOTRUN_EXECUTE_ASYNC "
                              "cannot fill after returning: pass device "
                              "memory, pinned kDLCUDAHost memory or a "
                              "backend-allocated output, or drop the flag",
                              i);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_cuda_execute_args_read(aotrun_execute_args *args,
                                            aotrun_cuda_call_args *out,
                                            aotrun_error *err) {
  memset(out, 0, sizeof *out);
  if (args == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: args is NULL");
  if (args->struct_size < AOTRUN_EXECUTE_ARGS_MIN_SIZE)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: args->struct_size is %u, less than "
                            "the %zu bytes up to num_outputs",
                            (unsigned)args->struct_size,
                            (size_t)AOTRUN_EXECUTE_ARGS_MIN_SIZE);
  reset_answers(args);
  if (args->flags & ~(uint32_t)KNOWN_FLAGS)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: unknown flags 0x%x (this backend "
                            "knows 0x%x)",
                            (unsigned)(args->flags & ~(uint32_t)KNOWN_FLAGS),
                            (unsigned)KNOWN_FLAGS);
  if ((args->num_inputs && args->inputs == NULL) ||
      (args->num_outputs && args->outputs == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: %zu inputs and %zu outputs, but %s "
                            "array is NULL",
                            args->num_inputs, args->num_outputs,
                            args->inputs == NULL ? "the inputs"
                                                 : "the outputs");
  out->inputs = args->inputs;
  out->num_inputs = args->num_inputs;
  out->outputs = args->outputs;
  out->num_outputs = args->num_outputs;
  out->flags = args->flags;
  if (AOTRUN_TABLE_HAS(args, stream)) out->stream = args->stream;
  if (AOTRUN_TABLE_HAS(args, managed_outputs))
    out->managed = args->managed_outputs;
  return check_async_outputs(out, err);
}

void aotrun_cuda_execute_args_report(aotrun_execute_args *args,
                                     const aotrun_runner_call *call) {
  if (args == NULL || call == NULL || call->too_small < 0) return;
  if (AOTRUN_TABLE_HAS(args, too_small_output))
    args->too_small_output = call->too_small;
  if (AOTRUN_TABLE_HAS(args, needed_ndim))
    args->needed_ndim = call->needed_ndim;
  if (AOTRUN_TABLE_HAS(args, needed_shape))
    for (int32_t d = 0; d < call->needed_ndim && d < AOTRUN_MAX_DIMS; d++)
      args->needed_shape[d] = call->needed_shape[d];
}
