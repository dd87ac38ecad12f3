/*
 * conv_graph.h: aoti_torch_cuda_convolution on cuDNN 9's backend (graph)
 * API, the default; the legacy one (conv_run.c) runs keys without a graph
 * plan, or every key with AOTRUN_CONV_API=legacy (kernel_options.h).
 * Measured on an H100: 0.11-0.89x ATen's time where the legacy API took
 * 1.3-8x (docs/gpu-results.md).
 *
 * Why: the legacy API's algorithm list (cudnnFind*AlgorithmEx) lacks the
 * engines that torch reaches through the graph API (engine heuristics,
 * runtime-fusion and NHWC-specialised kernels): 1.3-4.9x slower on an H200.
 *
 * The files, one concept each:
 *   conv_graph_build.c  the problem as backend descriptors: tensors (dims,
 *                       strides, uid, byte alignment), the convolution, the
 *                       forward or backward-data operation, the bias as a
 *                       pointwise ADD fused into the same graph, the graph.
 *   conv_graph_plan.c   engine heuristics (mode A, then FALLBACK) ->
 *                       engine configs filtered by numerical notes ->
 *                       finalized execution plans; the choice (benchmarked
 *                       outside a capture, the first plan inside one) and
 *                       the bounded, reference-counted plan cache.
 *   conv_graph_run.c    the CUDA side: the per-device cuDNN handle of the
 *                       graph path, the capture check, timing with events,
 *                       workspace from the shim allocator, the variant pack
 *                       and cudnnBackendExecute on the current stream.
 * Only conv_graph_run.c calls the CUDA runtime, so the first two are tested
 * on machines without a GPU against a fake cuDNN
 * (testing/fallback/fake_cudnn.c).
 */
#ifndef AOTRUN_FALLBACK_CONV_GRAPH_H
#define AOTRUN_FALLBACK_CONV_GRAPH_H

#include "shim_lib/fallback/conv.h"

/* Unique ids of the graph's tensors (variant pack keys). */
enum {
  AOTRUN_FB_CONV_UID_X = 1, /* the op's input: x, or dy when transposed */
  AOTRUN_FB_CONV_UID_W = 2,
  AOTRUN_FB_CONV_UID_Y = 3, /* cuDNN's output: y, or dx when transposed */
  AOTRUN_FB_CONV_UID_B = 4, /* the bias, [1, K, 1, 1(, 1)] */
  AOTRUN_FB_CONV_UID_ACC = 5 /* virtual: the convolution before the bias */
};

/* ---- the problem (conv_graph_build.c), no CUDA ---- */

typedef struct aotrun_fb_conv_graph_spec {
  int transposed; /* CONVOLUTION_BACKWARD_DATA instead of FORWARD */
  int rd;         /* tensor dims, 4 or 5 */
  int fuse_bias;  /* y = conv + bias in one graph */
  cudnnDataType_t io_type, comp_type;
  int64_t x_dims[5], x_strides[5];
  int64_t w_dims[5], w_strides[5];
  int64_t y_dims[5], y_strides[5];
  int64_t b_dims[5], b_strides[5];
  /* Byte alignment of each pointer (at most 16); the plan is valid only
   * for pointers aligned at least as much, so they are part of the key. */
  int64_t x_align, w_align, y_align, b_align;
  int64_t pre_pad[3], post_pad[3], stride[3], dil[3];
} aotrun_fb_conv_graph_spec;

/* The spec of a planned convolution (conv.h) as cuDNN runs it: operands
 * dense in the plan's memory format, the output is dx for a windowed plan.
 * align: x, w, y, bias alignments. */
AOTRUN_FB_HIDDEN void aotrun_fb_conv_graph_spec_of(
    const aotrun_fb_conv *c, int fuse_bias, const int64_t align[4],
    aotrun_fb_conv_graph_spec *s);

/* Every descriptor of one graph; they stay alive as long as a plan made
 * from it (a plan is not documented to own its graph). */
typedef struct aotrun_fb_conv_graph {
  const aotrun_fb_cudnn_api *api;
  cudnnBackendDescriptor_t x, w, y, b, acc;
  cudnnBackendDescriptor_t conv, conv_op, add, add_op, graph;
} aotrun_fb_conv_graph;

/* Builds and finalizes the graph on `handle`. On failure returns the
 * cuDNN status, destroys what was made, and writes the failing step into
 * step (e.g. "the weight tensor"). */
AOTRUN_FB_HIDDEN cudnnStatus_t aotrun_fb_conv_graph_build(
    const aotrun_fb_cudnn_api *api, cudnnHandle_t handle,
    const aotrun_fb_conv_graph_spec *s, aotrun_fb_conv_graph *g,
    const char **step);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_graph_destroy(aotrun_fb_conv_graph *g);

/* ---- plans and their cache (conv_graph_plan.c), no CUDA ---- */

/* Everything a plan depends on: the legacy key (shapes, dtype, layout,
 * groups, parameters, device) plus what the graph adds. */
typedef struct aotrun_fb_conv_gkey {
  aotrun_fb_conv_key base;
  int64_t has_bias, windowed; /* windowed plans never fuse the bias */
  int64_t align[4];           /* x, w, y, bias */
} aotrun_fb_conv_gkey;

/* A cached choice, shared by reference count: lookups pin it, so an
 * eviction by another thread never frees a plan still executing. */
typedef struct aotrun_fb_conv_gplan {
  int refs; /* under the cache lock */
  int legacy; /* the graph API has no plan for this key: use the legacy API */
  int fused_bias;
  int from_heuristic; /* chosen inside a capture: benchmark at next call */
  int64_t engine;     /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX */
  int64_t workspace;  /* bytes */
  float time_ms;      /* benchmarked; -1 otherwise */
  /* Executed inside a stream capture: a CUDA graph may hold its kernels,
   * so once dropped from the cache it is retired (kept) until
   * aotrun_fb_conv_gcache_clear instead of freed. Under the cache lock. */
  int captured;
  struct aotrun_fb_conv_gplan *next_retired;
  char knobs[96];     /* "type=value ..." of the engine config */
  aotrun_fb_conv_graph graph;
  cudnnBackendDescriptor_t cfg, plan;
  /* The finalized variant pack of the last execute and the pointers it
   * holds (x, w, y, bias, workspace): a model's steady call passes the
   * same buffers, so the pack is reused instead of built, finalized and
   * destroyed on every call. Under conv_graph_run.c's graph_lock. */
  cudnnBackendDescriptor_t pack;
  void *pack_ptrs[5];
} aotrun_fb_conv_gplan;

#define AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY 256
#define AOTRUN_FB_CONV_GRAPH_MAX_PLANS 8 /* benchmarked per key */

/* Times one finalized plan on the real buffers (conv_graph_run.c); returns
 * 0 and *ms, or -1 when the plan cannot run (it is then skipped). */
typedef int (*aotrun_fb_conv_time_fn)(void *ctx, const aotrun_fb_conv_gplan *p,
                                      float *ms);

typedef struct aotrun_fb_conv_choose {
  const aotrun_fb_cudnn_api *api;
  cudnnHandle_t handle;
  const aotrun_fb_conv *c;
  const aotrun_fb_conv_gkey *key;
  int capturing;     /* take the first plan, run nothing */
  size_t ws_limit;   /* plans needing more workspace are skipped */
  aotrun_fb_conv_time_fn time_plan;
  void *time_ctx;
  const char *what; /* the problem in words, for messages */
} aotrun_fb_conv_choose;

AOTRUN_FB_HIDDEN void aotrun_fb_conv_gkey_of(const aotrun_fb_conv *c,
                                             const int64_t align[4],
                                             aotrun_fb_conv_gkey *key);

/* The plan of ch->key: cached, or chosen now and cached (a key with no
 * plan is cached as `legacy`, logged once on stderr). *out is pinned:
 * release it with aotrun_fb_conv_gplan_unref. Fails only on host memory
 * or when the graph cannot even be described. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_conv_graph_plan(
    const aotrun_fb_conv_choose *ch, aotrun_fb_conv_gplan **out);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_gplan_unref(aotrun_fb_conv_gplan *p);

/* The cache: 1 and a pinned plan when cached; inserting replaces an entry
 * of the same key, or the oldest when full (each dropped plan unref'd). */
AOTRUN_FB_HIDDEN int aotrun_fb_conv_gcache_lookup(
    const aotrun_fb_conv_gkey *key, aotrun_fb_conv_gplan **out);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_gcache_store(
    const aotrun_fb_conv_gkey *key, aotrun_fb_conv_gplan *p);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_gplan_mark_captured(
    aotrun_fb_conv_gplan *p);
AOTRUN_FB_HIDDEN int aotrun_fb_conv_gcache_size(void);
/* Plans dropped from the cache but kept for captured graphs. */
AOTRUN_FB_HIDDEN int aotrun_fb_conv_gcache_retired(void);
AOTRUN_FB_HIDDEN void aotrun_fb_conv_gcache_clear(void);

/* ---- execution (conv_graph_run.c) ---- */

/* cudnnBackendExecute of p on a new variant pack of x, w, y and, with a
 * fused bias, b (uids above), destroyed after; no CUDA runtime call of its
 * own. For plans being timed (they are not cached yet). */
AOTRUN_FB_HIDDEN cudnnStatus_t aotrun_fb_conv_graph_execute(
    const aotrun_fb_cudnn_api *api, cudnnHandle_t handle,
    const aotrun_fb_conv_gplan *p, const void *x, const void *w, void *y,
    const void *bias, void *workspace);
/* The same on p's own pack (p->pack) when it holds these pointers, else on
 * a new one that replaces it; the caller holds graph_lock. The plans a
 * call runs: its steady calls build no descriptor. */
AOTRUN_FB_HIDDEN cudnnStatus_t aotrun_fb_conv_graph_execute_reusing(
    const aotrun_fb_cudnn_api *api, cudnnHandle_t handle,
    aotrun_fb_conv_gplan *p, const void *x, const void *w, void *y,
    const void *bias, void *workspace);

/* Runs cuDNN's part of the convolution (conv_run.c prepared the dense
 * operands; y is cuDNN's output) through the graph API. *ran is 0 when this
 * key has no graph plan (the caller then runs the legacy API); *bias_done
 * is 1 when the bias was fused. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_conv_graph_run(
    const aotrun_fb_conv *c, const aotrun_fb_cudnn_api *api,
    aotrun_fb_temps *temps, cudaStream_t stream, const void *x,
    const void *w, void *y, const void *bias, aotrun_fb_conv_what *what,
    int *ran, int *bias_done);

/* Destroys the graph path's handles and plans (aotrun_fb_conv_release_all). */
AOTRUN_FB_HIDDEN void aotrun_fb_conv_graph_release_all(void);

/* ---- shared with conv_run.c ---- */

AOTRUN_FB_HIDDEN int64_t aotrun_fb_conv_alignment(const void *p);

#endif /* AOTRUN_FALLBACK_CONV_GRAPH_H */
