/*
 * method_weights.c: binding a method's constants to its library (see
 * method_weights.h): user-managed views of weight-cache copies when the
 * library lists its constants, the binary blob otherwise.
 */
#include "aot_loader/method_weights.h"

#include <stdlib.h>
#include <string.h>

struct aotrun_method_weights {
  aotrun_weight_cache *cache;
  size_t num_refs;
  aotrun_weight_ref **refs;
  size_t num_host;
  char **host_names;
  int constants_unlisted;
  int used_blob;
};

static aotrun_status out_of_memory(aotrun_error *err,
                                   const aotrun_program_method *m) {
  return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory binding the constants of method '%s'",
                          m->name);
}

static aotrun_status note_host_constants(aotrun_method_weights *w,
                                         const aotrun_program_method *m,
                                         aotrun_error *err) {
  w->host_names = calloc(m->num_constants ? m->num_constants : 1,
                         sizeof *w->host_names);
  if (w->host_names == NULL) return out_of_memory(err, m);
  for (size_t i = 0; i < m->num_constants; i++) {
    const aotrun_program_constant *c = &m->constants[i];
    if (c->device_type != AOTRUN_DEVICE_TYPE_CPU) continue;
    size_t n = strlen(c->name) + 1;
    char *copy = malloc(n);
    if (copy == NULL) return out_of_memory(err, m);
    memcpy(copy, c->name, n);
    w->host_names[w->num_host++] = copy;
  }
  return AOTRUN_OK;
}

/* ---- introspection ------------------------------------------------------ */

/* Lists the library's constants. NOT_SUPPORTED passes through untouched. */
static aotrun_status list_library(const aotrun_constant_target *t,
                                  const aotrun_program_method *m,
                                  aotrun_constant_info **infos, size_t *n,
                                  aotrun_error *err) {
  *infos = NULL;
  aotrun_status s = t->num_constants(t->ctx, n, err);
  if (s != AOTRUN_OK) return s;
  *infos = calloc(*n ? *n : 1, sizeof **infos);
  if (*infos == NULL) return out_of_memory(err, m);
  for (size_t i = 0; i < *n; i++) {
    s = t->constant_info(t->ctx, i, &(*infos)[i], err);
    if (s != AOTRUN_OK) {
      free(*infos);
      *infos = NULL;
      aotrun_error_prefix(err, "listing the constants of method '%s': ",
                          m->name);
      return s == AOTRUN_ERR_NOT_SUPPORTED ? AOTRUN_ERR_INTERNAL : s;
    }
  }
  return AOTRUN_OK;
}

/* ---- user-managed views ------------------------------------------------- */

static void release_refs(aotrun_method_weights *w) {
  for (size_t i = 0; i < w->num_refs; i++)
    aotrun_weight_cache_release(w->cache, w->refs[i]);
  w->num_refs = 0;
}

/* Copies constant c into the cache and makes a view of it. */
static aotrun_status view_constant(aotrun_method_weights *w,
                                   const aotrun_program_constant *c,
                                   const aotrun_safetensors *st,
                                   const aotrun_tensor_view_ops *views,
                                   int32_t device_index,
                                   AtenTensorHandle *view, aotrun_error *err) {
  const aotrun_safetensors_entry *e = aotrun_safetensors_find(st, c->fqn);
  aotrun_weight_request req = {c->fqn,   c->device_type, c->dtype,
                               c->ndim,  c->sizes,       c->strides,
                               c->storage_offset, c->nbytes};
  void *data = NULL;
  aotrun_status s = aotrun_weight_cache_acquire(w->cache, &req, e->data,
                                                &data, &w->refs[w->num_refs],
                                                err);
  if (s != AOTRUN_OK) return s;
  w->num_refs++;
  int32_t index = c->device_type == AOTRUN_DEVICE_TYPE_CUDA ? device_index : 0;
  s = views->create(views->ctx, data, c->ndim, c->sizes, c->strides,
                    c->storage_offset, c->dtype, c->device_type, index, view,
                    err);
  if (s != AOTRUN_OK)
    aotrun_error_prefix(err, "making a view of constant '%s' (fqn '%s'): ",
                        c->name, c->fqn);
  return s;
}

/* Views of every constant, handed over by internal name; our handles are
 * deleted whatever happens (the container keeps its own aliases). */
static aotrun_status bind_views(aotrun_method_weights *w,
                                const aotrun_constant_target *t,
                                const aotrun_program_method *m,
                                const aotrun_safetensors *st,
                                const aotrun_tensor_view_ops *views,
                                int32_t device_index, aotrun_error *err) {
  size_t n = m->num_constants;
  if (n == 0) return AOTRUN_OK;
  aotrun_constant_pair *pairs = calloc(n, sizeof *pairs);
  if (pairs == NULL) return out_of_memory(err, m);
  aotrun_status s = AOTRUN_OK;
  size_t made = 0;
  for (; made < n && s == AOTRUN_OK; made++) {
    pairs[made].name = m->constants[made].name;
    s = view_constant(w, &m->constants[made], st, views, device_index,
                      &pairs[made].handle, err);
  }
  if (s == AOTRUN_OK) s = t->set_user_managed_constants(t->ctx, pairs, n, err);
  for (size_t i = 0; i < made; i++)
    if (pairs[i].handle != NULL) views->destroy(views->ctx, pairs[i].handle);
  free(pairs);
  if (s != AOTRUN_OK) release_refs(w);
  return s;
}

/* ---- binary blob -------------------------------------------------------- */

/* Picks the record layout whose size the library expects: DESIGN.md §2.2's
 * rule first (padded unless every constant is on cuda), the other one if
 * only that matches. */
static aotrun_status choose_layout(const aotrun_program_method *m,
                                   uint64_t want, int *padded,
                                   aotrun_error *err) {
  int rule = 0;
  uint64_t sizes[2];
  for (size_t i = 0; i < m->num_constants; i++)
    if (m->constants[i].device_type != AOTRUN_DEVICE_TYPE_CUDA) rule = 1;
  for (int p = 0; p < 2; p++) {
    aotrun_status s = aotrun_method_weights_blob_size(m, p, &sizes[p], err);
    if (s != AOTRUN_OK) return s;
  }
  if (sizes[rule] == want || sizes[!rule] == want) {
    *padded = sizes[rule] == want ? rule : !rule;
    return AOTRUN_OK;
  }
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "malformed FQN weight metadata: the manifest's %zu "
                          "constants make a blob of %llu bytes (%llu with "
                          "%d-byte records), the library expects %llu bytes "
                          "(method '%s')",
                          m->num_constants, (unsigned long long)sizes[0],
                          (unsigned long long)sizes[1], AOTRUN_BLOB_ALIGNMENT,
                          (unsigned long long)want, m->name);
}

static aotrun_status bind_blob(const aotrun_constant_target *t,
                               const aotrun_program_method *m,
                               const aotrun_safetensors *st,
                               aotrun_error *err) {
  uint64_t want = 0;
  int padded = 0;
  aotrun_status s = t->blob_size(t->ctx, &want, err);
  if (s != AOTRUN_OK) {
    aotrun_error_prefix(err, "method '%s': ", m->name);
    return s;
  }
  if ((s = choose_layout(m, want, &padded, err)) != AOTRUN_OK) return s;
  if (want == 0) return AOTRUN_OK; /* nothing to load */
  if (want > SIZE_MAX) return out_of_memory(err, m);
  uint8_t *blob = calloc(1, (size_t)want); /* padding stays zero */
  if (blob == NULL) return out_of_memory(err, m);
  uint64_t at = 0;
  for (size_t i = 0; i < m->num_constants; i++) {
    const aotrun_program_constant *c = &m->constants[i];
    const aotrun_safetensors_entry *e = aotrun_safetensors_find(st, c->fqn);
    if (c->nbytes > 0) memcpy(blob + at, e->data, (size_t)c->nbytes);
    at += c->nbytes;
    if (padded && at % AOTRUN_BLOB_ALIGNMENT != 0)
      at += AOTRUN_BLOB_ALIGNMENT - at % AOTRUN_BLOB_ALIGNMENT;
  }
  s = t->load_constants_blob(t->ctx, blob, want, err);
  free(blob);
  if (s != AOTRUN_OK) aotrun_error_prefix(err, "method '%s': ", m->name);
  return s;
}

/* ---- bind --------------------------------------------------------------- */

/* True when the method has constants both on cuda and in host memory. */
static int has_mixed_devices(const aotrun_program_method *m) {
  int cuda = 0, host = 0;
  for (size_t i = 0; i < m->num_constants; i++) {
    if (m->constants[i].device_type == AOTRUN_DEVICE_TYPE_CUDA)
      cuda = 1;
    else
      host = 1;
  }
  return cuda && host;
}

static aotrun_status bind_all(aotrun_method_weights *w,
                              const aotrun_constant_target *t,
                              const aotrun_program_method *m,
                              const aotrun_safetensors *st,
                              const aotrun_tensor_view_ops *views,
                              int32_t device_index, aotrun_error *err) {
  aotrun_constant_info *infos = NULL;
  size_t n = 0;
  aotrun_status s = aotrun_method_weights_check_weights(m, st, err);
  if (s != AOTRUN_OK) return s;
  s = list_library(t, m, &infos, &n, err);
  if (s == AOTRUN_ERR_NOT_SUPPORTED) {
    w->constants_unlisted = 1;
  } else if (s != AOTRUN_OK) {
    return s;
  } else {
    s = aotrun_method_weights_check_library(m, infos, n, err);
    free(infos);
    if (s != AOTRUN_OK) return s;
    /* torch 2.11's user-managed hand-over refuses constants on a device
     * other than the model's ("does not support mixed device constants");
     * its blob loader keeps cpu constants in a host buffer of their own. */
    if (!has_mixed_devices(m)) {
      s = bind_views(w, t, m, st, views, device_index, err);
      if (s != AOTRUN_ERR_NOT_SUPPORTED) return s;
    }
  }
  /* No introspection, or no user-managed hand-over: the blob path. */
  aotrun_error_clear(err);
  w->used_blob = 1;
  return bind_blob(t, m, st, err);
}

aotrun_status aotrun_method_weights_bind(
    const aotrun_constant_target *target, const aotrun_program_method *method,
    const aotrun_safetensors *weights, aotrun_weight_cache *cache,
    const aotrun_tensor_view_ops *views, int32_t device_index,
    aotrun_method_weights **out, aotrun_error *err) {
  *out = NULL;
  if (target == NULL || method == NULL || cache == NULL || views == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "method weights: target, method, cache and views "
                            "are required");
  aotrun_method_weights *w = calloc(1, sizeof *w);
  if (w == NULL) return out_of_memory(err, method);
  w->cache = cache;
  w->refs = calloc(method->num_constants ? method->num_constants : 1,
                   sizeof *w->refs);
  aotrun_status s = w->refs ? note_host_constants(w, method, err)
                            : out_of_memory(err, method);
  if (s == AOTRUN_OK)
    s = bind_all(w, target, method, weights, views, device_index, err);
  if (s != AOTRUN_OK) {
    aotrun_method_weights_release(w);
    return s;
  }
  *out = w;
  return AOTRUN_OK;
}

size_t aotrun_method_weights_num_host_constants(
    const aotrun_method_weights *w) {
  return w->num_host;
}

const char *aotrun_method_weights_host_constant(const aotrun_method_weights *w,
                                                size_t index) {
  return index < w->num_host ? w->host_names[index] : NULL;
}

int aotrun_method_weights_constants_unlisted(const aotrun_method_weights *w) {
  return w->constants_unlisted;
}

int aotrun_method_weights_used_blob(const aotrun_method_weights *w) {
  return w->used_blob;
}

void aotrun_method_weights_release(aotrun_method_weights *w) {
  if (w == NULL) return;
  if (w->refs != NULL) release_refs(w);
  for (size_t i = 0; i < w->num_host; i++) free(w->host_names[i]);
  free(w->host_names);
  free(w->refs);
  free(w);
}
