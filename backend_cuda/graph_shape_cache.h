/*
 * graph_shape_cache.h: the shape bookkeeping behind a CUDA graph per shape
 * (cuda_graph_shapes, cuda_graph_state.h): a call's shape signature, which
 * slot's graph was captured with which shapes and how recently it was used,
 * and the new shapes seen once without a graph.
 *
 * It holds no CUDA resources. Slot i here describes slot i of the graph
 * state's captures; the state frees their memory and tells the cache when
 * a slot's graph is committed, replayed, released or moved.
 */
#ifndef AOTRUN_GRAPH_SHAPE_CACHE_H
#define AOTRUN_GRAPH_SHAPE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "backend_cuda/cuda_graph_state.h"

/* The shapes of one slot's graph. */
typedef struct aotrun_graph_shape_slot {
  int64_t *sig;       /* the capture call's signature */
  uint64_t last_used; /* clock of the last capture or replay */
  int committed;      /* the slot holds a graph that ran */
} aotrun_graph_shape_slot;

/* A new shape that ran once without a graph: captured on its next call. */
typedef struct aotrun_graph_seen_shape {
  int64_t *sig;
  uint64_t last_used;
  int used;
} aotrun_graph_seen_shape;

/* Embedded in the graph state; calls on it are serialised with the state's. */
typedef struct aotrun_graph_shape_cache {
  size_t num_inputs;
  size_t limit;      /* slots in use (lookups scan only these) */
  uint64_t clock;    /* one LRU clock for graphs and seen shapes */
  int64_t *call_sig; /* scratch: this call's signature */
  aotrun_graph_shape_slot slots[AOTRUN_GRAPH_MAX_SHAPES];
  aotrun_graph_seen_shape seen[AOTRUN_GRAPH_MAX_SHAPES];
} aotrun_graph_shape_cache;

/* Empty, with a limit of one slot. 0 when out of memory (then c holds
 * nothing to free). */
int aotrun_graph_shape_cache_init(aotrun_graph_shape_cache *c,
                                  size_t num_inputs);
void aotrun_graph_shape_cache_free(aotrun_graph_shape_cache *c);

/* limit in 1..AOTRUN_GRAPH_MAX_SHAPES; seen shapes beyond it are forgotten.
 * Graphs beyond it are the caller's to evict or move below it. */
void aotrun_graph_shape_cache_set_limit(aotrun_graph_shape_cache *c,
                                        size_t limit);
size_t aotrun_graph_shape_cache_limit(const aotrun_graph_shape_cache *c);

/* Makes slot's signature array if it has none. 0 when out of memory. */
int aotrun_graph_shape_cache_reserve(aotrun_graph_shape_cache *c,
                                     size_t slot);
/* The signature of in (rank, dtype, sizes per input): as slot's (reserved)
 * capture shapes, or as this call's. AOTRUN_ERR_INVALID_ARGUMENT for a rank
 * outside 0..AOTRUN_MAX_DIMS. */
aotrun_status aotrun_graph_shape_cache_key_slot(aotrun_graph_shape_cache *c,
                                                size_t slot,
                                                const DLTensor *in,
                                                aotrun_error *err);
aotrun_status aotrun_graph_shape_cache_key_call(aotrun_graph_shape_cache *c,
                                                const DLTensor *in,
                                                aotrun_error *err);

/* Graphs. A slot is committed by the call that captured it, touched by
 * each replay and dropped when released; swap follows the state's slots. */
void aotrun_graph_shape_cache_commit(aotrun_graph_shape_cache *c,
                                     size_t slot);
void aotrun_graph_shape_cache_touch(aotrun_graph_shape_cache *c, size_t slot);
void aotrun_graph_shape_cache_drop(aotrun_graph_shape_cache *c, size_t slot);
void aotrun_graph_shape_cache_swap(aotrun_graph_shape_cache *c, size_t a,
                                   size_t b);
int aotrun_graph_shape_cache_committed(const aotrun_graph_shape_cache *c,
                                       size_t slot);
size_t aotrun_graph_shape_cache_num_graphs(const aotrun_graph_shape_cache *c);
/* The slot (below the limit) whose graph has this call's shapes, or -1. */
int aotrun_graph_shape_cache_find_graph(const aotrun_graph_shape_cache *c);
/* The slot of the least recently used graph (any slot), or -1. */
int aotrun_graph_shape_cache_lru(const aotrun_graph_shape_cache *c);

/* New shapes, at most limit of them (the least recently seen replaced).
 * take: 1 when this call's shapes were seen once, and forgets them. */
int aotrun_graph_shape_cache_take_seen(aotrun_graph_shape_cache *c);
void aotrun_graph_shape_cache_remember_call(aotrun_graph_shape_cache *c);
void aotrun_graph_shape_cache_forget_seen(aotrun_graph_shape_cache *c);

/* The report: graphs most recently used first (after = -1: the first;
 * -1 after the last), and "[1,4] [5]": a slot's input shapes into buf
 * (returns the characters used; size or more when cut short). */
int aotrun_graph_shape_cache_next_mru(const aotrun_graph_shape_cache *c,
                                      int after);
size_t aotrun_graph_shape_cache_put_shapes(const aotrun_graph_shape_cache *c,
                                           size_t slot, char *buf,
                                           size_t size);

#endif /* AOTRUN_GRAPH_SHAPE_CACHE_H */
