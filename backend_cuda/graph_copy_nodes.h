/*
 * graph_copy_nodes.h: what the input and the output copy nodes of a
 * captured graph share (graph_input_nodes.h, graph_output_nodes.h): turning
 * a graph's nodes of one kind on or off together, and the debug line when
 * a call falls back to copies outside the graph.
 */
#ifndef AOTRUN_GRAPH_COPY_NODES_H
#define AOTRUN_GRAPH_COPY_NODES_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "backend_cuda/cuda_graph_state.h"

/* The ops member that turns one node on or off (enable_input_node or
 * enable_output_node). */
typedef aotrun_status (*aotrun_graph_node_enable)(void *ctx, void *exec,
                                                  void *node, int on,
                                                  aotrun_error *err);

/* Turns nodes[0..n) of exec on or off and sets *enabled to `on`; when one
 * refuses, *enabled is -1 (mixed: the next call sets every node again,
 * whichever way it goes) and err says "turning <kind> node I on|off: ". */
aotrun_status aotrun_graph_copy_nodes_switch(const aotrun_graph_ops *ops,
                                             aotrun_graph_node_enable enable,
                                             void *exec, void **nodes,
                                             size_t n, int on,
                                             const char *kind, int *enabled,
                                             aotrun_error *err);

/* Logs at debug: "CUDA graph <kind> nodes off for this call (<why>):
 * <instead>". */
void aotrun_graph_copy_nodes_log_fallback(const aotrun_graph_ops *ops,
                                          const char *kind, const char *why,
                                          const char *instead);

#endif /* AOTRUN_GRAPH_COPY_NODES_H */
