/* cuda_graph_policy.c: see cuda_graph_policy.h. */
#include "backend_cuda/cuda_graph_policy.h"

#include <stdio.h>

int aotrun_cuda_graph_forbid_reason(const aotrun_method_runner *r,
                                    char *reason, size_t size) {
  size_t n = aotrun_method_runner_num_host_constants(r);
  if (n > 0) {
    if (n == 1)
      snprintf(reason, size, "it keeps constant '%s' in host memory",
               aotrun_method_runner_host_constant(r, 0));
    else
      snprintf(reason, size,
               "it keeps constant '%s' (and %zu more) in host memory",
               aotrun_method_runner_host_constant(r, 0), n - 1);
    return 1;
  }
  if (aotrun_method_runner_constants_unlisted(r)) {
    snprintf(reason, size,
             "its constants could not be listed, so a constant in host "
             "memory cannot be ruled out");
    return 1;
  }
  if (!aotrun_method_runner_has_run_single_threaded(r)) {
    snprintf(reason, size,
             "its library has no AOTInductorModelContainerRunSingleThreaded "
             "(Run records an event inside the capture)");
    return 1;
  }
  return 0;
}
