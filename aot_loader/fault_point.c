/*
 * fault_point.c: see fault_point.h.
 */
#include "aot_loader/fault_point.h"

#include <stdatomic.h>
#include <stddef.h>

static _Atomic(aotrun_fault_hook) g_hook;
static _Atomic(void *) g_ctx;

void aotrun_fault_set_hook(aotrun_fault_hook fn, void *ctx) {
  atomic_store(&g_ctx, ctx);
  atomic_store(&g_hook, fn);
}

int aotrun_fault_point(const char *point) {
  aotrun_fault_hook fn =
      atomic_load_explicit(&g_hook, memory_order_acquire);
  if (fn == NULL) return 0;
  return fn(atomic_load(&g_ctx), point);
}
