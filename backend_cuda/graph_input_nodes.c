/*
 * graph_input_nodes.c: input copies as nodes of the captured graph
 * (graph_input_nodes.h).
 */
#include "backend_cuda/graph_input_nodes.h"

#include <string.h>

#include "aot_loader/dl_dtype.h"
#include "backend_cuda/graph_copy_nodes.h"

static int has_node_ops(const aotrun_graph_ops *ops) {
  return ops->add_input_nodes && ops->point_input_node &&
         ops->enable_input_node;
}

/* Device memory of `device` that a device-to-device node can read. */
static int on_device(const DLTensor *t, DLDevice device) {
  return t->device.device_type == kDLCUDA &&
         t->device.device_id == device.device_id && t->data != NULL &&
         aotrun_dl_nbytes(t) > 0;
}

static const void *source_of(const DLTensor *t) {
  return (const char *)t->data + t->byte_offset;
}

static int all_on_device(const DLTensor *in, size_t n, DLDevice device) {
  for (size_t i = 0; i < n; i++)
    if (!on_device(&in[i], device)) return 0;
  return 1;
}

int aotrun_graph_input_nodes_usable(const aotrun_graph_ops *ops,
                                    const DLTensor *inputs, size_t n,
                                    DLDevice device) {
  return n > 0 && has_node_ops(ops) && all_on_device(inputs, n, device);
}

aotrun_status aotrun_graph_input_nodes_attach(const aotrun_graph_ops *ops,
                                              void *graph,
                                              const DLTensor *inputs,
                                              const DLTensor *static_inputs,
                                              size_t n,
                                              aotrun_graph_input_nodes *g,
                                              aotrun_error *err) {
  aotrun_graph_input_nodes_forget(g);
  memset(g->nodes, 0, n * sizeof *g->nodes);
  aotrun_status st = ops->add_input_nodes(ops->ctx, graph, inputs,
                                          static_inputs, n, g->nodes, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "input copies as graph nodes: ");
  for (size_t i = 0; i < n; i++) g->pointed[i] = source_of(&inputs[i]);
  g->count = n;
  g->enabled = 1; /* a new node runs */
  return AOTRUN_OK;
}

static void log_fallback(const aotrun_graph_ops *ops, const char *why) {
  aotrun_graph_copy_nodes_log_fallback(ops, "input", why,
                                       "inputs copied on the stream");
}

/* All nodes pointed at this call's inputs; 0 when a setter refused one
 * (the nodes are then in a mixed state: the caller turns them off). The
 * setter is a driver call per node (about a microsecond): a node already
 * reading the input's address is not set again. The byte count cannot
 * differ: a replay's input shapes are the capture's. */
static int point_all(const aotrun_graph_ops *ops, void *exec,
                     aotrun_graph_input_nodes *g, const DLTensor *in,
                     const DLTensor *st, aotrun_error *why) {
  for (size_t i = 0; i < g->count; i++) {
    const void *src = source_of(&in[i]);
    if (g->pointed[i] == src) continue;
    g->pointed[i] = NULL; /* a refused setter may have left it either way */
    if (ops->point_input_node(ops->ctx, exec, g->nodes[i], &in[i], &st[i],
                              why) != AOTRUN_OK) {
      aotrun_error_prefix(why, "input %zu: ", i);
      return 0;
    }
    g->pointed[i] = src;
  }
  return 1;
}

/* All nodes on or off (graph_copy_nodes.h). */
static aotrun_status set_enabled(const aotrun_graph_ops *ops, void *exec,
                                 aotrun_graph_input_nodes *g, int on,
                                 aotrun_error *err) {
  return aotrun_graph_copy_nodes_switch(ops, ops->enable_input_node, exec,
                                        g->nodes, g->count, on, "input",
                                        &g->enabled, err);
}

aotrun_status aotrun_graph_input_nodes_stage(const aotrun_graph_ops *ops,
                                             void *exec,
                                             aotrun_graph_input_nodes *g,
                                             const DLTensor *inputs,
                                             const DLTensor *static_inputs,
                                             size_t n, DLDevice device,
                                             aotrun_error *err) {
  if (g->count == 0)
    return ops->copy_inputs(ops->ctx, inputs, static_inputs, n, err);
  aotrun_error why;
  aotrun_error_clear(&why);
  if (!all_on_device(inputs, n, device)) {
    if (g->enabled != 0)
      log_fallback(ops, "an input is not in device memory");
  } else if (point_all(ops, exec, g, inputs, static_inputs, &why) &&
             (g->enabled == 1 ||
              set_enabled(ops, exec, g, 1, &why) == AOTRUN_OK)) {
    return AOTRUN_OK;
  } else {
    log_fallback(ops, why.message);
  }
  /* Off before the stream copies: a node left on would overwrite them
   * with whatever it last pointed at. */
  if (g->enabled != 0) {
    aotrun_status st = set_enabled(ops, exec, g, 0, err);
    if (st != AOTRUN_OK) return st;
  }
  return ops->copy_inputs(ops->ctx, inputs, static_inputs, n, err);
}

void aotrun_graph_input_nodes_forget(aotrun_graph_input_nodes *g) {
  g->count = 0;
  g->enabled = 0;
}
