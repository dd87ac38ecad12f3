/*
 * graph_shape_cache.c: the shape bookkeeping of a graph per shape
 * (graph_shape_cache.h).
 */
#include "backend_cuda/graph_shape_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_plugin.h"

/* A call's shapes as int64s per input: ndim, dtype, then the sizes. */
#define SIG_STRIDE (2 + AOTRUN_MAX_DIMS)

/* Room for num_inputs + 1 rows: calloc(0) may return NULL. */
static int64_t *new_sig(const aotrun_graph_shape_cache *c) {
  return calloc((c->num_inputs + 1) * SIG_STRIDE, sizeof(int64_t));
}

int aotrun_graph_shape_cache_init(aotrun_graph_shape_cache *c,
                                  size_t num_inputs) {
  memset(c, 0, sizeof *c);
  c->num_inputs = num_inputs;
  c->limit = 1;
  c->call_sig = new_sig(c);
  return c->call_sig != NULL;
}

void aotrun_graph_shape_cache_free(aotrun_graph_shape_cache *c) {
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) {
    free(c->slots[i].sig);
    free(c->seen[i].sig);
  }
  free(c->call_sig);
  memset(c, 0, sizeof *c);
}

void aotrun_graph_shape_cache_set_limit(aotrun_graph_shape_cache *c,
                                        size_t limit) {
  c->limit = limit;
  for (size_t i = limit; i < AOTRUN_GRAPH_MAX_SHAPES; i++) c->seen[i].used = 0;
}

size_t aotrun_graph_shape_cache_limit(const aotrun_graph_shape_cache *c) {
  return c->limit;
}

/* ---- signatures ---- */

int aotrun_graph_shape_cache_reserve(aotrun_graph_shape_cache *c,
                                     size_t slot) {
  aotrun_graph_shape_slot *g = &c->slots[slot];
  if (g->sig == NULL) g->sig = new_sig(c);
  return g->sig != NULL;
}

static aotrun_status make_sig(const aotrun_graph_shape_cache *c,
                              const DLTensor *in, int64_t *sig,
                              aotrun_error *err) {
  memset(sig, 0, c->num_inputs * SIG_STRIDE * sizeof *sig);
  for (size_t i = 0; i < c->num_inputs; i++) {
    if (in[i].ndim < 0 || in[i].ndim > AOTRUN_MAX_DIMS)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "input %zu has %d dims (at most %d)", i,
                              (int)in[i].ndim, AOTRUN_MAX_DIMS);
    int64_t *row = sig + i * SIG_STRIDE;
    row[0] = in[i].ndim;
    row[1] = (int64_t)in[i].dtype.code | (int64_t)in[i].dtype.bits << 8 |
             (int64_t)in[i].dtype.lanes << 16;
    for (int32_t d = 0; d < in[i].ndim; d++) row[2 + d] = in[i].shape[d];
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_graph_shape_cache_key_slot(aotrun_graph_shape_cache *c,
                                                size_t slot,
                                                const DLTensor *in,
                                                aotrun_error *err) {
  return make_sig(c, in, c->slots[slot].sig, err);
}

aotrun_status aotrun_graph_shape_cache_key_call(aotrun_graph_shape_cache *c,
                                                const DLTensor *in,
                                                aotrun_error *err) {
  return make_sig(c, in, c->call_sig, err);
}

static int same_sig(const aotrun_graph_shape_cache *c, const int64_t *a,
                    const int64_t *b) {
  return memcmp(a, b, c->num_inputs * SIG_STRIDE * sizeof *a) == 0;
}

/* ---- graphs ---- */

void aotrun_graph_shape_cache_commit(aotrun_graph_shape_cache *c,
                                     size_t slot) {
  c->slots[slot].committed = 1;
  c->slots[slot].last_used = ++c->clock;
}

void aotrun_graph_shape_cache_touch(aotrun_graph_shape_cache *c, size_t slot) {
  c->slots[slot].last_used = ++c->clock;
}

void aotrun_graph_shape_cache_drop(aotrun_graph_shape_cache *c, size_t slot) {
  c->slots[slot].committed = 0;
}

void aotrun_graph_shape_cache_swap(aotrun_graph_shape_cache *c, size_t a,
                                   size_t b) {
  aotrun_graph_shape_slot tmp = c->slots[a];
  c->slots[a] = c->slots[b];
  c->slots[b] = tmp;
}

int aotrun_graph_shape_cache_committed(const aotrun_graph_shape_cache *c,
                                       size_t slot) {
  return c->slots[slot].committed;
}

size_t aotrun_graph_shape_cache_num_graphs(const aotrun_graph_shape_cache *c) {
  size_t n = 0;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++)
    n += c->slots[i].committed != 0;
  return n;
}

int aotrun_graph_shape_cache_find_graph(const aotrun_graph_shape_cache *c) {
  for (size_t i = 0; i < c->limit; i++) {
    const aotrun_graph_shape_slot *g = &c->slots[i];
    if (g->committed && same_sig(c, g->sig, c->call_sig)) return (int)i;
  }
  return -1;
}

int aotrun_graph_shape_cache_lru(const aotrun_graph_shape_cache *c) {
  int best = -1;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) {
    const aotrun_graph_shape_slot *g = &c->slots[i];
    if (g->committed &&
        (best < 0 || g->last_used < c->slots[best].last_used))
      best = (int)i;
  }
  return best;
}

/* ---- new shapes seen once ---- */

static aotrun_graph_seen_shape *find_seen(aotrun_graph_shape_cache *c) {
  for (size_t i = 0; i < c->limit; i++)
    if (c->seen[i].used && same_sig(c, c->seen[i].sig, c->call_sig))
      return &c->seen[i];
  return NULL;
}

int aotrun_graph_shape_cache_take_seen(aotrun_graph_shape_cache *c) {
  aotrun_graph_seen_shape *seen = find_seen(c);
  if (seen == NULL) return 0;
  seen->used = 0;
  return 1;
}

/* A shape that cannot be remembered (out of memory) is new again next
 * time: one more call without a graph, nothing worse. */
void aotrun_graph_shape_cache_remember_call(aotrun_graph_shape_cache *c) {
  aotrun_graph_seen_shape *slot = &c->seen[0];
  for (size_t i = 0; i < c->limit; i++) {
    aotrun_graph_seen_shape *e = &c->seen[i];
    if (!e->used) {
      slot = e;
      break;
    }
    if (e->last_used < slot->last_used) slot = e;
  }
  if (slot->sig == NULL && (slot->sig = new_sig(c)) == NULL) return;
  memcpy(slot->sig, c->call_sig,
         c->num_inputs * SIG_STRIDE * sizeof *slot->sig);
  slot->used = 1;
  slot->last_used = ++c->clock;
}

void aotrun_graph_shape_cache_forget_seen(aotrun_graph_shape_cache *c) {
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) c->seen[i].used = 0;
}

/* ---- the report ---- */

int aotrun_graph_shape_cache_next_mru(const aotrun_graph_shape_cache *c,
                                      int after) {
  uint64_t before = after < 0 ? 0 : c->slots[after].last_used; /* 0: any */
  int best = -1;
  for (size_t i = 0; i < AOTRUN_GRAPH_MAX_SHAPES; i++) {
    const aotrun_graph_shape_slot *g = &c->slots[i];
    if (!g->committed || (before != 0 && g->last_used >= before)) continue;
    if (best < 0 || g->last_used > c->slots[best].last_used) best = (int)i;
  }
  return best;
}

/* From the signature: the capture call's shapes, as its static inputs. */
size_t aotrun_graph_shape_cache_put_shapes(const aotrun_graph_shape_cache *c,
                                           size_t slot, char *buf,
                                           size_t size) {
  size_t used = 0;
  for (size_t i = 0; i < c->num_inputs && used < size; i++) {
    const int64_t *row = c->slots[slot].sig + i * SIG_STRIDE;
    used += (size_t)snprintf(buf + used, size - used, "%s[", i ? " " : "");
    for (int64_t d = 0; d < row[0] && used < size; d++)
      used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                               d ? "," : "", (long long)row[2 + d]);
    if (used < size) used += (size_t)snprintf(buf + used, size - used, "]");
  }
  return used;
}
