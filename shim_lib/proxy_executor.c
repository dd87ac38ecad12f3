/* proxy_executor.c: models with custom ops call them through libtorch's
 * proxy executor; there is none without libtorch, so refuse clearly. */
#include "shim_lib/aotrun_shim.h"

AOTITorchError aoti_torch_proxy_executor_call_function(
    AOTIProxyExecutorHandle proxy_executor, int extern_node_index,
    int num_ints, int64_t *flatten_int_args, int num_tensors,
    AtenTensorHandle *flatten_tensor_args) {
  (void)proxy_executor;
  (void)num_ints;
  (void)flatten_int_args;
  (void)num_tensors;
  (void)flatten_tensor_args;
  return aotrun_shim_fail(
      "aoti_torch_proxy_executor_call_function: extern node %d needs "
      "libtorch's proxy executor (a custom or unlowered op), which aotrun "
      "does not have; re-export without it",
      extern_node_index);
}
