/* block_cache.c: see block_cache.h. Bins in an open-addressed table under
 * one mutex (uncontended: tens of nanoseconds); each bin a stack of
 * pointers. Pure host code: the CUDA calls stay in allocator.c. */
#include "shim_lib/block_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BINS 4096             /* distinct (device, stream, size) keys */
#define SMALL_STEP 512        /* sizes up to 1 MiB round to 512 B */
#define LARGE_STEP (2u << 20) /* larger ones to 2 MiB */
#define DEFAULT_LIMIT ((size_t)2 << 30)

typedef struct bin {
  int used, device;
  void *stream;
  size_t size;
  void **ptrs;
  size_t count, cap;
} bin;

/* Live blocks (handed out by the allocator): pointer -> rounded size,
 * chained; nodes are recycled, never freed. */
#define LIVE_BUCKETS 65536
typedef struct live {
  struct live *next;
  void *ptr;
  size_t size;
} live;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static live *g_live[LIVE_BUCKETS];
static live *g_spare;
static bin g_bins[BINS];
static int g_num_bins;
static size_t g_bytes;
static uint64_t g_hits;
static size_t g_limit;
static int g_limit_read;

size_t aotrun_block_cache_round(size_t bytes) {
  if (bytes == 0) bytes = 1;
  size_t step = bytes <= ((size_t)1 << 20) ? SMALL_STEP : LARGE_STEP;
  if (bytes > SIZE_MAX - step) return 0;
  return (bytes + step - 1) / step * step;
}

/* Called with g_lock held. */
static size_t limit_locked(void) {
  if (!g_limit_read) {
    const char *v = getenv("AOTRUN_ALLOC_CACHE_BYTES");
    char *end = NULL;
    unsigned long long n = v != NULL ? strtoull(v, &end, 10) : 0;
    g_limit = (v != NULL && end != v && *end == '\0') ? (size_t)n
                                                      : DEFAULT_LIMIT;
    g_limit_read = 1;
  }
  return g_limit;
}

static size_t hash_of(int device, void *stream, size_t size) {
  uint64_t h = (uint64_t)(uintptr_t)stream * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)size * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t)(unsigned)device * 0x165667B19E3779F9ull;
  return (size_t)((h ^ (h >> 29)) % BINS);
}

/* The key's bin, or the empty slot where it would go (create: claim it);
 * NULL when absent (or the table is full). Called with g_lock held. */
static bin *find(int device, void *stream, size_t size, int create) {
  size_t h = hash_of(device, stream, size);
  for (size_t i = 0; i < BINS; i++) {
    bin *b = &g_bins[(h + i) % BINS];
    if (b->used && b->device == device && b->stream == stream &&
        b->size == size)
      return b;
    if (!b->used) {
      /* Keep one slot free so every probe ends. */
      if (!create || g_num_bins >= BINS - 1) return NULL;
      b->used = 1;
      b->device = device;
      b->stream = stream;
      b->size = size;
      g_num_bins++;
      return b;
    }
  }
  return NULL;
}

static size_t live_hash(const void *ptr) {
  uint64_t h = (uint64_t)(uintptr_t)ptr * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 48) % LIVE_BUCKETS;
}

/* Called with g_lock held. */
static int live_add(void *ptr, size_t size) {
  live *n = g_spare;
  if (n != NULL)
    g_spare = n->next;
  else if ((n = malloc(sizeof *n)) == NULL)
    return 0;
  size_t h = live_hash(ptr);
  n->ptr = ptr;
  n->size = size;
  n->next = g_live[h];
  g_live[h] = n;
  return 1;
}

/* The live block's size, forgetting it; 0 when unknown. g_lock held. */
static size_t live_remove(void *ptr) {
  for (live **pp = &g_live[live_hash(ptr)]; *pp != NULL; pp = &(*pp)->next) {
    live *n = *pp;
    if (n->ptr != ptr) continue;
    *pp = n->next;
    n->next = g_spare;
    g_spare = n;
    return n->size;
  }
  return 0;
}

void *aotrun_block_cache_take(int device, void *stream, size_t rounded) {
  void *p = NULL;
  pthread_mutex_lock(&g_lock);
  bin *b = find(device, stream, rounded, 0);
  if (b != NULL && b->count > 0 && live_add(b->ptrs[b->count - 1], rounded)) {
    p = b->ptrs[--b->count];
    g_bytes -= rounded;
    g_hits++;
  }
  pthread_mutex_unlock(&g_lock);
  return p;
}

int aotrun_block_cache_note_live(void *ptr, size_t rounded) {
  pthread_mutex_lock(&g_lock);
  int ok = live_add(ptr, rounded);
  pthread_mutex_unlock(&g_lock);
  return ok;
}

int aotrun_block_cache_put(int device, void *stream, void *ptr) {
  int kept = 0;
  pthread_mutex_lock(&g_lock);
  size_t rounded = live_remove(ptr);
  if (rounded > 0 && g_bytes + rounded <= limit_locked()) {
    bin *b = find(device, stream, rounded, 1);
    if (b != NULL && b->count == b->cap) {
      size_t cap = b->cap ? 2 * b->cap : 8;
      void **grown = realloc(b->ptrs, cap * sizeof *grown);
      if (grown != NULL) {
        b->ptrs = grown;
        b->cap = cap;
      }
    }
    if (b != NULL && b->count < b->cap) {
      b->ptrs[b->count++] = ptr;
      g_bytes += rounded;
      kept = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return kept;
}

size_t aotrun_block_cache_drain(int device,
                                void (*release)(void *ctx, int device,
                                                void *ptr),
                                void *ctx) {
  size_t freed = 0;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < BINS; i++) {
    bin *b = &g_bins[i];
    if (!b->used || (device >= 0 && b->device != device)) continue;
    for (size_t k = 0; k < b->count; k++) release(ctx, b->device, b->ptrs[k]);
    freed += b->count * b->size;
    g_bytes -= b->count * b->size;
    b->count = 0;
  }
  pthread_mutex_unlock(&g_lock);
  return freed;
}

size_t aotrun_block_cache_bytes(void) {
  pthread_mutex_lock(&g_lock);
  size_t n = g_bytes;
  pthread_mutex_unlock(&g_lock);
  return n;
}

uint64_t aotrun_block_cache_hits(void) {
  pthread_mutex_lock(&g_lock);
  uint64_t n = g_hits;
  pthread_mutex_unlock(&g_lock);
  return n;
}

size_t aotrun_block_cache_limit(void) {
  pthread_mutex_lock(&g_lock);
  size_t n = limit_locked();
  pthread_mutex_unlock(&g_lock);
  return n;
}

void aotrun_block_cache_set_limit(size_t bytes) {
  pthread_mutex_lock(&g_lock);
  g_limit = bytes;
  g_limit_read = 1;
  pthread_mutex_unlock(&g_lock);
}

size_t aotrun_block_cache_reset(void (*release)(void *ctx, int device,
                                                void *ptr),
                                void *ctx) {
  size_t freed = 0;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < BINS; i++) {
    bin *b = &g_bins[i];
    for (size_t k = 0; k < b->count; k++) release(ctx, b->device, b->ptrs[k]);
    freed += b->count * b->size;
    free(b->ptrs);
  }
  memset(g_bins, 0, sizeof g_bins);
  g_num_bins = 0;
  g_bytes = 0;
  while (g_spare != NULL) {
    live *n = g_spare;
    g_spare = n->next;
    free(n);
  }
  pthread_mutex_unlock(&g_lock);
  return freed;
}
