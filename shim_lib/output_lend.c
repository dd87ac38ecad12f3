/* output_lend.c: numbering one call's allocations and lending the caller's
 * output buffers to those that match (aotrun_shim.h, "Output lending"). */
#include "shim_lib/output_lend.h"

#include <string.h>

#include "shim_lib/dtype.h"
#include "shim_lib/tensor.h"

/* Per thread: the model runs on its caller's thread, and concurrent calls
 * of other methods on other threads number their own allocations. */
static _Thread_local struct {
  aotrun_shim_lend *entries;
  size_t n, next; /* next: the first entry whose ordinal is not yet past */
  int64_t seq;
  int64_t *live;
  uint64_t session; /* kept after end for aotrun_shim_tensor_alloc_info */
  int active;
} tls;

static uint64_t g_sessions; /* atomic: sessions are unique process-wide */

void aotrun_shim_lend_begin(aotrun_shim_lend *entries, size_t n,
                            int64_t *live) {
  tls.entries = entries;
  tls.n = entries != NULL ? n : 0;
  tls.next = 0;
  tls.seq = 0;
  tls.live = live;
  tls.session = __atomic_add_fetch(&g_sessions, 1, __ATOMIC_RELAXED);
  tls.active = 1;
  for (size_t i = 0; i < tls.n; i++) entries[i].lent = 0;
}

void aotrun_shim_lend_end(void) {
  tls.active = 0;
  tls.entries = NULL;
  tls.n = 0;
  tls.live = NULL;
}

static size_t entry_bytes(const aotrun_shim_lend *e) {
  size_t n = aotrun_dtype_size(e->dtype);
  for (int32_t d = 0; d < e->ndim; d++) n *= (size_t)e->sizes[d];
  return n;
}

/* The entry's dtype and device, dense row-major and exactly the entry's
 * bytes, in any shape: a wrapper may allocate [1, 512] and hand it out as
 * the output [1, 1, 512] (reinterpret_tensor of a reused buffer). The
 * runner lends an entry only to the allocation it saw become that output
 * whole, and checks after the call that it did again. */
static int matches(const aotrun_shim_lend *e, int32_t dtype,
                   int32_t device_type, int32_t device_index, int64_t ndim,
                   const int64_t *sizes, const int64_t *strides,
                   size_t bytes) {
  if (e->dtype != dtype || e->device_type != device_type ||
      (device_type != AOTRUN_DEV_CPU && e->device_index != device_index) ||
      e->data == NULL)
    return 0;
  return bytes == entry_bytes(e) &&
         aotrun_strides_contiguous(ndim, sizes, strides);
}

void aotrun_lend_next(int32_t dtype, int32_t device_type, int32_t device_index,
                      int64_t ndim, const int64_t *sizes,
                      const int64_t *strides, int pinned, size_t bytes,
                      aotrun_lend_ticket *t) {
  memset(t, 0, sizeof *t);
  t->seq = -1;
  if (!tls.active) return;
  t->counted = 1;
  t->session = tls.session;
  t->seq = tls.seq++;
  while (tls.next < tls.n && tls.entries[tls.next].seq < t->seq) tls.next++;
  if (tls.next >= tls.n || tls.entries[tls.next].seq != t->seq) return;
  aotrun_shim_lend *e = &tls.entries[tls.next++];
  if (pinned || bytes == 0 ||
      !matches(e, dtype, device_type, device_index, ndim, sizes, strides,
               bytes))
    return;
  e->lent = 1;
  t->data = e->data;
  t->live = tls.live;
}

void aotrun_lend_stamp(aotrun_storage *s, const aotrun_lend_ticket *t) {
  if (!t->counted) return;
  s->alloc_session = t->session;
  s->alloc_seq = t->seq;
}

void aotrun_shim_tensor_alloc_info(AtenTensorHandle h,
                                   aotrun_shim_alloc_info *out) {
  memset(out, 0, sizeof *out);
  out->seq = -1;
  if (h == NULL || h->impl == NULL || h->impl->storage == NULL) return;
  const aotrun_tensor_impl *t = h->impl;
  aotrun_storage *s = t->storage;
  if (s->alloc_session != 0 && s->alloc_session == tls.session)
    out->seq = s->alloc_seq;
  out->lent = s->kind == AOTRUN_MEM_LENT;
  out->sole = atomic_load(&((aotrun_tensor_impl *)t)->refcount) == 1 &&
              atomic_load(&s->refcount) == 1;
  int64_t numel = aotrun_tensor_numel(t);
  out->whole = t->storage_offset == 0 && numel > 0 &&
               aotrun_tensor_is_contiguous(t) &&
               (size_t)numel * aotrun_dtype_size(t->dtype) == s->nbytes;
}
