/*
 * minimal_ext.h: the one extension the minimal test backend offers through
 * get_extension (ABI 1.1): "minimal.stats.v1", a static table. This is the
 * extension's header for hosts; minimal_plugin.c declares the same layout
 * (it is a one-file plugin), and the tests check struct_size against it.
 */
#ifndef AOTRUN_MINIMAL_EXT_H
#define AOTRUN_MINIMAL_EXT_H

#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

#define MINIMAL_EXT_STATS_V1 "minimal.stats.v1"

typedef struct minimal_stats_v1 {
  uint32_t struct_size; /* sizeof(minimal_stats_v1) in the plugin's build */
  /* Successful execute calls on `method` since init. */
  int64_t (*call_count)(const aotrun_method *method);
  /* The backend's name, as get_name (to tell variants apart). */
  const char *(*backend)(void);
} minimal_stats_v1;

/* "minimal.unload.v1": what a test host needs to see deinit (ABI 1.1)
 * and the host's failed-init rule. set_hook(hook, ctx) makes the plugin
 * call hook(ctx, event) when deinit runs (MINIMAL_EVENT_DEINIT) and, in the
 * _bad_init variant, when destroy gets the handle its failed init left
 * behind (MINIMAL_EVENT_BOGUS_DESTROY: a host bug). NULL unsets it. */
#define MINIMAL_EXT_UNLOAD_V1 "minimal.unload.v1"
#define MINIMAL_EVENT_DEINIT 1
#define MINIMAL_EVENT_BOGUS_DESTROY 2

typedef struct minimal_unload_v1 {
  uint32_t struct_size;
  void (*set_hook)(void (*hook)(void *ctx, int event), void *ctx);
} minimal_unload_v1;

#endif /* AOTRUN_MINIMAL_EXT_H */
