/* conv_graph_plan.c: engine heuristics -> execution plans -> the choice per
 * key, and the plan cache of the graph path (see conv_graph.h). No CUDA
 * runtime calls: timing comes through ch->time_plan. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_lib/fallback/conv_graph.h"
#include "shim_lib/fallback/kernel_options.h"

/* Engine configs read from one heuristic source. */
#define MAX_CONFIGS 32

/* ---- the cache: a fixed table under one mutex, linear search (a model
 * has a handful of shapes), the oldest insertion replaced when full ---- */

typedef struct gentry {
  aotrun_fb_conv_gkey key;
  aotrun_fb_conv_gplan *plan;
} gentry;

static pthread_mutex_t gcache_lock = PTHREAD_MUTEX_INITIALIZER;
static gentry gcache[AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY];
static int gcache_count, gcache_next;
/* Dropped plans that ran inside a capture (see aotrun_fb_conv_gplan). */
static aotrun_fb_conv_gplan *retired;
static int retired_count;

void aotrun_fb_conv_gkey_of(const aotrun_fb_conv *c, const int64_t align[4],
                            aotrun_fb_conv_gkey *key) {
  memset(key, 0, sizeof *key);
  int64_t min = align[0];
  for (int i = 1; i < 3; i++)
    if (align[i] < min) min = align[i];
  aotrun_fb_conv_key_of(c, min, &key->base);
  key->has_bias = c->has_bias;
  key->windowed = c->windowed;
  for (int i = 0; i < 4; i++) key->align[i] = align[i];
  if (!c->has_bias) key->align[3] = 0;
}

static void gplan_free(aotrun_fb_conv_gplan *p) {
  const aotrun_fb_cudnn_api *api = p->graph.api;
  /* The variant pack, then the plan before its config, all before the
   * graph they were made of. */
  if (api != NULL && p->pack != NULL) api->cudnnBackendDestroyDescriptor(p->pack);
  if (api != NULL && p->plan != NULL) api->cudnnBackendDestroyDescriptor(p->plan);
  if (api != NULL && p->cfg != NULL) api->cudnnBackendDestroyDescriptor(p->cfg);
  aotrun_fb_conv_graph_destroy(&p->graph);
  free(p);
}

void aotrun_fb_conv_gplan_unref(aotrun_fb_conv_gplan *p) {
  if (p == NULL) return;
  pthread_mutex_lock(&gcache_lock);
  int last = --p->refs == 0;
  pthread_mutex_unlock(&gcache_lock);
  if (last) gplan_free(p);
}

void aotrun_fb_conv_gplan_mark_captured(aotrun_fb_conv_gplan *p) {
  pthread_mutex_lock(&gcache_lock);
  p->captured = 1;
  pthread_mutex_unlock(&gcache_lock);
}

/* The cache lets go of p (called with gcache_lock held): returns p when
 * the caller must unref it, NULL when it was retired instead. */
static aotrun_fb_conv_gplan *drop_locked(aotrun_fb_conv_gplan *p) {
  if (p == NULL || !p->captured) return p;
  p->next_retired = retired;
  retired = p;
  retired_count++;
  return NULL;
}

static int gfind(const aotrun_fb_conv_gkey *key) {
  for (int i = 0; i < gcache_count; i++)
    if (memcmp(&gcache[i].key, key, sizeof *key) == 0) return i;
  return -1;
}

int aotrun_fb_conv_gcache_lookup(const aotrun_fb_conv_gkey *key,
                                 aotrun_fb_conv_gplan **out) {
  pthread_mutex_lock(&gcache_lock);
  int i = gfind(key);
  if (i >= 0) {
    gcache[i].plan->refs++;
    *out = gcache[i].plan;
  }
  pthread_mutex_unlock(&gcache_lock);
  return i >= 0;
}

void aotrun_fb_conv_gcache_store(const aotrun_fb_conv_gkey *key,
                                 aotrun_fb_conv_gplan *p) {
  aotrun_fb_conv_gplan *dropped = NULL;
  pthread_mutex_lock(&gcache_lock);
  int i = gfind(key);
  if (i < 0) {
    if (gcache_count < AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY) {
      i = gcache_count++;
    } else {
      i = gcache_next;
      gcache_next = (gcache_next + 1) % AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY;
      dropped = gcache[i].plan;
    }
    gcache[i].key = *key;
  } else {
    dropped = gcache[i].plan;
  }
  p->refs++; /* the cache's reference */
  gcache[i].plan = p;
  dropped = drop_locked(dropped);
  pthread_mutex_unlock(&gcache_lock);
  /* Freed only when no caller still holds it (a running convolution). */
  aotrun_fb_conv_gplan_unref(dropped);
}

int aotrun_fb_conv_gcache_size(void) {
  pthread_mutex_lock(&gcache_lock);
  int n = gcache_count;
  pthread_mutex_unlock(&gcache_lock);
  return n;
}

int aotrun_fb_conv_gcache_retired(void) {
  pthread_mutex_lock(&gcache_lock);
  int n = retired_count;
  pthread_mutex_unlock(&gcache_lock);
  return n;
}

/* Also frees the retired plans: aotrun_fb_conv_release_all runs while no
 * convolution (and no graph holding one) runs. */
void aotrun_fb_conv_gcache_clear(void) {
  aotrun_fb_conv_gplan *plans[AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY];
  pthread_mutex_lock(&gcache_lock);
  int n = gcache_count;
  for (int i = 0; i < n; i++) plans[i] = gcache[i].plan;
  gcache_count = 0;
  gcache_next = 0;
  aotrun_fb_conv_gplan *old = retired;
  retired = NULL;
  retired_count = 0;
  pthread_mutex_unlock(&gcache_lock);
  for (int i = 0; i < n; i++) aotrun_fb_conv_gplan_unref(plans[i]);
  while (old != NULL) {
    aotrun_fb_conv_gplan *next = old->next_retired;
    aotrun_fb_conv_gplan_unref(old);
    old = next;
  }
}

/* ---- engine configs and plans ---- */

/* Why candidates were dropped, for the message of a key without a plan. */
typedef struct tally {
  int configs_a, configs_fallback, noted, unfinalized, too_big, duplicate;
  cudnnStatus_t heur_status;
  cudnnStatus_t plan_status; /* the last finalize failure */
} tally;

typedef struct candidate {
  cudnnBackendDescriptor_t cfg, plan;
  int64_t engine, workspace;
  float ms;
} candidate;

static void destroy_desc(const aotrun_fb_cudnn_api *api,
                         cudnnBackendDescriptor_t d) {
  if (d != NULL) api->cudnnBackendDestroyDescriptor(d);
}

/* Up to cap engine configs of `mode` for the graph, best first. */
static cudnnStatus_t heuristic_configs(const aotrun_fb_cudnn_api *api,
                                       cudnnBackendDescriptor_t graph,
                                       cudnnBackendHeurMode_t mode,
                                       cudnnBackendDescriptor_t *cfgs, int cap,
                                       int *n) {
  *n = 0;
  cudnnBackendDescriptor_t heur = NULL;
  cudnnStatus_t st =
      api->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  st = api->cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE,
                                       CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (st == CUDNN_STATUS_SUCCESS) st = api->cudnnBackendFinalize(heur);
  int64_t count = 0;
  /* First the count, then that many configs into descriptors we made. */
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                       &count, NULL);
  if (count > cap) count = cap;
  int made = 0;
  for (; st == CUDNN_STATUS_SUCCESS && made < count; made++) {
    cfgs[made] = NULL;
    st = api->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                           &cfgs[made]);
    if (st != CUDNN_STATUS_SUCCESS) break;
  }
  int64_t got = 0;
  if (st == CUDNN_STATUS_SUCCESS && made > 0)
    st = api->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                                       &got, cfgs);
  if (st != CUDNN_STATUS_SUCCESS || got > made) got = 0;
  for (int i = (int)got; i < made; i++) destroy_desc(api, cfgs[i]);
  destroy_desc(api, heur);
  *n = (int)got;
  return st;
}

/* The engine behind a config: its global index, and whether its numerics
 * are allowed. Like ATen: never engines that down-convert their inputs;
 * for float32 no tensor-core engines (TF32) only with AOTRUN_CONV_TF32=0,
 * the legacy path's FMA rule (kernel_options.h). */
static int config_allowed(const aotrun_fb_cudnn_api *api,
                          cudnnBackendDescriptor_t cfg, int32_t dtype,
                          int64_t *engine_index) {
  cudnnBackendDescriptor_t engine = NULL;
  *engine_index = -1;
  if (api->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR,
                                        &engine) != CUDNN_STATUS_SUCCESS)
    return 0;
  int64_t n = 0;
  cudnnStatus_t st = api->cudnnBackendGetAttribute(
      cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
      &engine);
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t nnotes = 0;
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendGetAttribute(
        engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
        CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nnotes, notes);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                       CUDNN_TYPE_INT64, 1, &n, engine_index);
  destroy_desc(api, engine);
  if (st != CUDNN_STATUS_SUCCESS) return 0;
  if (nnotes > CUDNN_NUMERICAL_NOTE_TYPE_COUNT)
    nnotes = CUDNN_NUMERICAL_NOTE_TYPE_COUNT;
  for (int64_t i = 0; i < nnotes; i++) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return 0;
    if (dtype == AOTRUN_FB_FLOAT32 && !aotrun_fb_conv_tf32_enabled() &&
        notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
      return 0;
  }
  return 1;
}

static cudnnStatus_t make_plan(const aotrun_fb_cudnn_api *api,
                               cudnnHandle_t handle,
                               cudnnBackendDescriptor_t cfg,
                               cudnnBackendDescriptor_t *plan,
                               int64_t *workspace) {
  *plan = NULL;
  cudnnStatus_t st = api->cudnnBackendCreateDescriptor(
      CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  st = api->cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                     CUDNN_TYPE_HANDLE, 1, &handle);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendSetAttribute(
        *plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
  if (st == CUDNN_STATUS_SUCCESS) st = api->cudnnBackendFinalize(*plan);
  int64_t n = 0;
  *workspace = 0;
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->cudnnBackendGetAttribute(
        *plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
        &n, workspace);
  if (st == CUDNN_STATUS_SUCCESS && *workspace < 0)
    st = CUDNN_STATUS_INTERNAL_ERROR;
  if (st != CUDNN_STATUS_SUCCESS) {
    destroy_desc(api, *plan);
    *plan = NULL;
  }
  return st;
}

static int seen_engine(const candidate *cands, int n, int64_t engine) {
  for (int i = 0; i < n; i++)
    if (cands[i].engine == engine) return 1;
  return 0;
}

/* Finalizes plans from one source's configs into cands (up to want);
 * every config not kept is destroyed. */
static void plans_from(const aotrun_fb_conv_choose *ch,
                       cudnnBackendDescriptor_t *cfgs, int n, int dedupe,
                       int want, candidate *cands, int *have, tally *t) {
  const aotrun_fb_cudnn_api *api = ch->api;
  for (int i = 0; i < n; i++) {
    cudnnBackendDescriptor_t cfg = cfgs[i];
    int64_t engine = -1, ws = 0;
    cudnnBackendDescriptor_t plan = NULL;
    if (*have >= want) {
      destroy_desc(api, cfg);
      continue;
    }
    if (!config_allowed(api, cfg, ch->c->dtype, &engine)) {
      t->noted++;
    } else if (dedupe && seen_engine(cands, *have, engine)) {
      t->duplicate++;
    } else {
      cudnnStatus_t st = make_plan(api, ch->handle, cfg, &plan, &ws);
      if (st != CUDNN_STATUS_SUCCESS) {
        t->unfinalized++;
        t->plan_status = st;
      } else if ((uint64_t)ws > (uint64_t)ch->ws_limit) {
        t->too_big++;
        destroy_desc(api, plan);
        plan = NULL;
      }
    }
    if (plan == NULL) {
      destroy_desc(api, cfg);
      continue;
    }
    cands[(*have)++] = (candidate){cfg, plan, engine, ws, -1.0f};
  }
}

/* Finalized plans for the graph, in heuristic order: mode A first, then
 * the FALLBACK list while fewer than `want` plans finalized. */
static void candidates(const aotrun_fb_conv_choose *ch,
                       const aotrun_fb_conv_graph *g, int want,
                       candidate *cands, int *have, tally *t) {
  cudnnBackendDescriptor_t cfgs[MAX_CONFIGS];
  int n = 0;
  *have = 0;
  t->heur_status = heuristic_configs(ch->api, g->graph, CUDNN_HEUR_MODE_A,
                                     cfgs, MAX_CONFIGS, &n);
  t->configs_a = n;
  plans_from(ch, cfgs, n, 0, want, cands, have, t);
  if (*have >= want) return;
  cudnnStatus_t st = heuristic_configs(ch->api, g->graph,
                                       CUDNN_HEUR_MODE_FALLBACK, cfgs,
                                       MAX_CONFIGS, &n);
  if (t->heur_status == CUDNN_STATUS_SUCCESS) t->heur_status = st;
  t->configs_fallback = n;
  plans_from(ch, cfgs, n, 1, want, cands, have, t);
}

/* Times each candidate; returns the fastest that ran, or -1. */
static int fastest(const aotrun_fb_conv_choose *ch, const aotrun_fb_conv_graph *g,
                   int fused, candidate *cands, int n) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    aotrun_fb_conv_gplan trial;
    memset(&trial, 0, sizeof trial);
    trial.graph = *g;
    trial.fused_bias = fused;
    trial.cfg = cands[i].cfg;
    trial.plan = cands[i].plan;
    trial.engine = cands[i].engine;
    trial.workspace = cands[i].workspace;
    float ms = 0.0f;
    if (ch->time_plan(ch->time_ctx, &trial, &ms) != 0) continue;
    cands[i].ms = ms;
    if (best < 0 || ms < cands[best].ms) best = i;
  }
  return best;
}

/* The knobs of a config as "type=value ..." (only for the log: it costs
 * one descriptor per knob type). */
static void knobs_of(const aotrun_fb_cudnn_api *api,
                     cudnnBackendDescriptor_t cfg, char *buf, size_t cap) {
  cudnnBackendDescriptor_t k[CUDNN_KNOB_TYPE_COUNTS];
  int made = 0;
  buf[0] = '\0';
  for (; made < CUDNN_KNOB_TYPE_COUNTS; made++)
    if (api->cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                                          &k[made]) != CUDNN_STATUS_SUCCESS)
      break;
  int64_t n = 0;
  if (made > 0 &&
      api->cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &n,
                                    k) == CUDNN_STATUS_SUCCESS) {
    size_t len = 0;
    for (int64_t i = 0; i < n && i < made && len + 24 < cap; i++) {
      cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
      int64_t value = 0, got = 0;
      if (api->cudnnBackendGetAttribute(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                        CUDNN_TYPE_KNOB_TYPE, 1, &got,
                                        &type) != CUDNN_STATUS_SUCCESS ||
          api->cudnnBackendGetAttribute(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                        CUDNN_TYPE_INT64, 1, &got,
                                        &value) != CUDNN_STATUS_SUCCESS)
        continue;
      len += (size_t)snprintf(buf + len, cap - len, "%s%d=%lld",
                              len ? " " : "", (int)type, (long long)value);
    }
  }
  for (int i = 0; i < made; i++) destroy_desc(api, k[i]);
}

static aotrun_fb_conv_gplan *new_gplan(void) {
  aotrun_fb_conv_gplan *p = calloc(1, sizeof *p);
  if (p != NULL) {
    p->engine = -1;
    p->time_ms = -1.0f;
  }
  return p;
}

static const char *status_name(const aotrun_fb_cudnn_api *api,
                               cudnnStatus_t st) {
  return api->cudnnGetErrorString(st);
}

/* One graph (fused bias or not) -> its chosen plan in *out (NULL when it
 * has none; *why says what happened). The returned plan owns the graph. */
static AOTITorchError try_graph(const aotrun_fb_conv_choose *ch, int fuse,
                                aotrun_fb_conv_gplan **out, char *why,
                                size_t cap, const char **source) {
  *out = NULL;
  const aotrun_fb_conv *c = ch->c;
  aotrun_fb_conv_graph_spec spec;
  aotrun_fb_conv_graph_spec_of(c, fuse, ch->key->align, &spec);
  aotrun_fb_conv_graph g;
  const char *step = NULL;
  cudnnStatus_t st =
      aotrun_fb_conv_graph_build(ch->api, ch->handle, &spec, &g, &step);
  if (st != CUDNN_STATUS_SUCCESS) {
    snprintf(why, cap, "%s: building %s failed: %s",
             fuse ? "with the bias fused" : "convolution only", step,
             status_name(ch->api, st));
    return AOTI_TORCH_SUCCESS;
  }
  int want = ch->capturing ? 1 : AOTRUN_FB_CONV_GRAPH_MAX_PLANS;
  candidate cands[AOTRUN_FB_CONV_GRAPH_MAX_PLANS];
  int n = 0;
  tally t;
  memset(&t, 0, sizeof t);
  candidates(ch, &g, want, cands, &n, &t);
  int best = n > 0 ? 0 : -1;
  *source = ch->capturing ? "heuristic (inside a capture)" : "the only plan";
  if (n > 1) {
    best = fastest(ch, &g, fuse, cands, n);
    *source = "benchmarked";
  }
  if (best < 0) {
    snprintf(why, cap,
             "%s: %d engine configs from heuristic mode A and %d from "
             "FALLBACK (%s), %d with disallowed numerics%s, %d failed to "
             "finalize%s%s, %d over the workspace limit of %zu bytes, %d "
             "duplicates; %d plans, none ran",
             fuse ? "with the bias fused" : "convolution only", t.configs_a,
             t.configs_fallback, status_name(ch->api, t.heur_status), t.noted,
             c->dtype == AOTRUN_FB_FLOAT32 && !aotrun_fb_conv_tf32_enabled()
                 ? " (TF32 or down-converting)"
                 : " (down-converting)",
             t.unfinalized, t.unfinalized ? ": " : "",
             t.unfinalized ? status_name(ch->api, t.plan_status) : "",
             t.too_big, ch->ws_limit, t.duplicate, n);
  }
  aotrun_fb_conv_gplan *p = NULL;
  int oom = best >= 0 && (p = new_gplan()) == NULL;
  for (int i = 0; i < n; i++) {
    if (i == best && p != NULL) continue; /* kept: p owns it below */
    destroy_desc(ch->api, cands[i].plan);
    destroy_desc(ch->api, cands[i].cfg);
  }
  if (p == NULL) {
    aotrun_fb_conv_graph_destroy(&g);
    return oom ? aotrun_shim_fail(
                     "%s: out of host memory for a convolution plan", c->op)
               : AOTI_TORCH_SUCCESS;
  }
  p->graph = g;
  p->cfg = cands[best].cfg;
  p->plan = cands[best].plan;
  p->engine = cands[best].engine;
  p->workspace = cands[best].workspace;
  p->time_ms = cands[best].ms;
  p->fused_bias = fuse;
  p->from_heuristic = ch->capturing;
  *out = p;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_conv_graph_plan(const aotrun_fb_conv_choose *ch,
                                         aotrun_fb_conv_gplan **out) {
  *out = NULL;
  aotrun_fb_conv_gplan *p = NULL;
  if (aotrun_fb_conv_gcache_lookup(ch->key, &p)) {
    /* A choice made inside a capture is benchmarked at the next call
     * outside one (the legacy path's rule). */
    if (!(p->from_heuristic && !ch->capturing)) {
      *out = p;
      return AOTI_TORCH_SUCCESS;
    }
    aotrun_fb_conv_gplan_unref(p);
    p = NULL;
  }
  const aotrun_fb_conv *c = ch->c;
  char why_fused[400] = "", why[400] = "";
  const char *source = "";
  /* The bias is fused unless the plan is windowed: there it must also
   * cover the zeros past dx's end, which only the separate kernel after
   * the window copy does. */
  int fuse = c->has_bias && !c->windowed;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (fuse) err = try_graph(ch, 1, &p, why_fused, sizeof why_fused, &source);
  if (!err && p == NULL) err = try_graph(ch, 0, &p, why, sizeof why, &source);
  if (err) return err;
  if (p == NULL) {
    /* No engine: this key runs on the legacy API from now on (cached, so
     * the graph is not rebuilt and the line below is printed once). */
    p = new_gplan();
    if (p == NULL)
      return aotrun_shim_fail("%s: out of host memory for a convolution plan",
                              c->op);
    p->legacy = 1;
    fprintf(stderr,
            "aotrun conv: %s: the cuDNN graph API has no plan for this "
            "convolution (%s%s%s); the legacy API runs it (%s)\n",
            c->op, why_fused, why_fused[0] ? "; " : "", why, ch->what);
  } else if (aotrun_fb_conv_log_enabled()) {
    knobs_of(ch->api, p->cfg, p->knobs, sizeof p->knobs);
    char ms[32] = ""; /* only a benchmark has a time */
    if (p->time_ms >= 0.0f)
      snprintf(ms, sizeof ms, ", %.3f ms", (double)p->time_ms);
    fprintf(stderr,
            "aotrun conv: %s: graph engine %lld (knobs %s), workspace %lld "
            "bytes, %s%s%s%s%s%s (%s)\n",
            c->op, (long long)p->engine, p->knobs[0] ? p->knobs : "default",
            (long long)p->workspace, source,
            p->fused_bias ? ", bias fused"
                          : (c->has_bias ? ", bias kernel" : ""),
            ms, why_fused[0] ? " (fused graph: " : "", why_fused,
            why_fused[0] ? ")" : "", ch->what);
  }
  p->refs = 1; /* the caller's */
  aotrun_fb_conv_gcache_store(ch->key, p);
  *out = p;
  return AOTI_TORCH_SUCCESS;
}
