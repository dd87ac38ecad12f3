/*
 * graph_output_nodes.h: a captured graph's output copies as copy nodes of
 * the graph itself (option cuda_graph_output_nodes, docs/cuda-graphs.md);
 * the outputs' side of graph_input_nodes.h.
 *
 * Without them a replay ends with one cudaMemcpyAsync per output from the
 * graph's pool into the caller's tensor after the launch. With them each
 * copy is a node after the graph's last kernels, pointed at the call's
 * output before the launch: no copy calls of their own (launch_floor
 * measured 12.5 us for a graph with its input and output copies as nodes
 * against 18.4 us with the copies on the stream, H100).
 *
 * Only where every output of the call is a direct copy (the runner's plan:
 * device memory of the method's device on both sides, a compact source,
 * at least one byte, not a kept output): otherwise the nodes are turned
 * off and the outputs copied after the launch as without them; a later
 * call whose outputs are all direct turns them on again. The runner's
 * checks run before the launch either way, so a caller's tensor that does
 * not fit fails the call before anything ran. Nothing here calls CUDA:
 * the graph ops do (cuda_graph_ops.c, fakes in the CPU tests).
 */
#ifndef AOTRUN_GRAPH_OUTPUT_NODES_H
#define AOTRUN_GRAPH_OUTPUT_NODES_H

#include <stddef.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/output_copy.h"
#include "backend_cuda/cuda_graph_state.h"

/* One graph's output nodes (count 0: none, copy_outputs after the launch). */
typedef struct aotrun_graph_output_nodes {
  void **nodes;               /* num_outputs entries, owned by the slot */
  aotrun_output_copy *plan;   /* num_outputs entries: this call's copies */
  aotrun_output_copy *pointed; /* what each node copies now (bytes 0:
                                  not known, set it at the next call) */
  size_t count;               /* attached nodes: 0 or num_outputs */
  int enabled;                /* as aotrun_graph_input_nodes.enabled */
} aotrun_graph_output_nodes;

/* 1 when the ops have the five output-node members. */
int aotrun_graph_output_nodes_supported(const aotrun_graph_ops *ops);

/* After the capture ended, before instantiate: when every output of the
 * capture call is a direct copy, adds a copy node per output after the
 * graph's leaves and records them in g (its arrays hold n entries). An
 * output that is not direct, or that does not fit the caller's tensor,
 * attaches none and is not an error (the copy after the first launch
 * reports it). On an error (adding a node failed) g has none and the
 * graph must not be used. */
aotrun_status aotrun_graph_output_nodes_attach(const aotrun_graph_ops *ops,
                                               void *graph,
                                               AtenTensorHandle *graph_outputs,
                                               DLTensor *outputs, size_t n,
                                               aotrun_graph_output_nodes *g,
                                               aotrun_error *err);

/* Before a replay's launch (after the input nodes are staged): with nodes,
 * plans the outputs (a check failing fails the call: nothing is
 * launched), then points the nodes at them and turns them on
 * (*by_nodes = 1), or, where a copy is not direct or a setter refuses,
 * turns them off (*by_nodes = 0, logged at debug). Without nodes:
 * *by_nodes = 0 and nothing is done. */
aotrun_status aotrun_graph_output_nodes_stage(const aotrun_graph_ops *ops,
                                              void *exec,
                                              aotrun_graph_output_nodes *g,
                                              AtenTensorHandle *graph_outputs,
                                              DLTensor *outputs, size_t n,
                                              int *by_nodes,
                                              aotrun_error *err);

/* After the launch: finish_outputs where the nodes copied, else
 * copy_outputs. */
aotrun_status aotrun_graph_output_nodes_finish(const aotrun_graph_ops *ops,
                                               int by_nodes,
                                               AtenTensorHandle *graph_outputs,
                                               DLTensor *outputs, size_t n,
                                               aotrun_error *err);

/* Forgets the nodes (their graph was destroyed); keeps the arrays. */
void aotrun_graph_output_nodes_forget(aotrun_graph_output_nodes *g);

#endif /* AOTRUN_GRAPH_OUTPUT_NODES_H */
