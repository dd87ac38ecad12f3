/*
 * storage.h: refcounted memory shared by a tensor and its views. The last
 * reference frees it through whatever allocated it; borrowed memory
 * (create_tensor_from_blob) is never freed.
 *
 * Internal, C only (C11 atomics); other code uses the aoti_torch_* getters.
 */
#ifndef AOTRUN_SHIM_STORAGE_H
#define AOTRUN_SHIM_STORAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

typedef enum aotrun_mem_kind {
  AOTRUN_MEM_BORROWED = 0, /* not ours: never freed */
  AOTRUN_MEM_HOST,         /* aligned_alloc / free */
  AOTRUN_MEM_PINNED,       /* cudaMallocHost / cudaFreeHost */
  AOTRUN_MEM_DEVICE,       /* allocator.alloc / allocator.free */
  AOTRUN_MEM_LENT,         /* a caller's buffer lent to one allocation
                              (aotrun_shim_lend_begin): never freed */
} aotrun_mem_kind;

typedef struct aotrun_storage {
  atomic_long refcount;
  void *data; /* NULL for 0 bytes */
  size_t nbytes;
  int32_t device_type;
  int32_t device_index;
  aotrun_mem_kind kind;
  aotrun_shim_allocator allocator; /* AOTRUN_MEM_DEVICE: what frees it */
  /* Made by a numbered allocation (output_lend.c): its session and
   * ordinal; session 0 otherwise. */
  uint64_t alloc_session;
  int64_t alloc_seq;
  int64_t *lent_live; /* AOTRUN_MEM_LENT: the lender's count, or NULL */
} aotrun_storage;

/* New storage of nbytes on the device (refcount 1). pinned: page-locked
 * host memory (device_type must be cpu). CUDA memory comes from the
 * thread's allocator on the device's current stream. fn names the shim. */
AOTITorchError aotrun_storage_new(const char *fn, int32_t device_type,
                                  int32_t device_index, size_t nbytes,
                                  int pinned, aotrun_storage **out);
/* Wraps memory the caller keeps owning (refcount 1). */
AOTITorchError aotrun_storage_borrow(const char *fn, void *data,
                                     size_t nbytes, int32_t device_type,
                                     int32_t device_index,
                                     aotrun_storage **out);
/* Wraps a lent buffer (AOTRUN_MEM_LENT, refcount 1); *live (may be NULL)
 * counts it until the last reference goes. */
AOTITorchError aotrun_storage_lend(const char *fn, void *data, size_t nbytes,
                                   int32_t device_type, int32_t device_index,
                                   int64_t *live, aotrun_storage **out);
void aotrun_storage_retain(aotrun_storage *s);
/* Drops one reference; the last one frees (never fails). */
void aotrun_storage_release(aotrun_storage *s);

#endif /* AOTRUN_SHIM_STORAGE_H */
