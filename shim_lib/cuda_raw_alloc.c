/* cuda_raw_alloc.c: aoti_torch_cuda_caching_allocator_raw_alloc/_delete.
 * Raw pointers carry no storage, so a small registry remembers which
 * allocator (and device) each came from; unknown pointers are refused. */
#include <pthread.h>
#include <stdlib.h>

#include "shim_lib/allocator.h"
#include "shim_lib/cuda_context.h"

typedef struct raw_block {
  void *ptr;
  int32_t device;
  aotrun_shim_allocator allocator;
} raw_block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static raw_block *g_blocks;
static size_t g_count, g_cap;

static int remember(const raw_block *b) {
  pthread_mutex_lock(&g_lock);
  int ok = 1;
  if (g_count == g_cap) {
    size_t cap = g_cap ? 2 * g_cap : 16;
    raw_block *nb = realloc(g_blocks, cap * sizeof *nb);
    if (nb) {
      g_blocks = nb;
      g_cap = cap;
    } else {
      ok = 0;
    }
  }
  if (ok) g_blocks[g_count++] = *b;
  pthread_mutex_unlock(&g_lock);
  return ok;
}

static int forget(void *ptr, raw_block *out) {
  pthread_mutex_lock(&g_lock);
  int found = 0;
  for (size_t i = 0; i < g_count; i++) {
    if (g_blocks[i].ptr == ptr) {
      *out = g_blocks[i];
      g_blocks[i] = g_blocks[--g_count];
      found = 1;
      break;
    }
  }
  if (g_count == 0) { /* nothing left: drop the array (no leak at exit) */
    free(g_blocks);
    g_blocks = NULL;
    g_cap = 0;
  }
  pthread_mutex_unlock(&g_lock);
  return found;
}

AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes,
                                                           void **ret_ptr) {
  static const char fn[] = "aoti_torch_cuda_caching_allocator_raw_alloc";
  if (!ret_ptr) return aotrun_shim_fail("%s: ret_ptr is NULL", fn);
  *ret_ptr = NULL;
  if (nbytes == 0) return AOTI_TORCH_SUCCESS;
  raw_block b;
  b.device = aotrun_shim_current_device();
  b.allocator = *aotrun_thread_allocator();
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, b.device, &scope)) return AOTI_TORCH_FAILURE;
  void *stream = aotrun_cuda_stream_for(b.device);
  b.ptr = b.allocator.alloc(b.allocator.ctx, (size_t)nbytes, stream);
  if (b.ptr && !remember(&b)) {
    b.allocator.free(b.allocator.ctx, b.ptr, stream);
    b.ptr = NULL;
  }
  aotrun_cuda_device_exit(&scope);
  if (!b.ptr)
    return aotrun_shim_fail("%s: cannot allocate %llu bytes on cuda:%d", fn,
                            (unsigned long long)nbytes, (int)b.device);
  *ret_ptr = b.ptr;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void *ptr) {
  static const char fn[] = "aoti_torch_cuda_caching_allocator_raw_delete";
  if (!ptr) return AOTI_TORCH_SUCCESS;
  raw_block b;
  if (!forget(ptr, &b))
    return aotrun_shim_fail("%s: %p did not come from raw_alloc (or was already freed)",
                            fn, ptr);
  aotrun_device_scope scope;
  int entered = aotrun_cuda_device_enter(fn, b.device, &scope) == 0;
  b.allocator.free(b.allocator.ctx, b.ptr, aotrun_cuda_stream_for(b.device));
  if (entered) aotrun_cuda_device_exit(&scope);
  return AOTI_TORCH_SUCCESS;
}
