/* graph_pool.c: see graph_pool.h. */
#include "backend_cuda/graph_pool.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct chunk {
  struct chunk *next;
  char *base;
  size_t size;
  size_t used;
} chunk;

typedef struct block {
  struct block *next;
  char *ptr;
  size_t size; /* rounded */
  int in_use;
} block;

struct aotrun_graph_pool {
  aotrun_pool_raw_ops raw;
  chunk *chunks;
  block *blocks;
  size_t reserved;
  size_t in_use;
};

aotrun_status aotrun_graph_pool_create(const aotrun_pool_raw_ops *raw,
                                       aotrun_graph_pool **out,
                                       aotrun_error *err) {
  *out = NULL;
  if (raw == NULL || raw->alloc == NULL || raw->free == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "graph pool: raw memory ops are incomplete");
  aotrun_graph_pool *p = calloc(1, sizeof *p);
  if (p == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory creating a graph pool");
  p->raw = *raw;
  *out = p;
  return AOTRUN_OK;
}

void aotrun_graph_pool_destroy(aotrun_graph_pool *p) {
  if (p == NULL) return;
  for (block *b = p->blocks; b != NULL;) {
    block *next = b->next;
    free(b);
    b = next;
  }
  for (chunk *c = p->chunks; c != NULL;) {
    chunk *next = c->next;
    p->raw.free(p->raw.ctx, c->base);
    free(c);
    c = next;
  }
  free(p);
}

static size_t round_up(size_t n) {
  size_t a = AOTRUN_GRAPH_POOL_ALIGNMENT;
  if (n == 0) n = 1;
  if (n > SIZE_MAX - a) return 0;
  return (n + a - 1) / a * a;
}

/* Room for `size` bytes at the end of a chunk, adding one if needed. */
static char *carve(aotrun_graph_pool *p, size_t size) {
  chunk *c = p->chunks;
  if (c == NULL || c->size - c->used < size) {
    size_t want = size > AOTRUN_GRAPH_POOL_CHUNK ? size : AOTRUN_GRAPH_POOL_CHUNK;
    chunk *n = calloc(1, sizeof *n);
    if (n == NULL) return NULL;
    n->base = p->raw.alloc(p->raw.ctx, want);
    if (n->base == NULL) {
      free(n);
      return NULL;
    }
    n->size = want;
    n->next = p->chunks;
    p->chunks = n;
    p->reserved += want;
    c = n;
  }
  char *ptr = c->base + c->used;
  c->used += size;
  return ptr;
}

aotrun_status aotrun_graph_pool_reserve(aotrun_graph_pool *p, size_t bytes,
                                        aotrun_error *err) {
  size_t size = round_up(bytes);
  chunk *c = p->chunks;
  if (size != 0 && c != NULL && c->size - c->used >= size) return AOTRUN_OK;
  if (size == 0 || carve(p, size) == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "graph pool: cannot reserve %zu bytes of device "
                            "memory before the capture",
                            bytes > AOTRUN_GRAPH_POOL_CHUNK
                                ? bytes
                                : (size_t)AOTRUN_GRAPH_POOL_CHUNK);
  p->chunks->used -= size; /* room made, nothing handed out */
  return AOTRUN_OK;
}

void *aotrun_graph_pool_alloc(aotrun_graph_pool *p, size_t bytes) {
  size_t size = round_up(bytes);
  if (p == NULL || size == 0) return NULL;
  for (block *b = p->blocks; b != NULL; b = b->next)
    if (!b->in_use && b->size == size) {
      b->in_use = 1;
      p->in_use++;
      return b->ptr;
    }
  block *b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  b->ptr = carve(p, size);
  if (b->ptr == NULL) {
    free(b);
    return NULL;
  }
  b->size = size;
  b->in_use = 1;
  b->next = p->blocks;
  p->blocks = b;
  p->in_use++;
  return b->ptr;
}

void aotrun_graph_pool_free(aotrun_graph_pool *p, void *ptr) {
  if (p == NULL || ptr == NULL) return;
  for (block *b = p->blocks; b != NULL; b = b->next)
    if (b->ptr == ptr && b->in_use) {
      b->in_use = 0;
      p->in_use--;
      return;
    }
}

static void *shim_alloc(void *ctx, size_t bytes, void *stream) {
  (void)stream;
  return aotrun_graph_pool_alloc(ctx, bytes);
}

static void shim_free(void *ctx, void *ptr, void *stream) {
  (void)stream;
  aotrun_graph_pool_free(ctx, ptr);
}

aotrun_shim_allocator aotrun_graph_pool_allocator(aotrun_graph_pool *p) {
  aotrun_shim_allocator a = {p, shim_alloc, shim_free};
  return a;
}

size_t aotrun_graph_pool_reserved(const aotrun_graph_pool *p) {
  return p ? p->reserved : 0;
}

size_t aotrun_graph_pool_in_use(const aotrun_graph_pool *p) {
  return p ? p->in_use : 0;
}
