/*
 * cuda_graph_state_impl.h: the CUDA graph state's layout, shared by the
 * files that make it up; not for anyone else (cuda_graph_state.h is the
 * interface):
 *   cuda_graph_state.c        create/destroy, phases, options, one call
 *   graph_slot.c              one capture slot's life: host arrays, the
 *                             capture up to its first launch, release,
 *                             eviction
 *   cuda_graph_state_query.c  introspection and the memory report
 */
#ifndef AOTRUN_CUDA_GRAPH_STATE_IMPL_H
#define AOTRUN_CUDA_GRAPH_STATE_IMPL_H

#include "backend_cuda/cuda_graph_state.h"
#include "backend_cuda/graph_input_nodes.h"
#include "backend_cuda/graph_output_nodes.h"
#include "backend_cuda/graph_shape_cache.h"

#define METHOD_NAME_MAX 128
#define REASON_MAX 512
#define REPORT_MAX 2048

/* One capture slot: what one capture holds. Nothing here is the graph's until
 * commit (the first launch succeeded; s->shapes records that, with the slot's
 * shapes). */
typedef struct aotrun_graph_slot {
  DLTensor *static_inputs;   /* shapes = the capture call's (owned arrays) */
  int64_t *static_shapes;    /* num_inputs * AOTRUN_MAX_DIMS */
  void **static_buffers;     /* num_inputs device buffers */
  AtenTensorHandle *outputs; /* num_outputs handles into the pool */
  void *pool;
  void *graph;
  void *exec;
  aotrun_graph_input_nodes input_nodes; /* count 0: copies on the stream */
  aotrun_graph_output_nodes output_nodes; /* count 0: copy_outputs */
  size_t static_bytes; /* bytes of the static buffers */
  int have_shapes;   /* static_inputs describe a capture call */
  int capturing;     /* begin_capture succeeded, end_capture not yet called */
  int pool_installed;
  int done_node;     /* the graph ends in the done counter's node */
} aotrun_graph_slot;

struct aotrun_graph_state {
  aotrun_graph_ops ops;
  char method[METHOD_NAME_MAX];
  DLDevice device;
  size_t num_inputs;
  size_t num_outputs;
  aotrun_graph_phase phase;
  int enabled;   /* requested by the option */
  int forbidden; /* host-memory constant: never leaves Disabled */
  int failed;    /* a capture failed: off until recapture */
  int warmup_left;
  int max_graphs; /* option cuda_graph_shapes; 0: one graph, refusal */
  int input_nodes; /* option cuda_graph_input_nodes */
  int output_nodes; /* option cuda_graph_output_nodes */
  char reason[REASON_MAX];
  aotrun_graph_slot slots[AOTRUN_GRAPH_MAX_SHAPES];
  aotrun_graph_shape_cache shapes; /* slot i's shapes, LRU clock, commit */
  size_t num_rerecords; /* recordings done twice: the pool grew in the first */
  size_t num_releases;
  size_t num_replays;
  size_t num_evictions;
  char report[REPORT_MAX];
};

/* A log line through the ops' log callback. */
void aotrun_graph_state_logf(aotrun_graph_state *s, int32_t level,
                             const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- graph_slot.c ---- */

size_t aotrun_graph_slot_index(const aotrun_graph_state *s,
                               const aotrun_graph_slot *c);
/* 1 while the slot holds a capture, a graph, a pool or shapes. */
int aotrun_graph_slot_holds_something(const aotrun_graph_slot *c);
/* Undoes one slot (its host arrays stay for the next capture). */
void aotrun_graph_slot_release(aotrun_graph_state *s, aotrun_graph_slot *c);
/* Every graph and every remembered shape: the one way state is undone. */
void aotrun_graph_slots_release_all(aotrun_graph_state *s);
/* A slot's host arrays, made when first used (0: out of memory). */
int aotrun_graph_slot_arrays(aotrun_graph_state *s, aotrun_graph_slot *c);
void aotrun_graph_slots_free_arrays(aotrun_graph_state *s);
/* The least recently used graph's slot emptied, counted and logged. */
void aotrun_graph_slot_evict(aotrun_graph_state *s, aotrun_graph_slot *c);
/* A slot for a new capture (NULL: its host arrays cannot be made). */
aotrun_graph_slot *aotrun_graph_slot_for_capture(aotrun_graph_state *s);
/* Steps 1-9 of a capture call (static inputs, pool, record, input nodes,
 * output nodes into the call's outputs, the done counter's node,
 * instantiate, first launch). A failure here happened before the graph
 * ran. */
aotrun_status aotrun_graph_slot_capture_until_launch(aotrun_graph_state *s,
                                                     aotrun_graph_slot *c,
                                                     const DLTensor *in,
                                                     DLTensor *out,
                                                     aotrun_error *err);
/* The slot's device bytes: static buffers and its pool. */
size_t aotrun_graph_slot_bytes(const aotrun_graph_state *s,
                               const aotrun_graph_slot *c);

#endif
