/*
 * cuda_graph_state_query.c: what a graph state reports (cuda_graph_state.h):
 * phase, counters, device bytes and the memory report.
 */
#include <stdio.h>

#include "backend_cuda/cuda_graph_state_impl.h"

aotrun_graph_phase aotrun_graph_state_phase(const aotrun_graph_state *s) {
  return s ? s->phase : AOTRUN_GRAPH_DISABLED;
}

int aotrun_graph_state_warmup_left(const aotrun_graph_state *s) {
  return s && s->phase == AOTRUN_GRAPH_WARMUP ? s->warmup_left : 0;
}

int aotrun_graph_state_has_capture(const aotrun_graph_state *s) {
  if (s == NULL) return 0;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    if (s->slots[i].have_shapes) return 1;
  return 0;
}

size_t aotrun_graph_state_num_releases(const aotrun_graph_state *s) {
  return s ? s->num_releases : 0;
}

size_t aotrun_graph_state_num_rerecords(const aotrun_graph_state *s) {
  return s ? s->num_rerecords : 0;
}

size_t aotrun_graph_state_num_replays(const aotrun_graph_state *s) {
  return s ? s->num_replays : 0;
}

size_t aotrun_graph_state_num_input_node_graphs(const aotrun_graph_state *s) {
  size_t n = 0;
  for (size_t i = 0; s != NULL && i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    n += s->slots[i].exec != NULL && s->slots[i].input_nodes.count > 0;
  return n;
}

size_t aotrun_graph_state_num_output_node_graphs(const aotrun_graph_state *s) {
  size_t n = 0;
  for (size_t i = 0; s != NULL && i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    n += s->slots[i].exec != NULL && s->slots[i].output_nodes.count > 0;
  return n;
}

size_t aotrun_graph_state_num_evictions(const aotrun_graph_state *s) {
  return s ? s->num_evictions : 0;
}

size_t aotrun_graph_state_num_graphs(const aotrun_graph_state *s) {
  return s ? aotrun_graph_shape_cache_num_graphs(&s->shapes) : 0;
}

size_t aotrun_graph_state_graph_bytes(const aotrun_graph_state *s) {
  size_t n = 0;
  for (size_t i = 0; s != NULL && i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    if (aotrun_graph_shape_cache_committed(&s->shapes, i))
      n += aotrun_graph_slot_bytes(s, &s->slots[i]);
  return n;
}

const char *aotrun_graph_state_disabled_reason(const aotrun_graph_state *s) {
  if (s == NULL || s->phase != AOTRUN_GRAPH_DISABLED) return "";
  return s->reason;
}

const char *aotrun_graph_state_memory_report(aotrun_graph_state *s) {
  if (s == NULL) return "";
  char *buf = s->report;
  const aotrun_graph_shape_cache *shapes = &s->shapes;
  size_t size = sizeof s->report;
  size_t n = aotrun_graph_shape_cache_num_graphs(shapes);
  size_t used = (size_t)snprintf(buf, size, "%zu graph%s, %zu bytes", n,
                                 n == 1 ? "" : "s",
                                 aotrun_graph_state_graph_bytes(s));
  const char *sep = ": ";
  for (int i = aotrun_graph_shape_cache_next_mru(shapes, -1);
       i >= 0 && used < size;
       i = aotrun_graph_shape_cache_next_mru(shapes, i)) {
    used += (size_t)snprintf(buf + used, size - used, "%s", sep);
    if (used < size)
      used += aotrun_graph_shape_cache_put_shapes(shapes, (size_t)i,
                                                  buf + used, size - used);
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, " %zu",
                               aotrun_graph_slot_bytes(s, &s->slots[i]));
    sep = "; ";
  }
  return buf; /* truncated at REPORT_MAX - 1 characters when long */
}
