/*
 * weight_cache.c: FQN-keyed, refcounted copies of constants (see
 * weight_cache.h). A list is enough: a program has at most a few thousand
 * constants and lookups happen only at init.
 */
#include "aot_loader/weight_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/dims_text.h"
#include "aot_loader/fault_point.h"
#include "aot_loader/program.h"
#include "aot_loader/scalar_type.h"

struct aotrun_weight_ref {
  char *fqn;
  int32_t device_type;
  int32_t dtype;
  int32_t ndim;
  int64_t sizes[AOTRUN_PROGRAM_MAX_DIMS];
  int64_t strides[AOTRUN_PROGRAM_MAX_DIMS];
  int64_t storage_offset;
  uint64_t nbytes;
  void *data;
  size_t refcount;
  struct aotrun_weight_ref *next;
};

struct aotrun_weight_cache {
  aotrun_device_ops cuda_ops;
  aotrun_device_ops host_ops;
  aotrun_log_fn log;
  void *log_ctx;
  pthread_mutex_t lock;
  aotrun_weight_ref *copies;
  size_t num_copies;
  size_t num_uploads;
  uint64_t bytes_allocated[2]; /* [0] host, [1] cuda: monotonic */
};

/* ---- host memory ops ---------------------------------------------------- */

static aotrun_status host_alloc(void *ctx, size_t bytes, void **ptr) {
  (void)ctx;
  /* 64 bytes: what AOTInductor aligns its own constants to. */
  return posix_memalign(ptr, 64, bytes ? bytes : 1) == 0
             ? AOTRUN_OK
             : AOTRUN_ERR_OUT_OF_MEMORY;
}

static void host_free(void *ctx, void *ptr) {
  (void)ctx;
  free(ptr);
}

static aotrun_status host_upload(void *ctx, void *dst, const void *src,
                                 size_t bytes) {
  (void)ctx;
  if (bytes > 0) memcpy(dst, src, bytes);
  return AOTRUN_OK;
}

const aotrun_device_ops *aotrun_host_device_ops(void) {
  static const aotrun_device_ops kHost = {NULL, host_alloc, host_free,
                                          host_upload};
  return &kHost;
}

/* ---- cache -------------------------------------------------------------- */

aotrun_status aotrun_weight_cache_create(const aotrun_device_ops *cuda_ops,
                                         const aotrun_device_ops *host_ops,
                                         aotrun_log_fn log, void *log_ctx,
                                         aotrun_weight_cache **out,
                                         aotrun_error *err) {
  *out = NULL;
  if (host_ops == NULL) host_ops = aotrun_host_device_ops();
  if (cuda_ops == NULL || cuda_ops->alloc == NULL || cuda_ops->free == NULL ||
      cuda_ops->upload == NULL || host_ops->alloc == NULL ||
      host_ops->free == NULL || host_ops->upload == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "weight cache: a device-ops table lacks alloc, "
                            "free or upload");
  aotrun_weight_cache *c = calloc(1, sizeof *c);
  if (c == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "weight cache: out of memory");
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "weight cache: cannot create its mutex");
  }
  c->cuda_ops = *cuda_ops;
  c->host_ops = *host_ops;
  c->log = log;
  c->log_ctx = log_ctx;
  *out = c;
  return AOTRUN_OK;
}

static const aotrun_device_ops *ops_for(aotrun_weight_cache *c,
                                        int32_t device_type) {
  return device_type == AOTRUN_DEVICE_TYPE_CPU ? &c->host_ops : &c->cuda_ops;
}

static int same_dims(const int64_t *a, int32_t na, const int64_t *b,
                     int32_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

/* Describes the first field in which a copy and a request differ, as
 * "dtype float32, this method asks for float64"; returns 0 when equal. */
static int describe_difference(const aotrun_weight_ref *w,
                               const aotrun_weight_request *r, char *buf,
                               size_t size) {
  char a[200], b[200];
  if (w->device_type != r->device_type) {
    snprintf(buf, size, "device %s, this method asks for %s",
             aotrun_program_device_type_name(w->device_type),
             aotrun_program_device_type_name(r->device_type));
  } else if (w->dtype != r->dtype) {
    snprintf(buf, size, "dtype %s, this method asks for %s",
             aotrun_scalar_type_describe(w->dtype, a, sizeof a),
             aotrun_scalar_type_describe(r->dtype, b, sizeof b));
  } else if (!same_dims(w->sizes, w->ndim, r->sizes, r->ndim)) {
    snprintf(buf, size, "sizes %s, this method asks for %s",
             aotrun_dims_text(w->sizes, w->ndim, a, sizeof a),
             aotrun_dims_text(r->sizes, r->ndim, b, sizeof b));
  } else if (!same_dims(w->strides, w->ndim, r->strides, r->ndim)) {
    snprintf(buf, size, "strides %s, this method asks for %s",
             aotrun_dims_text(w->strides, w->ndim, a, sizeof a),
             aotrun_dims_text(r->strides, r->ndim, b, sizeof b));
  } else if (w->storage_offset != r->storage_offset) {
    snprintf(buf, size, "storage_offset %lld, this method asks for %lld",
             (long long)w->storage_offset, (long long)r->storage_offset);
  } else if (w->nbytes != r->nbytes) {
    snprintf(buf, size, "nbytes %llu, this method asks for %llu",
             (unsigned long long)w->nbytes, (unsigned long long)r->nbytes);
  } else {
    return 0;
  }
  return 1;
}

/* Finds an equal copy; otherwise reports in why how the first copy of the
 * same FQN differs (why stays "" when the FQN is new). */
static aotrun_weight_ref *find_copy(aotrun_weight_cache *c,
                                    const aotrun_weight_request *r, char *why,
                                    size_t why_size) {
  char diff[512];
  why[0] = '\0';
  for (aotrun_weight_ref *w = c->copies; w != NULL; w = w->next) {
    if (strcmp(w->fqn, r->fqn) != 0) continue;
    if (!describe_difference(w, r, diff, sizeof diff)) {
      why[0] = '\0'; /* an equal copy exists: nothing to report */
      return w;
    }
    if (why[0] == '\0') snprintf(why, why_size, "%s", diff);
  }
  return NULL;
}

static aotrun_status new_copy(aotrun_weight_cache *c,
                              const aotrun_weight_request *r,
                              const void *host_bytes, aotrun_weight_ref **out,
                              aotrun_error *err) {
  const aotrun_device_ops *ops = ops_for(c, r->device_type);
  aotrun_weight_ref *w = calloc(1, sizeof *w);
  size_t n = strlen(r->fqn) + 1;
  if (w == NULL || (w->fqn = malloc(n)) == NULL) {
    free(w);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "weight cache: out of memory for FQN '%s'",
                            r->fqn);
  }
  memcpy(w->fqn, r->fqn, n);
  /* Fault points: the device (cudaMalloc, or malloc) is out of memory; the
   * upload (cudaMemcpy) fails. */
  aotrun_status s =
      aotrun_fault_point("weight_cache.alloc")
          ? AOTRUN_ERR_OUT_OF_MEMORY
          : ops->alloc(ops->ctx, r->nbytes ? (size_t)r->nbytes : 1, &w->data);
  if (s != AOTRUN_OK) {
    free(w->fqn);
    free(w);
    return aotrun_error_set(err, s == AOTRUN_ERR_OUT_OF_MEMORY
                                     ? s : AOTRUN_ERR_ACCESS_FAILED,
                            "weight cache: cannot allocate %llu bytes of %s "
                            "memory for FQN '%s' (%s)",
                            (unsigned long long)r->nbytes,
                            aotrun_program_device_type_name(r->device_type),
                            r->fqn, aotrun_status_string(s));
  }
  if (r->nbytes > 0 &&
      (s = aotrun_fault_point("weight_cache.upload")
               ? AOTRUN_ERR_ACCESS_FAILED
               : ops->upload(ops->ctx, w->data, host_bytes,
                             (size_t)r->nbytes)) != AOTRUN_OK) {
    ops->free(ops->ctx, w->data);
    free(w->fqn);
    free(w);
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "weight cache: uploading %llu bytes of FQN '%s' "
                            "to %s memory failed (%s)",
                            (unsigned long long)r->nbytes, r->fqn,
                            aotrun_program_device_type_name(r->device_type),
                            aotrun_status_string(s));
  }
  w->device_type = r->device_type;
  w->dtype = r->dtype;
  w->ndim = r->ndim;
  if (r->ndim > 0) {
    memcpy(w->sizes, r->sizes, (size_t)r->ndim * sizeof *r->sizes);
    memcpy(w->strides, r->strides, (size_t)r->ndim * sizeof *r->strides);
  }
  w->storage_offset = r->storage_offset;
  w->nbytes = r->nbytes;
  w->refcount = 1;
  w->next = c->copies;
  c->copies = w;
  c->num_copies++;
  c->num_uploads++;
  c->bytes_allocated[r->device_type == AOTRUN_DEVICE_TYPE_CPU ? 0 : 1] +=
      r->nbytes;
  *out = w;
  return AOTRUN_OK;
}

static aotrun_status check_request(const aotrun_weight_request *r,
                                   const void *host_bytes,
                                   aotrun_error *err) {
  if (r == NULL || r->fqn == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "weight cache: request without an FQN");
  if (r->ndim < 0 || r->ndim > AOTRUN_PROGRAM_MAX_DIMS ||
      (r->ndim > 0 && (r->sizes == NULL || r->strides == NULL)))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "weight cache: FQN '%s' has %d dims (at most %d, "
                            "with sizes and strides)",
                            r->fqn, (int)r->ndim, AOTRUN_PROGRAM_MAX_DIMS);
  if (r->nbytes > SIZE_MAX || (r->nbytes > 0 && host_bytes == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "weight cache: FQN '%s' has no host bytes for its "
                            "%llu bytes", r->fqn,
                            (unsigned long long)r->nbytes);
  return AOTRUN_OK;
}

aotrun_status aotrun_weight_cache_acquire(aotrun_weight_cache *cache,
                                          const aotrun_weight_request *req,
                                          const void *host_bytes,
                                          void **data,
                                          aotrun_weight_ref **ref,
                                          aotrun_error *err) {
  char why[600];
  *data = NULL;
  *ref = NULL;
  aotrun_status s = check_request(req, host_bytes, err);
  if (s != AOTRUN_OK) return s;
  pthread_mutex_lock(&cache->lock);
  aotrun_weight_ref *w = find_copy(cache, req, why, sizeof why);
  if (w != NULL) {
    w->refcount++;
  } else {
    s = new_copy(cache, req, host_bytes, &w, err);
  }
  pthread_mutex_unlock(&cache->lock);
  if (s != AOTRUN_OK) return s;
  if (why[0] != '\0' && cache->log != NULL) {
    char msg[800];
    snprintf(msg, sizeof msg, "weight cache: FQN '%s' is already loaded with "
             "%s: keeping a separate copy", req->fqn, why);
    cache->log(cache->log_ctx, AOTRUN_LOG_WARNING, msg);
  }
  *data = w->data;
  *ref = w;
  return AOTRUN_OK;
}

static void free_copy(aotrun_weight_cache *c, aotrun_weight_ref *w) {
  const aotrun_device_ops *ops = ops_for(c, w->device_type);
  ops->free(ops->ctx, w->data);
  free(w->fqn);
  free(w);
}

void aotrun_weight_cache_release(aotrun_weight_cache *cache,
                                 aotrun_weight_ref *ref) {
  if (cache == NULL || ref == NULL) return;
  pthread_mutex_lock(&cache->lock);
  for (aotrun_weight_ref **p = &cache->copies; *p != NULL; p = &(*p)->next) {
    if (*p != ref) continue;
    if (--ref->refcount == 0) {
      *p = ref->next;
      cache->num_copies--;
      free_copy(cache, ref);
    }
    break;
  }
  pthread_mutex_unlock(&cache->lock);
}

size_t aotrun_weight_cache_num_copies(const aotrun_weight_cache *cache) {
  return cache->num_copies;
}

size_t aotrun_weight_cache_num_uploads(const aotrun_weight_cache *cache) {
  return cache->num_uploads;
}

uint64_t aotrun_weight_cache_bytes_allocated(aotrun_weight_cache *cache,
                                             int32_t device_type) {
  pthread_mutex_lock(&cache->lock);
  uint64_t n =
      cache->bytes_allocated[device_type == AOTRUN_DEVICE_TYPE_CPU ? 0 : 1];
  pthread_mutex_unlock(&cache->lock);
  return n;
}

int aotrun_weight_cache_has_copy(aotrun_weight_cache *cache,
                                 const aotrun_weight_request *req) {
  char why[600];
  pthread_mutex_lock(&cache->lock);
  int found = find_copy(cache, req, why, sizeof why) != NULL;
  pthread_mutex_unlock(&cache->lock);
  return found;
}

void aotrun_weight_cache_destroy(aotrun_weight_cache *cache) {
  if (cache == NULL) return;
  aotrun_weight_ref *w = cache->copies;
  while (w != NULL) {
    aotrun_weight_ref *next = w->next;
    free_copy(cache, w);
    w = next;
  }
  pthread_mutex_destroy(&cache->lock);
  free(cache);
}
