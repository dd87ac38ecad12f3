/*
 * weight_registry.h: share_weights. The methods of one program share one
 * weight cache (so an FQN used by several methods has one device copy); the
 * registry finds it by program: the host's named-data service (ctx and
 * function), a hash of the manifest's bytes, its size and the device.
 * Refcounted: the cache is destroyed when the last method using it is.
 */
#ifndef AOTRUN_WEIGHT_REGISTRY_H
#define AOTRUN_WEIGHT_REGISTRY_H

#include <stddef.h>

#include "aot_loader/weight_cache.h"
#include "plugin_api/aotrun_plugin.h"

typedef struct aotrun_weight_registry_entry aotrun_weight_registry_entry;

/* Finds or creates the program's cache (memory: cuda_ops). Thread-safe. */
aotrun_status aotrun_weight_registry_acquire(
    const aotrun_host_api *host, const void *manifest, size_t manifest_size,
    int device, const aotrun_device_ops *cuda_ops,
    aotrun_weight_registry_entry **entry, aotrun_weight_cache **cache,
    aotrun_error *err);
/* Drops one reference; call after the runner using the cache is gone.
 * Accepts NULL. */
void aotrun_weight_registry_release(aotrun_weight_registry_entry *entry);
/* Live programs (for tests). */
size_t aotrun_weight_registry_count(void);

#endif /* AOTRUN_WEIGHT_REGISTRY_H */
