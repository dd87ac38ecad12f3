/*
 * graph_input_nodes.h: a captured graph's input copies as copy nodes of the
 * graph itself (option cuda_graph_input_nodes, docs/cuda-graphs.md).
 *
 * Without them a replay is: one cudaMemcpyAsync per input into the graph's
 * static buffers, the launch, the output copies. With them the copies run
 * inside the graph, pointed at each call's inputs through the executable
 * graph's node setter before the launch: no launch of their own, no gap
 * between the copies and the first kernel (launch_floor measured 10.4 us
 * against 15.5 us for one copy each way and one kernel, H100).
 *
 * Only where every input of the capture call and of a replay is device
 * memory of the method's device with at least one byte: the setter cannot
 * turn a device-to-device node into a host-to-device one. A replay with a
 * host input (or a setter that refuses a pointer) disables the nodes and
 * copies on the stream as without them; the next all-device replay enables
 * them again. Nothing here calls CUDA: the graph ops do (cuda_graph_ops.c,
 * fakes in the CPU tests).
 */
#ifndef AOTRUN_GRAPH_INPUT_NODES_H
#define AOTRUN_GRAPH_INPUT_NODES_H

#include <stddef.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "backend_cuda/cuda_graph_state.h"

/* One graph's nodes (count 0: none, inputs are copied on the stream). */
typedef struct aotrun_graph_input_nodes {
  void **nodes;  /* num_inputs entries, owned by the capture slot */
  /* The address each node of the executable graph reads now (num_inputs
   * entries, owned by the slot; NULL: not known, set it at the next call).
   * A caller passing the same buffers as last time costs no setter call. */
  const void **pointed;
  size_t count;  /* attached nodes: 0 or num_inputs */
  int enabled;   /* 1: the nodes run at the next launch, 0: they do not,
                    -1: some may (a switch failed half way) */
} aotrun_graph_input_nodes;

/* 1 when the ops have the three node members and every inputs[i] is
 * kDLCUDA memory of `device` with at least one byte. */
int aotrun_graph_input_nodes_usable(const aotrun_graph_ops *ops,
                                    const DLTensor *inputs, size_t n,
                                    DLDevice device);

/* After the capture ended, before instantiate: adds a copy node per input
 * (inputs[i] -> static_inputs[i]) ahead of the graph's root nodes and
 * records them in g (nodes must hold n entries). On failure g has none and
 * the graph must not be used (it may hold some of the nodes). */
aotrun_status aotrun_graph_input_nodes_attach(const aotrun_graph_ops *ops,
                                              void *graph,
                                              const DLTensor *inputs,
                                              const DLTensor *static_inputs,
                                              size_t n,
                                              aotrun_graph_input_nodes *g,
                                              aotrun_error *err);

/* Before a replay's launch: points g's nodes at inputs (a node already
 * reading that address is left alone; enabling them if they were off), or,
 * where that cannot be (a host input, a setter refusing a pointer: logged at
 * debug through ops->log), turns them off and queues ops->copy_inputs on the
 * stream. Without nodes: copy_inputs. An error only where neither way is
 * left (the nodes cannot be turned off, or the copy fails). */
aotrun_status aotrun_graph_input_nodes_stage(const aotrun_graph_ops *ops,
                                             void *exec,
                                             aotrun_graph_input_nodes *g,
                                             const DLTensor *inputs,
                                             const DLTensor *static_inputs,
                                             size_t n, DLDevice device,
                                             aotrun_error *err);

/* Forgets the nodes (their graph was destroyed); keeps the array. */
void aotrun_graph_input_nodes_forget(aotrun_graph_input_nodes *g);

#endif /* AOTRUN_GRAPH_INPUT_NODES_H */
