/*
 * weight_cache.h: the copies of a program's constants, shared by all of its
 * methods and keyed by FQN.
 *
 * The first acquire of an FQN allocates memory through the device-ops table
 * of the constant's device and uploads the host bytes once; a later acquire
 * with the same device, dtype, sizes, strides, storage offset and nbytes
 * reuses that copy (refcounted). A request that differs in any of these keeps
 * a separate copy and logs, at AOTRUN_LOG_WARNING, which field differs with
 * both values.
 *
 * Memory is owned by the cache: a copy is freed when its last reference is
 * released, or by destroy. Model containers keep aliases of views of this
 * memory, so release a method's references only after its container is
 * deleted (see method_weights.h).
 *
 * Thread-safe: methods may be initialised from several threads.
 */
#ifndef AOTRUN_WEIGHT_CACHE_H
#define AOTRUN_WEIGHT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

/* Where copies of one kind of memory come from. The CUDA backend passes
 * cudaMalloc / cudaFree / cudaMemcpy(HostToDevice); tests pass malloc/memcpy.
 * alloc and upload return AOTRUN_OK or an error code (no message). */
typedef struct aotrun_device_ops {
  void *ctx;
  aotrun_status (*alloc)(void *ctx, size_t bytes, void **ptr);
  void (*free)(void *ctx, void *ptr);
  aotrun_status (*upload)(void *ctx, void *dst, const void *src,
                          size_t bytes);
} aotrun_device_ops;

/* Host memory (64-byte aligned malloc + memcpy): the ops used for cpu
 * constants unless the caller passes its own. */
const aotrun_device_ops *aotrun_host_device_ops(void);

/* Receives one message (no trailing newline), borrowed for the call. */
typedef void (*aotrun_log_fn)(void *ctx, int32_t level, const char *message);

/* What a method asks for. Arrays are borrowed for the call. */
typedef struct aotrun_weight_request {
  const char *fqn;
  int32_t device_type; /* AOTRUN_DEVICE_TYPE_CUDA or _CPU (program.h) */
  int32_t dtype;       /* ScalarType */
  int32_t ndim;
  const int64_t *sizes;
  const int64_t *strides;
  int64_t storage_offset;
  uint64_t nbytes;
} aotrun_weight_request;

typedef struct aotrun_weight_cache aotrun_weight_cache;
/* One reference to one copy, returned by acquire, given back by release. */
typedef struct aotrun_weight_ref aotrun_weight_ref;

/* cuda_ops: memory for cuda constants (copied; required). host_ops: memory
 * for cpu constants (copied; NULL means aotrun_host_device_ops()). log may
 * be NULL. */
aotrun_status aotrun_weight_cache_create(const aotrun_device_ops *cuda_ops,
                                         const aotrun_device_ops *host_ops,
                                         aotrun_log_fn log, void *log_ctx,
                                         aotrun_weight_cache **out,
                                         aotrun_error *err);

/* Returns a copy of host_bytes (req->nbytes of them) in the memory of
 * req->device_type: *data is its address, *ref the reference to release.
 * host_bytes is read only when a new copy is made. */
aotrun_status aotrun_weight_cache_acquire(aotrun_weight_cache *cache,
                                          const aotrun_weight_request *req,
                                          const void *host_bytes,
                                          void **data,
                                          aotrun_weight_ref **ref,
                                          aotrun_error *err);

/* Drops one reference; the copy is freed with its last one. Accepts NULL. */
void aotrun_weight_cache_release(aotrun_weight_cache *cache,
                                 aotrun_weight_ref *ref);

/* Number of live copies, and of uploads made so far (for tests and logs). */
size_t aotrun_weight_cache_num_copies(const aotrun_weight_cache *cache);
size_t aotrun_weight_cache_num_uploads(const aotrun_weight_cache *cache);

/* Bytes allocated for copies in the memory of device_type so far (only
 * grows; the difference around a bind is what that bind added). */
uint64_t aotrun_weight_cache_bytes_allocated(aotrun_weight_cache *cache,
                                             int32_t device_type);
/* 1 when acquire(req) would reuse a copy instead of allocating one. */
int aotrun_weight_cache_has_copy(aotrun_weight_cache *cache,
                                 const aotrun_weight_request *req);

/* Frees every copy, referenced or not. Accepts NULL. */
void aotrun_weight_cache_destroy(aotrun_weight_cache *cache);

#endif /* AOTRUN_WEIGHT_CACHE_H */
