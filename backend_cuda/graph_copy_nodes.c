/* graph_copy_nodes.c: see graph_copy_nodes.h. */
#include "backend_cuda/graph_copy_nodes.h"

#include <stdio.h>

aotrun_status aotrun_graph_copy_nodes_switch(const aotrun_graph_ops *ops,
                                             aotrun_graph_node_enable enable,
                                             void *exec, void **nodes,
                                             size_t n, int on,
                                             const char *kind, int *enabled,
                                             aotrun_error *err) {
  *enabled = -1;
  for (size_t i = 0; i < n; i++) {
    aotrun_status st = enable(ops->ctx, exec, nodes[i], on, err);
    if (st != AOTRUN_OK)
      return aotrun_error_prefix(err, "turning %s node %zu %s: ", kind, i,
                                 on ? "on" : "off");
  }
  *enabled = on;
  return AOTRUN_OK;
}

void aotrun_graph_copy_nodes_log_fallback(const aotrun_graph_ops *ops,
                                          const char *kind, const char *why,
                                          const char *instead) {
  char line[AOTRUN_ERROR_MESSAGE_SIZE + 160];
  snprintf(line, sizeof line,
           "CUDA graph %s nodes off for this call (%s): %s", kind, why,
           instead);
  ops->log(ops->ctx, AOTRUN_LOG_DEBUG, line);
}
