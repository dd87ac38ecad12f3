/* weight_registry.c: see weight_registry.h. */
#include "backend_cuda/weight_registry.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct aotrun_weight_registry_entry {
  struct aotrun_weight_registry_entry *next;
  void *host_ctx;
  void *named_data_fn;
  uint64_t hash;
  size_t size;
  int device;
  int refs;
  aotrun_weight_cache *cache;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static aotrun_weight_registry_entry *g_entries;

/* FNV-1a over the manifest: two programs with different manifests never
 * share (a collision needs equal hash AND size AND host). */
static uint64_t fnv1a(const void *data, size_t size) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < size; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static void *fn_key(const aotrun_host_api *host) {
  void *k = NULL;
  memcpy(&k, &host->get_named_data, sizeof k);
  return k;
}

aotrun_status aotrun_weight_registry_acquire(
    const aotrun_host_api *host, const void *manifest, size_t manifest_size,
    int device, const aotrun_device_ops *cuda_ops,
    aotrun_weight_registry_entry **entry, aotrun_weight_cache **cache,
    aotrun_error *err) {
  *entry = NULL;
  *cache = NULL;
  uint64_t hash = fnv1a(manifest, manifest_size);
  aotrun_status st = AOTRUN_OK;
  pthread_mutex_lock(&g_mu);
  aotrun_weight_registry_entry *e = g_entries;
  for (; e != NULL; e = e->next)
    if (e->host_ctx == host->ctx && e->named_data_fn == fn_key(host) &&
        e->hash == hash && e->size == manifest_size && e->device == device)
      break;
  if (e != NULL) {
    e->refs++;
  } else {
    e = calloc(1, sizeof *e);
    if (e == NULL) {
      st = aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory for the weight registry");
    } else {
      st = aotrun_weight_cache_create(cuda_ops, NULL, host->log, host->ctx,
                                      &e->cache, err);
      if (st != AOTRUN_OK) {
        free(e);
        e = NULL;
      }
    }
    if (e != NULL) {
      e->host_ctx = host->ctx;
      e->named_data_fn = fn_key(host);
      e->hash = hash;
      e->size = manifest_size;
      e->device = device;
      e->refs = 1;
      e->next = g_entries;
      g_entries = e;
    }
  }
  if (e != NULL) {
    *entry = e;
    *cache = e->cache;
  }
  pthread_mutex_unlock(&g_mu);
  return st;
}

void aotrun_weight_registry_release(aotrun_weight_registry_entry *entry) {
  if (entry == NULL) return;
  pthread_mutex_lock(&g_mu);
  int last = --entry->refs == 0;
  if (last) {
    aotrun_weight_registry_entry **pp = &g_entries;
    while (*pp != entry) pp = &(*pp)->next;
    *pp = entry->next;
  }
  pthread_mutex_unlock(&g_mu);
  if (last) {
    aotrun_weight_cache_destroy(entry->cache);
    free(entry);
  }
}

size_t aotrun_weight_registry_count(void) {
  pthread_mutex_lock(&g_mu);
  size_t n = 0;
  for (aotrun_weight_registry_entry *e = g_entries; e; e = e->next) n++;
  pthread_mutex_unlock(&g_mu);
  return n;
}
