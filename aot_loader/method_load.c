/*
 * method_load.c: a method's load beyond the steps themselves (see
 * method_runner_internal.h): the GPU's compute capability for the
 * portability check, free device memory before the weights are uploaded,
 * and the load report (load_report.h; docs/loading.md).
 */
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner_internal.h"
#include "aot_loader/name_set.h"

aotrun_status aotrun_runner_gpu_arch(aotrun_method_runner *r, uint32_t *arch,
                                     aotrun_error *err) {
  *arch = 0;
  if (!runner_is_cuda(r) || r->ops.compute_capability == NULL)
    return AOTRUN_OK;
  aotrun_status st = r->ops.compute_capability(r->ops.ctx,
                                               r->device.device_id, arch, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

aotrun_status aotrun_runner_driver_version(aotrun_method_runner *r,
                                           int *version, aotrun_error *err) {
  *version = 0;
  if (!runner_is_cuda(r) || r->ops.driver_version == NULL) return AOTRUN_OK;
  aotrun_status st = r->ops.driver_version(r->ops.ctx, version, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  return AOTRUN_OK;
}

static aotrun_weight_request request_of(const aotrun_program_constant *c) {
  aotrun_weight_request req = {c->fqn,     c->device_type,    c->dtype,
                               c->ndim,    c->sizes,          c->strides,
                               c->storage_offset, c->nbytes};
  return req;
}

/* Bytes of new cuda copies (each FQN once) and of constants the cache
 * already holds. */
static aotrun_status weight_needs(aotrun_method_runner *r,
                                  aotrun_weight_cache *cache,
                                  uint64_t *device_new, uint64_t *shared,
                                  aotrun_error *err) {
  *device_new = *shared = 0;
  aotrun_name_set seen;
  if (aotrun_name_set_init(&seen, r->pm->num_constants) != 0)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "method %s: out of memory sizing its weights",
                            r->method);
  for (size_t i = 0; i < r->pm->num_constants; i++) {
    const aotrun_program_constant *c = &r->pm->constants[i];
    if (aotrun_name_set_add(&seen, c->fqn, i, NULL) != 1) continue;
    aotrun_weight_request req = request_of(c);
    if (aotrun_weight_cache_has_copy(cache, &req))
      *shared += c->nbytes;
    else if (c->device_type == AOTRUN_DEVICE_TYPE_CUDA)
      *device_new += c->nbytes;
  }
  aotrun_name_set_free(&seen);
  return AOTRUN_OK;
}

aotrun_status aotrun_runner_check_weight_memory(aotrun_method_runner *r,
                                                aotrun_weight_cache *cache,
                                                aotrun_error *err) {
  uint64_t need = 0, shared = 0;
  aotrun_status st = weight_needs(r, cache, &need, &shared, err);
  if (st != AOTRUN_OK) return st;
  r->report.shared_bytes = shared;
  if (!runner_is_cuda(r) || r->ops.free_memory == NULL || need == 0)
    return AOTRUN_OK;
  uint64_t free_bytes = 0;
  st = r->ops.free_memory(r->ops.ctx, r->device.device_id, &free_bytes, err);
  if (st != AOTRUN_OK)
    return aotrun_error_prefix(err, "method %s: ", r->method);
  r->report.device_free_bytes = free_bytes;
  if (need <= free_bytes) return AOTRUN_OK;
  return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "method %s needs %llu bytes of device memory for "
                          "its weights, %llu free on cuda:%d",
                          r->method, (unsigned long long)need,
                          (unsigned long long)free_bytes,
                          (int)r->device.device_id);
}

aotrun_runner_bytes aotrun_runner_cache_bytes(aotrun_weight_cache *cache) {
  aotrun_runner_bytes b = {
      aotrun_weight_cache_bytes_allocated(cache, AOTRUN_DEVICE_TYPE_CPU),
      aotrun_weight_cache_bytes_allocated(cache, AOTRUN_DEVICE_TYPE_CUDA)};
  return b;
}

/* The blob path: the container copies each constant to its own device. */
static void blob_bytes(const aotrun_program_method *m, uint64_t *host,
                       uint64_t *device) {
  for (size_t i = 0; i < m->num_constants; i++) {
    if (m->constants[i].device_type == AOTRUN_DEVICE_TYPE_CUDA)
      *device += m->constants[i].nbytes;
    else
      *host += m->constants[i].nbytes;
  }
}

void aotrun_runner_note_weight_bytes(aotrun_method_runner *r,
                                     aotrun_weight_cache *cache,
                                     aotrun_runner_bytes before) {
  aotrun_load_report *rep = &r->report;
  const char *path = "none";
  if (r->pm->num_constants > 0 && aotrun_method_weights_used_blob(r->weights)) {
    path = "blob";
    rep->shared_bytes = 0; /* the container made its own copies */
    blob_bytes(r->pm, &rep->host_bytes, &rep->device_bytes);
  } else if (r->pm->num_constants > 0) {
    path = "user_managed";
    aotrun_runner_bytes after = aotrun_runner_cache_bytes(cache);
    rep->host_bytes += after.host - before.host;
    rep->device_bytes += after.device - before.device;
  }
  aotrun_load_report_text(rep->weights_path, sizeof rep->weights_path, path);
}

void aotrun_method_runner_note_call(aotrun_method_runner *r, int64_t start) {
  if (r == NULL || r->report.phase_ns[AOTRUN_LOAD_FIRST_RUN] >= 0) return;
  aotrun_load_report_add(&r->report, AOTRUN_LOAD_FIRST_RUN, start);
  /* The report's JSON is made when it is read, not inside the first call
   * (aotrun_method_runner_load_report): the call stays a call. */
}

void aotrun_runner_finish_report(aotrun_method_runner *r, int64_t start) {
  aotrun_load_report *rep = &r->report;
  aotrun_load_report_text(rep->method, sizeof rep->method, r->method);
  aotrun_load_report_text(rep->library, sizeof rep->library,
                          r->pm->library);
  aotrun_load_report_text(rep->device, sizeof rep->device, r->device_str);
  /* A memfd's pages are host memory for as long as the library is
   * loaded; a file's are the page cache's. */
  if (strcmp(rep->image, "memfd") == 0) rep->host_bytes += rep->library_bytes;
  rep->total_ns = aotrun_load_clock_ns() - start;
  free(r->report_json);
  r->report_json = aotrun_load_report_json(rep);
}
