/* gemm_algo_cache.c: see gemm_algo_cache.h. Open addressing over a fixed
 * table under one mutex (uncontended: tens of nanoseconds). */
#include "shim_lib/fallback/gemm_algo_cache.h"

#include <pthread.h>
#include <string.h>

typedef struct slot {
  int used;
  int has_algo; /* 0: "no algorithm" */
  aotrun_fb_algo_key key;
  cublasLtMatmulAlgo_t algo;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot g_slots[AOTRUN_FB_ALGO_CACHE_SLOTS];
static int g_size;
static uint64_t g_hits;

/* FNV-1a over the key's bytes. */
static size_t hash_of(const aotrun_fb_algo_key *key) {
  const unsigned char *p = (const unsigned char *)key;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *key; i++) h = (h ^ p[i]) * 1099511628211ull;
  return (size_t)(h % AOTRUN_FB_ALGO_CACHE_SLOTS);
}

/* The key's slot, or the empty slot where it would go; NULL when the
 * table is full and the key is not in it. Called with g_lock held. */
static slot *probe(const aotrun_fb_algo_key *key) {
  size_t h = hash_of(key);
  for (size_t i = 0; i < AOTRUN_FB_ALGO_CACHE_SLOTS; i++) {
    slot *s = &g_slots[(h + i) % AOTRUN_FB_ALGO_CACHE_SLOTS];
    if (!s->used || memcmp(&s->key, key, sizeof *key) == 0) return s;
  }
  return NULL;
}

aotrun_fb_algo_answer aotrun_fb_algo_cache_find(const aotrun_fb_algo_key *key,
                                                cublasLtMatmulAlgo_t *algo) {
  aotrun_fb_algo_answer a = AOTRUN_FB_ALGO_UNKNOWN;
  pthread_mutex_lock(&g_lock);
  slot *s = probe(key);
  if (s != NULL && s->used) {
    a = s->has_algo ? AOTRUN_FB_ALGO_FOUND : AOTRUN_FB_ALGO_NONE;
    if (s->has_algo) *algo = s->algo;
    g_hits++;
  }
  pthread_mutex_unlock(&g_lock);
  return a;
}

void aotrun_fb_algo_cache_put(const aotrun_fb_algo_key *key,
                              const cublasLtMatmulAlgo_t *algo) {
  pthread_mutex_lock(&g_lock);
  slot *s = probe(key);
  /* Keep one slot free so a probe always ends at an empty slot or its key. */
  if (s != NULL && !s->used && g_size < AOTRUN_FB_ALGO_CACHE_SLOTS - 1) {
    s->used = 1;
    s->has_algo = algo != NULL;
    s->key = *key;
    if (algo != NULL) s->algo = *algo;
    g_size++;
  }
  pthread_mutex_unlock(&g_lock);
}

int aotrun_fb_algo_cache_size(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_size;
  pthread_mutex_unlock(&g_lock);
  return n;
}

uint64_t aotrun_fb_algo_cache_hits(void) {
  pthread_mutex_lock(&g_lock);
  uint64_t n = g_hits;
  pthread_mutex_unlock(&g_lock);
  return n;
}

void aotrun_fb_algo_cache_clear(void) {
  pthread_mutex_lock(&g_lock);
  memset(g_slots, 0, sizeof g_slots);
  g_size = 0;
  g_hits = 0;
  pthread_mutex_unlock(&g_lock);
}
