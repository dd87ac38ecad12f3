/*
 * graph_output_nodes.c: output copies as nodes of the captured graph
 * (graph_output_nodes.h).
 */
#include "backend_cuda/graph_output_nodes.h"

#include "backend_cuda/graph_copy_nodes.h"

#include <string.h>

int aotrun_graph_output_nodes_supported(const aotrun_graph_ops *ops) {
  return ops->plan_outputs && ops->finish_outputs && ops->add_output_nodes &&
         ops->point_output_node && ops->enable_output_node;
}

static int all_direct(const aotrun_output_copy *plan, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!plan[i].direct) return 0;
  return 1;
}

aotrun_status aotrun_graph_output_nodes_attach(const aotrun_graph_ops *ops,
                                               void *graph,
                                               AtenTensorHandle *graph_outputs,
                                               DLTensor *outputs, size_t n,
                                               aotrun_graph_output_nodes *g,
                                               aotrun_error *err) {
  aotrun_graph_output_nodes_forget(g);
  if (n == 0 || !aotrun_graph_output_nodes_supported(ops)) return AOTRUN_OK;
  aotrun_error ignored; /* the copy after the first launch reports it */
  aotrun_error_clear(&ignored);
  if (ops->plan_outputs(ops->ctx, graph_outputs, outputs, n, g->plan,
                        &ignored) != AOTRUN_OK ||
      !all_direct(g->plan, n))
    return AOTRUN_OK;
  memset(g->nodes, 0, n * sizeof *g->nodes);
  aotrun_status st =
      ops->add_output_nodes(ops->ctx, graph, g->plan, n, g->nodes, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "output copies as graph nodes: ");
  memcpy(g->pointed, g->plan, n * sizeof *g->plan);
  g->count = n;
  g->enabled = 1; /* a new node runs */
  return AOTRUN_OK;
}

static int same_copy(const aotrun_output_copy *a, const aotrun_output_copy *b) {
  return a->bytes != 0 && a->src == b->src && a->dst == b->dst &&
         a->bytes == b->bytes;
}

/* Every node pointed at this call's plan (a node already making that copy
 * is left alone: the setter is a driver call); 0 when a setter refused one
 * (the caller turns them all off). */
static int point_all(const aotrun_graph_ops *ops, void *exec,
                     aotrun_graph_output_nodes *g, aotrun_error *why) {
  for (size_t i = 0; i < g->count; i++) {
    if (same_copy(&g->pointed[i], &g->plan[i])) continue;
    memset(&g->pointed[i], 0, sizeof g->pointed[i]);
    if (ops->point_output_node(ops->ctx, exec, g->nodes[i], &g->plan[i],
                               why) != AOTRUN_OK) {
      aotrun_error_prefix(why, "output %zu: ", i);
      return 0;
    }
    g->pointed[i] = g->plan[i];
  }
  return 1;
}

/* All nodes on or off (graph_copy_nodes.h). */
static aotrun_status set_enabled(const aotrun_graph_ops *ops, void *exec,
                                 aotrun_graph_output_nodes *g, int on,
                                 aotrun_error *err) {
  return aotrun_graph_copy_nodes_switch(ops, ops->enable_output_node, exec,
                                        g->nodes, g->count, on, "output",
                                        &g->enabled, err);
}

static void log_fallback(const aotrun_graph_ops *ops, const char *why) {
  aotrun_graph_copy_nodes_log_fallback(ops, "output", why,
                                       "outputs copied after the launch");
}

aotrun_status aotrun_graph_output_nodes_stage(const aotrun_graph_ops *ops,
                                              void *exec,
                                              aotrun_graph_output_nodes *g,
                                              AtenTensorHandle *graph_outputs,
                                              DLTensor *outputs, size_t n,
                                              int *by_nodes,
                                              aotrun_error *err) {
  *by_nodes = 0;
  if (g->count == 0) return AOTRUN_OK;
  aotrun_status st =
      ops->plan_outputs(ops->ctx, graph_outputs, outputs, n, g->plan, err);
  if (st != AOTRUN_OK) return st; /* the caller's tensors: nothing ran */
  aotrun_error why;
  aotrun_error_clear(&why);
  if (!all_direct(g->plan, n)) {
    if (g->enabled != 0)
      log_fallback(ops, "an output is not a plain device-to-device copy");
  } else if (point_all(ops, exec, g, &why) &&
             (g->enabled == 1 ||
              set_enabled(ops, exec, g, 1, &why) == AOTRUN_OK)) {
    *by_nodes = 1;
    return AOTRUN_OK;
  } else {
    log_fallback(ops, why.message);
  }
  /* Off before the launch: a node left on would write whatever buffer it
   * last pointed at. */
  if (g->enabled != 0) return set_enabled(ops, exec, g, 0, err);
  return AOTRUN_OK;
}

aotrun_status aotrun_graph_output_nodes_finish(const aotrun_graph_ops *ops,
                                               int by_nodes,
                                               AtenTensorHandle *graph_outputs,
                                               DLTensor *outputs, size_t n,
                                               aotrun_error *err) {
  if (by_nodes) return ops->finish_outputs(ops->ctx, err);
  return ops->copy_outputs(ops->ctx, graph_outputs, outputs, n, err);
}

void aotrun_graph_output_nodes_forget(aotrun_graph_output_nodes *g) {
  if (g->pointed != NULL)
    memset(g->pointed, 0, g->count * sizeof *g->pointed);
  g->count = 0;
  g->enabled = 0;
}
