/* fake_cudnn.c: libfake_cudnn.so, a recording stand-in for cuDNN 9's
 * backend API (see fake_cudnn.h). It checks what the real library is
 * documented to refuse (attributes set on a finalized descriptor, a
 * descriptor used before it is finalized, a tensor or convolution missing
 * a required attribute, a destroyed descriptor used again) and counts
 * those calls in bad_calls instead of guessing further. Descriptors are
 * kept after destruction (marked) so a test can read the graph built. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "testing/fallback/fake_cudnn.h"

#define EXPORT __attribute__((visibility("default")))

static fake_cudnn_control ctl;
static int handle_token;

EXPORT fake_cudnn_control *fake_cudnn_control_get(void) { return &ctl; }

EXPORT void fake_cudnn_reset(void) {
  for (int i = 0; i < ctl.ndescs; i++) free(ctl.descs[i]);
  free(ctl.descs);
  memset(&ctl, 0, sizeof ctl);
}

/* ---- the few non-backend functions the loader and the tests call ---- */

EXPORT size_t cudnnGetVersion(void) { return 91900; }

EXPORT const char *cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    default: return "CUDNN_STATUS_(fake other)";
  }
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  *handle = (cudnnHandle_t)&handle_token;
  return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  (void)handle;
  return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle,
                                    cudaStream_t stream) {
  (void)handle;
  ctl.set_streams++;
  ctl.last_stream = (void *)stream;
  return ctl.fail_set_stream ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
}

/* ---- backend API ---- */

static size_t elem_size(cudnnBackendAttributeType_t t) {
  switch (t) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return 8;
    case CUDNN_TYPE_BOOLEAN:
    case CUDNN_TYPE_CHAR: return 1;
    default: return 4; /* enums, FLOAT, INT32 */
  }
}

static cudnnStatus_t bad(void) {
  ctl.bad_calls++;
  return CUDNN_STATUS_BAD_PARAM;
}

static const fake_attr *find_attr(const fake_desc *d, int name) {
  for (int i = 0; i < d->nattrs; i++)
    if (d->attrs[i].name == name) return &d->attrs[i];
  return NULL;
}

static int64_t attr_int64(const fake_desc *d, int name, int64_t fallback) {
  const fake_attr *a = find_attr(d, name);
  int64_t v = fallback;
  if (a != NULL && a->type == CUDNN_TYPE_INT64 && a->count >= 1)
    memcpy(&v, a->data, sizeof v);
  return v;
}

static fake_desc *attr_desc(const fake_desc *d, int name, int i) {
  const fake_attr *a = find_attr(d, name);
  fake_desc *p = NULL;
  if (a != NULL && a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR && a->count > i)
    memcpy(&p, a->data + 8 * i, sizeof p);
  return p;
}

static int usable(const fake_desc *d) { return d != NULL && !d->destroyed; }

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(
    cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out) {
  fake_desc *d = calloc(1, sizeof *d);
  fake_desc **grown = realloc(ctl.descs, sizeof *grown * (ctl.ndescs + 1));
  if (d == NULL || grown == NULL) {
    free(d);
    if (grown != NULL) ctl.descs = grown;
    return CUDNN_STATUS_ALLOC_FAILED;
  }
  ctl.descs = grown;
  ctl.descs[ctl.ndescs++] = d;
  d->type = (int)type;
  d->engine = -1;
  ctl.creates++;
  *out = d;
  return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(
    cudnnBackendDescriptor_t desc) {
  fake_desc *d = desc;
  if (!usable(d)) return bad();
  d->destroyed = 1;
  ctl.destroys++;
  return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(
    cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
    cudnnBackendAttributeType_t type, int64_t count, const void *values) {
  fake_desc *d = desc;
  if (!usable(d) || d->finalized || count < 0 || values == NULL) return bad();
  size_t bytes = elem_size(type) * (size_t)count;
  if (bytes > FAKE_ATTR_BYTES) return bad();
  fake_attr *a = (fake_attr *)find_attr(d, (int)name);
  if (a == NULL) {
    if (d->nattrs == FAKE_MAX_ATTRS) return bad();
    a = &d->attrs[d->nattrs++];
  }
  memset(a, 0, sizeof *a);
  a->name = (int)name;
  a->type = (int)type;
  a->count = count;
  memcpy(a->data, values, bytes);
  return CUDNN_STATUS_SUCCESS;
}

static int has(const fake_desc *d, int name) { return find_attr(d, name) != NULL; }

/* Every descriptor an attribute refers to must be finalized first. */
static int references_finalized(const fake_desc *d) {
  for (int i = 0; i < d->nattrs; i++) {
    if (d->attrs[i].type != CUDNN_TYPE_BACKEND_DESCRIPTOR) continue;
    for (int64_t j = 0; j < d->attrs[i].count; j++) {
      fake_desc *p = NULL;
      memcpy(&p, d->attrs[i].data + 8 * j, sizeof p);
      if (!usable(p) || !p->finalized) return 0;
    }
  }
  return 1;
}

static int tensor_complete(const fake_desc *d) {
  const fake_attr *dims = find_attr(d, CUDNN_ATTR_TENSOR_DIMENSIONS);
  const fake_attr *strides = find_attr(d, CUDNN_ATTR_TENSOR_STRIDES);
  return has(d, CUDNN_ATTR_TENSOR_DATA_TYPE) && dims && strides &&
         dims->count == strides->count &&
         has(d, CUDNN_ATTR_TENSOR_UNIQUE_ID) &&
         has(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT);
}

static int convolution_complete(const fake_desc *d) {
  int64_t sd = attr_int64(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, -1);
  static const int lists[4] = {
      CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
      CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS};
  if (sd < 1 || !has(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) ||
      !has(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE))
    return 0;
  for (int i = 0; i < 4; i++) {
    const fake_attr *a = find_attr(d, lists[i]);
    if (a == NULL || a->count != sd) return 0;
  }
  return 1;
}

static int64_t plan_engine(const fake_desc *plan) {
  fake_desc *cfg = attr_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
  return cfg != NULL ? cfg->engine : -1;
}

static int engine_ok(int64_t e) { return e >= 0 && e < FAKE_MAX_ENGINES; }

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t desc) {
  fake_desc *d = desc;
  if (!usable(d) || d->finalized || !references_finalized(d)) return bad();
  switch (d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      if (!tensor_complete(d)) return bad();
      break;
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
      if (!convolution_complete(d)) return bad();
      break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      if (!has(d, CUDNN_ATTR_OPERATIONGRAPH_OPS) ||
          !has(d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE))
        return bad();
      break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      if (!has(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH) ||
          !has(d, CUDNN_ATTR_ENGINEHEUR_MODE))
        return bad();
      break;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
      if (!has(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE)) return bad();
      int64_t e = plan_engine(d);
      if (!engine_ok(e)) return bad();
      if (ctl.fail_finalize[e]) return CUDNN_STATUS_NOT_SUPPORTED;
      break;
    }
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      if (!has(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS) ||
          !has(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) ||
          !has(d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE))
        return bad();
      break;
    default:
      break;
  }
  d->finalized = 1;
  ctl.finalizes++;
  return CUDNN_STATUS_SUCCESS;
}

static const fake_heur_source *source_of(const fake_desc *heur) {
  fake_desc *graph = attr_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
  const fake_attr *ops =
      graph ? find_attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS) : NULL;
  const fake_attr *mode = find_attr(heur, CUDNN_ATTR_ENGINEHEUR_MODE);
  int m = 0;
  if (mode != NULL) memcpy(&m, mode->data, sizeof m);
  int fused = ops != NULL && ops->count > 1;
  if (m == CUDNN_HEUR_MODE_FALLBACK) return fused ? &ctl.fused_fallback : &ctl.fallback;
  if (m == CUDNN_HEUR_MODE_A) return fused ? &ctl.fused_a : &ctl.mode_a;
  return NULL;
}

static cudnnStatus_t heuristic_results(const fake_desc *heur, int64_t requested,
                                       int64_t *count, void *out) {
  const fake_heur_source *s = source_of(heur);
  if (s == NULL) return bad();
  ctl.heuristic_queries++;
  if (requested == 0) {
    *count = s->count;
    return CUDNN_STATUS_SUCCESS;
  }
  int64_t n = requested < s->count ? requested : s->count;
  fake_desc **cfgs = out;
  for (int64_t i = 0; i < n; i++) {
    if (!usable(cfgs[i]) || cfgs[i]->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
      return bad();
    cfgs[i]->engine = s->engines[i];
    cfgs[i]->finalized = 1; /* filled by cuDNN: ready to use */
  }
  *count = n;
  return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(
    cudnnBackendDescriptor_t const desc, cudnnBackendAttributeName_t name,
    cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
    void *out) {
  fake_desc *d = desc;
  if (!usable(d) || !d->finalized || count == NULL) return bad();
  if (requested > 0 && out == NULL) return bad();
  switch ((int)name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
      return heuristic_results(d, requested, count, out);
    case CUDNN_ATTR_ENGINECFG_ENGINE: {
      fake_desc *e = requested >= 1 ? *(fake_desc **)out : NULL;
      if (!usable(e) || e->type != CUDNN_BACKEND_ENGINE_DESCRIPTOR) return bad();
      e->engine = d->engine;
      e->finalized = 1;
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
      *count = 0;
      return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
      if (!engine_ok(d->engine) || type != CUDNN_TYPE_NUMERICAL_NOTE) return bad();
      int64_t n = 0;
      for (int note = 0; note < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; note++)
        if ((ctl.notes[d->engine] >> note) & 1) {
          if (n < requested) ((cudnnBackendNumericalNote_t *)out)[n] = note;
          n++;
        }
      *count = n;
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
      if (type != CUDNN_TYPE_INT64 || requested < 1) return bad();
      *(int64_t *)out = d->engine;
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: {
      int64_t e = plan_engine(d);
      if (!engine_ok(e) || type != CUDNN_TYPE_INT64 || requested < 1)
        return bad();
      *(int64_t *)out = ctl.workspace[e];
      *count = 1;
      return CUDNN_STATUS_SUCCESS;
    }
    default: {
      const fake_attr *a = find_attr(d, (int)name);
      if (a == NULL || a->type != (int)type) return bad();
      int64_t n = requested < a->count ? requested : a->count;
      if (n > 0) memcpy(out, a->data, elem_size(type) * (size_t)n);
      *count = a->count;
      return CUDNN_STATUS_SUCCESS;
    }
  }
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                         cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t pack) {
  fake_desc *p = plan, *v = pack;
  if (handle == NULL || !usable(p) || !p->finalized || !usable(v) ||
      !v->finalized ||
      p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ||
      v->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    return bad();
  const fake_attr *uids = find_attr(v, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
  const fake_attr *ptrs = find_attr(v, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
  const fake_attr *ws = find_attr(v, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
  if (uids->count != ptrs->count || uids->count > 8) return bad();
  ctl.executes++;
  ctl.last_plan_engine = plan_engine(p);
  ctl.last_count = uids->count;
  memcpy(ctl.last_uids, uids->data, 8 * (size_t)uids->count);
  memcpy(ctl.last_ptrs, ptrs->data, 8 * (size_t)ptrs->count);
  memcpy(&ctl.last_workspace, ws->data, sizeof ctl.last_workspace);
  return CUDNN_STATUS_SUCCESS;
}
