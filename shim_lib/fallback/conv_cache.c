/* conv_cache.c: the convolution algorithm cache (see conv.h): a fixed table
 * under one mutex, linear search (a model has a handful of shapes), the
 * oldest insertion replaced when full. */
#include <pthread.h>
#include <string.h>

#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/kernel_options.h"

typedef struct entry {
  aotrun_fb_conv_key key;
  aotrun_fb_conv_algo algo;
} entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static entry cache[AOTRUN_FB_CONV_CACHE_CAPACITY];
static int cache_count, cache_next;

void aotrun_fb_conv_key_of(const aotrun_fb_conv *c, int64_t alignment,
                           aotrun_fb_conv_key *key) {
  memset(key, 0, sizeof *key);
  key->device = c->device;
  key->dtype = c->dtype;
  key->transposed = c->transposed;
  key->channels_last = c->channels_last;
  key->rd = c->rd;
  key->groups = c->groups;
  key->alignment = alignment;
  key->tf32 = c->dtype == AOTRUN_FB_FLOAT32 && aotrun_fb_conv_tf32_enabled();
  for (int d = 0; d < c->rd; d++) {
    key->in[d] = c->in_sizes[d];
    key->w[d] = c->w_sizes[d];
    key->out[d] = c->dx_sizes[d]; /* what cuDNN runs */
  }
  for (int i = 0; i < c->rd - 2; i++) {
    key->stride[i] = c->stride[i];
    key->pad[i] = c->dx_pad[i];
    key->dil[i] = c->dil[i];
  }
}

static int find(const aotrun_fb_conv_key *key) {
  for (int i = 0; i < cache_count; i++)
    if (memcmp(&cache[i].key, key, sizeof *key) == 0) return i;
  return -1;
}

int aotrun_fb_conv_cache_lookup(const aotrun_fb_conv_key *key,
                                aotrun_fb_conv_algo *algo) {
  pthread_mutex_lock(&cache_lock);
  int i = find(key);
  if (i >= 0) *algo = cache[i].algo;
  pthread_mutex_unlock(&cache_lock);
  return i >= 0;
}

void aotrun_fb_conv_cache_store(const aotrun_fb_conv_key *key,
                                const aotrun_fb_conv_algo *algo) {
  pthread_mutex_lock(&cache_lock);
  int i = find(key);
  if (i < 0) {
    if (cache_count < AOTRUN_FB_CONV_CACHE_CAPACITY) {
      i = cache_count++;
    } else {
      i = cache_next;
      cache_next = (cache_next + 1) % AOTRUN_FB_CONV_CACHE_CAPACITY;
    }
    cache[i].key = *key;
  }
  cache[i].algo = *algo;
  pthread_mutex_unlock(&cache_lock);
}

int aotrun_fb_conv_cache_size(void) {
  pthread_mutex_lock(&cache_lock);
  int n = cache_count;
  pthread_mutex_unlock(&cache_lock);
  return n;
}

void aotrun_fb_conv_cache_clear(void) {
  pthread_mutex_lock(&cache_lock);
  cache_count = 0;
  cache_next = 0;
  pthread_mutex_unlock(&cache_lock);
}
