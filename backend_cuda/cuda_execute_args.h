/*
 * cuda_execute_args.h: execute_ex's aotrun_execute_args read and answered
 * as the ABI's growth rule says (CUDA-free, so CPU tests drive it): only
 * the members the caller's struct_size covers are read or written
 * (AOTRUN_TABLE_HAS), flags this build does not know are refused, and
 * what the CUDA backend cannot do asynchronously is refused before any
 * work is queued.
 */
#ifndef AOTRUN_CUDA_EXECUTE_ARGS_H
#define AOTRUN_CUDA_EXECUTE_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/method_runner.h"
#include "plugin_api/aotrun_plugin.h"

/* The members this call uses, with those the caller's struct lacks as
 * their defaults (no stream, no managed outputs). */
typedef struct aotrun_cuda_call_args {
  const DLTensor *inputs;
  size_t num_inputs;
  DLTensor *outputs;
  size_t num_outputs;
  uint32_t flags;
  void *stream;               /* NULL: the method's own stream */
  DLManagedTensor **managed;  /* NULL: none requested */
} aotrun_cuda_call_args;

/* Smallest struct_size execute_ex accepts: through num_outputs. */
#define AOTRUN_EXECUTE_ARGS_MIN_SIZE \
  AOTRUN_MEMBER_END(aotrun_execute_args, num_outputs)

/* Reads *args into *out and resets what the plugin answers in it (every
 * managed_outputs entry NULL, too_small_output -1, needed_ndim 0), each
 * only where struct_size covers it. AOTRUN_ERR_INVALID_ARGUMENT for NULL
 * args, a struct_size below AOTRUN_EXECUTE_ARGS_MIN_SIZE, an unknown flag,
 * NULL arrays with nonzero counts, or AOTRUN_EXECUTE_ASYNC with an output
 * in pageable host memory (kDLCPU: a copy into it cannot be queued; use
 * device memory, pinned kDLCUDAHost memory or a managed output). */
aotrun_status aotrun_cuda_execute_args_read(aotrun_execute_args *args,
                                            aotrun_cuda_call_args *out,
                                            aotrun_error *err);

/* Writes the call's too-small report (call->too_small >= 0) into the out
 * members struct_size covers. */
void aotrun_cuda_execute_args_report(aotrun_execute_args *args,
                                     const aotrun_runner_call *call);

#endif /* AOTRUN_CUDA_EXECUTE_ARGS_H */
