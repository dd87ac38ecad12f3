/* test_conv_graph.c: the cuDNN backend (graph) path of
 * aoti_torch_cuda_convolution without a GPU, against libfake_cudnn.so
 * (fake_cudnn.c; its path is argv[1]), loaded through the shim's loader
 * seam: the graphs built (dims, strides, uids, alignment, padding,
 * dilation, compute type, operations, the fused bias), the choice of plan
 * (benchmark order, a capture taking the first plan, notes filtering TF32
 * and down-converting engines, plans that fail to finalize or need too
 * much workspace skipped, FALLBACK as the second source), a key with no
 * engine falling back to the legacy API with one log line, the variant
 * pack, and the plan cache (its bound, pinned plans, every descriptor
 * destroyed). What needs CUDA (the capture check, events, workspace,
 * execution on a stream) is conv_graph_run.c's and runs on the GPU check
 * (testing/gpu/ops/test_conv.py with AOTRUN_CONV_API=graph). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/conv_graph.h"
#include "testing/fallback/fake_cudnn.h"
#include "testing/fallback/fake_tensor.h"

enum { F16 = 5, F32 = 6, F64 = 7, BF16 = 15, CUDA = 1 };
static const char OP[] = "aoti_torch_cuda_convolution";

static const char *g_lib;
static fake_cudnn_control *ctl;
static fake_cudnn_reset_fn fake_reset;
static const aotrun_fb_cudnn_api *api;
static cudnnHandle_t handle;

/* ---- tensors and plans (the "CUDA" tensors are blobs never touched) ---- */

typedef struct conv_case {
  AtenTensorHandle x, w, b;
  aotrun_fb_conv c;
} conv_case;

static void plan_conv(conv_case *k, int with_bias, int transposed,
                      const int64_t *st, const int64_t *pd, const int64_t *dl,
                      const int64_t *op, int64_t groups) {
  AtenTensorHandle *bias = with_bias ? &k->b : NULL;
  assert_int_equal(aotrun_fb_conv_args(OP, k->x, k->w, bias, st, 2, pd, 2, dl,
                                       2, transposed, op, 2, groups, &k->c),
                   AOTI_TORCH_SUCCESS);
}

static void free_case(conv_case *k) {
  aoti_torch_delete_tensor_object(k->x);
  aoti_torch_delete_tensor_object(k->w);
  if (k->b) aoti_torch_delete_tensor_object(k->b);
}

static const int64_t ONE[2] = {1, 1}, ZERO[2] = {0, 0}, TWO[2] = {2, 2};

/* fp16 NCHW 3x3, padding 1, no bias: the plan tests' problem. */
static void simple_case(conv_case *k, int32_t dtype) {
  memset(k, 0, sizeof *k);
  k->x = fake(dtype, CUDA, 4, (int64_t[]){2, 4, 8, 8});
  k->w = fake(dtype, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  plan_conv(k, 0, 0, ONE, ONE, ONE, ZERO, 1);
}

/* ---- reading the fake's records ---- */

static fake_desc *nth_of_type(int mark, int type, int nth) {
  for (int i = mark; i < ctl->ndescs; i++)
    if (ctl->descs[i]->type == type && nth-- == 0) return ctl->descs[i];
  fail_msg("no descriptor #%d of type %d since %d", nth, type, mark);
  return NULL;
}

static int count_of_type(int mark, int type) {
  int n = 0;
  for (int i = mark; i < ctl->ndescs; i++) n += ctl->descs[i]->type == type;
  return n;
}

static const fake_attr *attr(const fake_desc *d, int name) {
  for (int i = 0; i < d->nattrs; i++)
    if (d->attrs[i].name == name) return &d->attrs[i];
  fail_msg("descriptor of type %d lacks attribute %d", d->type, name);
  return NULL;
}

static int has_attr(const fake_desc *d, int name) {
  for (int i = 0; i < d->nattrs; i++)
    if (d->attrs[i].name == name) return 1;
  return 0;
}

static void expect_int64s(const fake_desc *d, int name, int n,
                          const int64_t *want) {
  const fake_attr *a = attr(d, name);
  assert_int_equal(a->type, CUDNN_TYPE_INT64);
  assert_int_equal(a->count, n);
  for (int i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, a->data + 8 * i, sizeof v);
    if (v != want[i])
      fail_msg("attribute %d [%d] is %lld, expected %lld", name, i,
               (long long)v, (long long)want[i]);
  }
}

static int enum_attr(const fake_desc *d, int name) {
  const fake_attr *a = attr(d, name);
  assert_int_equal(a->count, 1);
  int v;
  memcpy(&v, a->data, sizeof v);
  return v;
}

static fake_desc *desc_attr(const fake_desc *d, int name, int i) {
  const fake_attr *a = attr(d, name);
  assert_int_equal(a->type, CUDNN_TYPE_BACKEND_DESCRIPTOR);
  assert_true(a->count > i);
  fake_desc *p;
  memcpy(&p, a->data + 8 * i, sizeof p);
  return p;
}

static fake_desc *tensor_uid(int mark, int64_t uid) {
  for (int i = mark; i < ctl->ndescs; i++) {
    fake_desc *d = ctl->descs[i];
    if (d->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR) continue;
    for (int j = 0; j < d->nattrs; j++) {
      int64_t v;
      memcpy(&v, d->attrs[j].data, sizeof v);
      if (d->attrs[j].name == CUDNN_ATTR_TENSOR_UNIQUE_ID && v == uid) return d;
    }
  }
  fail_msg("no tensor with uid %lld", (long long)uid);
  return NULL;
}

static void expect_tensor(int mark, int64_t uid, int rd, const int64_t *dims,
                          const int64_t *strides, int dtype, int64_t align,
                          int is_virtual) {
  fake_desc *t = tensor_uid(mark, uid);
  assert_true(t->finalized);
  expect_int64s(t, CUDNN_ATTR_TENSOR_DIMENSIONS, rd, dims);
  expect_int64s(t, CUDNN_ATTR_TENSOR_STRIDES, rd, strides);
  assert_int_equal(enum_attr(t, CUDNN_ATTR_TENSOR_DATA_TYPE), dtype);
  expect_int64s(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align);
  if (is_virtual) {
    const fake_attr *v = attr(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL);
    assert_int_equal(v->type, CUDNN_TYPE_BOOLEAN);
    assert_int_equal(v->data[0], 1);
  } else {
    assert_false(has_attr(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL));
  }
}

static void expect_conv_desc(int mark, int sd, const int64_t *pad,
                             const int64_t *stride, const int64_t *dil,
                             int comp) {
  fake_desc *cv = nth_of_type(mark, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, 0);
  int64_t n = sd;
  expect_int64s(cv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &n);
  expect_int64s(cv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, sd, pad);
  expect_int64s(cv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, sd, pad);
  expect_int64s(cv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, sd, stride);
  expect_int64s(cv, CUDNN_ATTR_CONVOLUTION_DILATIONS, sd, dil);
  assert_int_equal(enum_attr(cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE), comp);
  assert_int_equal(enum_attr(cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE),
                   CUDNN_CROSS_CORRELATION);
}

/* Builds c's graph on the fake; returns the mark before it. */
static int build(const aotrun_fb_conv *c, int fuse, const int64_t align[4],
                 aotrun_fb_conv_graph *g) {
  int mark = ctl->ndescs;
  aotrun_fb_conv_graph_spec s;
  aotrun_fb_conv_graph_spec_of(c, fuse, align, &s);
  const char *step = NULL;
  cudnnStatus_t st = aotrun_fb_conv_graph_build(api, handle, &s, g, &step);
  if (st != CUDNN_STATUS_SUCCESS)
    fail_msg("build failed at %s: %d", step ? step : "?", (int)st);
  return mark;
}

static void expect_no_leak(void) {
  assert_int_equal(ctl->creates, ctl->destroys);
  assert_int_equal(ctl->bad_calls, 0);
}

/* ---- setup ---- */

static int group_setup(void **state) {
  (void)state;
  if (g_lib == NULL) return -1;
  if (aotrun_fb_cudnn_set_library(g_lib) != 0) return -1;
  if (aotrun_fb_cudnn_load(OP, &api) != AOTI_TORCH_SUCCESS) {
    fprintf(stderr, "%s\n", aotrun_shim_last_error());
    return -1;
  }
  /* The loader's handle is RTLD_LOCAL: opening the same path again gives
   * the same library, whose control functions the test calls. */
  void *lib = dlopen(g_lib, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) return -1;
  fake_cudnn_control_fn get =
      (fake_cudnn_control_fn)dlsym(lib, "fake_cudnn_control_get");
  fake_reset = (fake_cudnn_reset_fn)dlsym(lib, "fake_cudnn_reset");
  dlclose(lib);
  if (get == NULL || fake_reset == NULL) return -1;
  ctl = get();
  return api->cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  aotrun_fb_conv_gcache_clear();
  if (fake_reset) fake_reset();
  return 0;
}

static int each_setup(void **state) {
  (void)state;
  aotrun_fb_conv_gcache_clear();
  fake_reset();
  return 0;
}

/* ---- the graphs ---- */

static void test_loader_resolves_backend(void **state) {
  (void)state;
  assert_int_equal(api->version, 91900);
  assert_non_null(api->cudnnBackendCreateDescriptor);
  assert_non_null(api->cudnnBackendDestroyDescriptor);
  assert_non_null(api->cudnnBackendSetAttribute);
  assert_non_null(api->cudnnBackendGetAttribute);
  assert_non_null(api->cudnnBackendFinalize);
  assert_non_null(api->cudnnBackendExecute);
}

static void test_graph_forward_grouped(void **state) {
  (void)state;
  /* fp32 NCHW, groups 2, stride 2, padding 1, dilation 2: out 4x4. */
  conv_case k = {0};
  k.x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 9, 9});
  k.w = fake(F32, CUDA, 4, (int64_t[]){8, 2, 3, 3});
  plan_conv(&k, 0, 0, TWO, ONE, TWO, ZERO, 2);
  aotrun_fb_conv_graph g;
  const int64_t align[4] = {16, 8, 4, 0};
  int mark = build(&k.c, 0, align, &g);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_X, 4, (int64_t[]){2, 4, 9, 9},
                (int64_t[]){324, 81, 9, 1}, CUDNN_DATA_FLOAT, 16, 0);
  /* Groups: the weight keeps [K, C / groups, ...]; cuDNN divides. */
  expect_tensor(mark, AOTRUN_FB_CONV_UID_W, 4, (int64_t[]){8, 2, 3, 3},
                (int64_t[]){18, 9, 3, 1}, CUDNN_DATA_FLOAT, 8, 0);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_Y, 4, (int64_t[]){2, 8, 4, 4},
                (int64_t[]){128, 16, 4, 1}, CUDNN_DATA_FLOAT, 4, 0);
  assert_int_equal(count_of_type(mark, CUDNN_BACKEND_TENSOR_DESCRIPTOR), 3);
  expect_conv_desc(mark, 2, ONE, TWO, TWO, CUDNN_DATA_FLOAT);
  fake_desc *op = nth_of_type(
      mark, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 0);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, 0),
                   g.x);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, 0),
                   g.w);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, 0),
                   g.y);
  assert_ptr_equal(
      desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, 0),
      g.conv);
  const fake_attr *alpha =
      attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA);
  const fake_attr *beta = attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA);
  float a, b;
  memcpy(&a, alpha->data, 4);
  memcpy(&b, beta->data, 4);
  assert_int_equal(alpha->type, CUDNN_TYPE_FLOAT);
  assert_true(a == 1.0f && b == 0.0f);
  fake_desc *graph = nth_of_type(mark, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 0);
  assert_true(graph->finalized);
  assert_int_equal(attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS)->count, 1);
  assert_ptr_equal(desc_attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 0), op);
  cudnnHandle_t h;
  memcpy(&h, attr(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE)->data, sizeof h);
  assert_ptr_equal(h, handle);
  assert_int_equal(count_of_type(mark, CUDNN_BACKEND_POINTWISE_DESCRIPTOR), 0);
  aotrun_fb_conv_graph_destroy(&g);
  expect_no_leak();
  free_case(&k);
}

static void test_graph_depthwise_channels_last(void **state) {
  (void)state;
  conv_case k = {0};
  k.x = fake_strided(BF16, CUDA, 4, (int64_t[]){2, 8, 6, 6},
                (int64_t[]){288, 1, 48, 8});
  k.w = fake_strided(BF16, CUDA, 4, (int64_t[]){8, 1, 3, 3}, (int64_t[]){9, 1, 3, 1});
  plan_conv(&k, 0, 0, ONE, ONE, ONE, ZERO, 8);
  assert_true(k.c.channels_last);
  aotrun_fb_conv_graph g;
  int mark = build(&k.c, 0, (const int64_t[]){16, 16, 16, 0}, &g);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_X, 4, (int64_t[]){2, 8, 6, 6},
                (int64_t[]){288, 1, 48, 8}, CUDNN_DATA_BFLOAT16, 16, 0);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_W, 4, (int64_t[]){8, 1, 3, 3},
                (int64_t[]){9, 1, 3, 1}, CUDNN_DATA_BFLOAT16, 16, 0);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_Y, 4, (int64_t[]){2, 8, 6, 6},
                (int64_t[]){288, 1, 48, 8}, CUDNN_DATA_BFLOAT16, 16, 0);
  expect_conv_desc(mark, 2, ONE, ONE, ONE, CUDNN_DATA_FLOAT);
  aotrun_fb_conv_graph_destroy(&g);
  expect_no_leak();
  free_case(&k);
}

static void test_graph_transposed(void **state) {
  (void)state;
  /* 4x4 stride 2 padding 1: out (5 - 1) * 2 - 2 + 4 = 10. */
  conv_case k = {0};
  k.x = fake(F16, CUDA, 4, (int64_t[]){1, 4, 5, 5});
  k.w = fake(F16, CUDA, 4, (int64_t[]){4, 3, 4, 4});
  plan_conv(&k, 0, 1, TWO, ONE, ONE, ZERO, 1);
  aotrun_fb_conv_graph g;
  int mark = build(&k.c, 0, (const int64_t[]){16, 16, 16, 0}, &g);
  assert_int_equal(
      count_of_type(mark, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR),
      0);
  fake_desc *op = nth_of_type(
      mark, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, 0);
  /* Our input is cuDNN's dy, our result its dx. */
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, 0),
                   g.x);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, 0),
                   g.y);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, 0),
                   g.w);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_X, 4, (int64_t[]){1, 4, 5, 5},
                (int64_t[]){100, 25, 5, 1}, CUDNN_DATA_HALF, 16, 0);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_W, 4, (int64_t[]){4, 3, 4, 4},
                (int64_t[]){48, 16, 4, 1}, CUDNN_DATA_HALF, 16, 0);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_Y, 4, (int64_t[]){1, 3, 10, 10},
                (int64_t[]){300, 100, 10, 1}, CUDNN_DATA_HALF, 16, 0);
  expect_conv_desc(mark, 2, ONE, TWO, ONE, CUDNN_DATA_FLOAT);
  aotrun_fb_conv_graph_destroy(&g);
  free_case(&k);

  /* output_padding 1 >= stride 1 (below dilation 2): the windowed plan's
   * full dx, (5 - 1) + 2 * 2 + 1 = 9, with padding 0 (conv_transposed.c). */
  memset(&k, 0, sizeof k);
  k.x = fake(F32, CUDA, 4, (int64_t[]){1, 4, 5, 5});
  k.w = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3});
  plan_conv(&k, 0, 1, ONE, ONE, TWO, ONE, 1);
  assert_true(k.c.windowed);
  mark = build(&k.c, 0, (const int64_t[]){16, 16, 16, 0}, &g);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_Y, 4, (int64_t[]){1, 3, 9, 9},
                (int64_t[]){243, 81, 9, 1}, CUDNN_DATA_FLOAT, 16, 0);
  expect_conv_desc(mark, 2, ZERO, ONE, TWO, CUDNN_DATA_FLOAT);
  aotrun_fb_conv_graph_destroy(&g);
  expect_no_leak();
  free_case(&k);
}

static void test_graph_bias_fused(void **state) {
  (void)state;
  conv_case k = {0};
  k.x = fake_strided(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8}, (int64_t[]){256, 1, 32, 4});
  k.w = fake_strided(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3}, (int64_t[]){36, 1, 12, 4});
  k.b = fake(F16, CUDA, 1, (int64_t[]){6});
  plan_conv(&k, 1, 0, ONE, ONE, ONE, ZERO, 1);
  aotrun_fb_conv_graph g;
  int mark = build(&k.c, 1, (const int64_t[]){16, 16, 16, 2}, &g);
  assert_int_equal(count_of_type(mark, CUDNN_BACKEND_TENSOR_DESCRIPTOR), 5);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_B, 4, (int64_t[]){1, 6, 1, 1},
                (int64_t[]){6, 1, 6, 6}, CUDNN_DATA_HALF, 2, 0);
  /* The convolution's result never reaches memory: float, virtual. */
  expect_tensor(mark, AOTRUN_FB_CONV_UID_ACC, 4, (int64_t[]){2, 6, 8, 8},
                (int64_t[]){384, 1, 48, 6}, CUDNN_DATA_FLOAT, 16, 1);
  expect_tensor(mark, AOTRUN_FB_CONV_UID_Y, 4, (int64_t[]){2, 6, 8, 8},
                (int64_t[]){384, 1, 48, 6}, CUDNN_DATA_HALF, 16, 0);
  fake_desc *op = nth_of_type(
      mark, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 0);
  assert_ptr_equal(desc_attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, 0),
                   g.acc);
  fake_desc *pw = nth_of_type(mark, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, 0);
  assert_int_equal(enum_attr(pw, CUDNN_ATTR_POINTWISE_MODE),
                   CUDNN_POINTWISE_ADD);
  assert_int_equal(enum_attr(pw, CUDNN_ATTR_POINTWISE_MATH_PREC),
                   CUDNN_DATA_FLOAT);
  fake_desc *add =
      nth_of_type(mark, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 0);
  assert_ptr_equal(desc_attr(add, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, 0),
                   pw);
  assert_ptr_equal(desc_attr(add, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, 0), g.acc);
  assert_ptr_equal(desc_attr(add, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 0), g.b);
  assert_ptr_equal(desc_attr(add, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, 0), g.y);
  fake_desc *graph = nth_of_type(mark, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 0);
  assert_int_equal(attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS)->count, 2);
  assert_ptr_equal(desc_attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 0), op);
  assert_ptr_equal(desc_attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, 1), add);
  aotrun_fb_conv_graph_destroy(&g);
  expect_no_leak();
  free_case(&k);
}

static void test_graph_float64(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F64);
  aotrun_fb_conv_graph g;
  int mark = build(&k.c, 0, (const int64_t[]){16, 16, 16, 0}, &g);
  expect_conv_desc(mark, 2, ONE, ONE, ONE, CUDNN_DATA_DOUBLE);
  fake_desc *op = nth_of_type(
      mark, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 0);
  const fake_attr *alpha =
      attr(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA);
  double a;
  memcpy(&a, alpha->data, 8);
  assert_int_equal(alpha->type, CUDNN_TYPE_DOUBLE);
  assert_true(a == 1.0);
  aotrun_fb_conv_graph_destroy(&g);
  expect_no_leak();
  free_case(&k);
}

/* ---- choosing a plan ---- */

typedef struct fake_timer {
  float ms[FAKE_MAX_ENGINES]; /* < 0: the plan cannot run */
  int calls;
} fake_timer;

static int time_by_engine(void *ctx, const aotrun_fb_conv_gplan *p, float *ms) {
  fake_timer *t = ctx;
  t->calls++;
  assert_non_null(p->plan);
  if (t->ms[p->engine] < 0) return -1;
  *ms = t->ms[p->engine];
  return 0;
}

static aotrun_fb_conv_gplan *choose(const conv_case *k, int capturing,
                                    size_t ws_limit, fake_timer *t) {
  const int64_t align[4] = {16, 16, 16, k->c.has_bias ? 16 : 0};
  aotrun_fb_conv_gkey key;
  aotrun_fb_conv_gkey_of(&k->c, align, &key);
  aotrun_fb_conv_choose ch = {api,       handle,   &k->c,          &key,
                              capturing, ws_limit, time_by_engine, t,
                              "test problem"};
  aotrun_fb_conv_gplan *p = NULL;
  assert_int_equal(aotrun_fb_conv_graph_plan(&ch, &p), AOTI_TORCH_SUCCESS);
  assert_non_null(p);
  return p;
}

static void set_source(fake_heur_source *s, int n, ...) {
  va_list ap;
  va_start(ap, n);
  s->count = n;
  for (int i = 0; i < n; i++) s->engines[i] = va_arg(ap, int);
  va_end(ap);
}

/* stderr into a file while f runs; returns what was written. */
typedef struct captured {
  char text[4096];
} captured;

static int stderr_saved = -1;
static FILE *stderr_file;

static void capture_start(void) {
  fflush(stderr);
  stderr_file = tmpfile();
  assert_non_null(stderr_file);
  stderr_saved = dup(2);
  dup2(fileno(stderr_file), 2);
}

static void capture_end(captured *out) {
  fflush(stderr);
  dup2(stderr_saved, 2);
  close(stderr_saved);
  rewind(stderr_file);
  size_t n = fread(out->text, 1, sizeof out->text - 1, stderr_file);
  out->text[n] = '\0';
  fclose(stderr_file);
}

static void test_plan_benchmarks_fastest(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  set_source(&ctl->mode_a, 3, 10, 11, 12);
  fake_timer t = {.ms = {[10] = 0.5f, [11] = 0.2f, [12] = 0.3f}};
  captured log;
  capture_start();
  aotrun_fb_conv_gplan *p = choose(&k, 0, 1 << 30, &t);
  capture_end(&log);
  assert_int_equal(t.calls, 3);
  assert_int_equal(p->engine, 11);
  assert_false(p->legacy);
  assert_false(p->from_heuristic);
  assert_false(p->fused_bias);
  assert_true(p->time_ms == 0.2f);
  /* AOTRUN_CONV_LOG=1 (main): the choice, its engine and knobs. */
  if (strstr(log.text, "graph engine 11 (knobs default), workspace 0 bytes, "
                       "benchmarked, 0.200 ms (test problem)") == NULL)
    fail_msg("log: %s", log.text);
  /* Only the chosen plan (and its config) outlive the choice. */
  assert_int_equal(
      count_of_type(0, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR), 3);
  int queries = ctl->heuristic_queries, creates = ctl->creates;
  aotrun_fb_conv_gplan_unref(p);
  /* Cached: no heuristics, no descriptors, no timing. */
  p = choose(&k, 0, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  assert_int_equal(ctl->heuristic_queries, queries);
  assert_int_equal(ctl->creates, creates);
  assert_int_equal(t.calls, 3);
  assert_int_equal(aotrun_fb_conv_gcache_size(), 1);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

static void test_plan_capture_then_benchmark(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  set_source(&ctl->mode_a, 3, 10, 11, 12);
  ctl->fail_finalize[10] = 1; /* skipped: the next config is taken */
  fake_timer t = {.ms = {[10] = 0.1f, [11] = 0.4f, [12] = 0.3f}};
  aotrun_fb_conv_gplan *p = choose(&k, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  assert_true(p->from_heuristic);
  assert_int_equal(t.calls, 0); /* nothing runs inside a capture */
  /* Only one plan finalized beyond the failed one: the first is enough. */
  assert_int_equal(count_of_type(0, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR), 2);
  aotrun_fb_conv_gplan_unref(p);
  /* Still capturing: the heuristic choice stays. */
  p = choose(&k, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  assert_int_equal(t.calls, 0);
  /* Outside the capture: benchmarked (10 still fails) and replaced. The
   * old plan is pinned by us until unref. */
  aotrun_fb_conv_gplan *q = choose(&k, 0, 1 << 30, &t);
  assert_int_equal(t.calls, 2);
  assert_int_equal(q->engine, 12);
  assert_false(q->from_heuristic);
  assert_int_equal(aotrun_fb_conv_gcache_size(), 1);
  assert_int_equal(p->engine, 11); /* still readable: pinned */
  int destroys = ctl->destroys;
  aotrun_fb_conv_gplan_unref(p);
  assert_true(ctl->destroys > destroys); /* freed at its last unref */
  aotrun_fb_conv_gplan_unref(q);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

static void test_captured_plan_retired(void **state) {
  (void)state;
  /* A plan executed inside a capture (conv_graph_run.c marks it) may have
   * its kernels in a CUDA graph: replaced after the capture, it is kept
   * until the cache is cleared (release_all), not freed. */
  conv_case k;
  simple_case(&k, F16);
  set_source(&ctl->mode_a, 2, 10, 11);
  fake_timer t = {.ms = {[10] = 0.4f, [11] = 0.1f}, .calls = 0};
  aotrun_fb_conv_gplan *p = choose(&k, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 10);
  aotrun_fb_conv_gplan_mark_captured(p);
  aotrun_fb_conv_gplan_unref(p);
  int destroys = ctl->destroys;
  aotrun_fb_conv_gplan *q = choose(&k, 0, 1 << 30, &t);
  assert_int_equal(q->engine, 11);
  aotrun_fb_conv_gplan_unref(q);
  assert_int_equal(aotrun_fb_conv_gcache_retired(), 1);
  assert_int_equal(aotrun_fb_conv_gcache_size(), 1);
  /* Only the losing benchmark candidate was destroyed, not p's plan. */
  fake_desc *plan10 = nth_of_type(0, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 0);
  assert_false(plan10->destroyed);
  assert_true(ctl->destroys > destroys);
  aotrun_fb_conv_gcache_clear();
  assert_int_equal(aotrun_fb_conv_gcache_retired(), 0);
  assert_true(plan10->destroyed);
  expect_no_leak();
  free_case(&k);
}

static void test_plan_numerical_notes(void **state) {
  (void)state;
  conv_case k16;
  simple_case(&k16, F16);
  set_source(&ctl->mode_a, 2, 10, 11);
  ctl->notes[10] = 1 << CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
  fake_timer t = {{0}, 0};
  /* float16: tensor cores are its normal math (float32: the next test). */
  aotrun_fb_conv_gplan *p = choose(&k16, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 10);
  aotrun_fb_conv_gplan_unref(p);
  /* Down-converting inputs is never allowed (ATen's filter too). */
  aotrun_fb_conv_gcache_clear();
  ctl->notes[10] = 1 << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
  p = choose(&k16, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k16);
}

/* float32 may take the tensor-core (TF32) engine by default, as torch;
 * AOTRUN_CONV_TF32=0 keeps full float32, its plans keyed apart; never an
 * engine that down-converts its inputs. */
static void test_plan_tf32_by_default(void **state) {
  (void)state;
  conv_case k32;
  simple_case(&k32, F32);
  set_source(&ctl->mode_a, 2, 10, 11);
  ctl->notes[10] = 1 << CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
  fake_timer t = {{0}, 0};
  const int64_t align[4] = {16, 16, 16, 0};
  aotrun_fb_conv_gkey with_tf32, without;
  unsetenv("AOTRUN_CONV_TF32");
  aotrun_shim_read_kernel_options();
  aotrun_fb_conv_gkey_of(&k32.c, align, &with_tf32);
  aotrun_fb_conv_gplan *p = choose(&k32, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 10);
  aotrun_fb_conv_gplan_unref(p);
  /* Full float32: another cache key, and the FMA engine. */
  setenv("AOTRUN_CONV_TF32", "0", 1);
  aotrun_shim_read_kernel_options();
  aotrun_fb_conv_gkey_of(&k32.c, align, &without);
  assert_true(memcmp(&with_tf32, &without, sizeof without) != 0);
  p = choose(&k32, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  aotrun_fb_conv_gplan_unref(p);
  /* Any other value is the default. */
  setenv("AOTRUN_CONV_TF32", "1", 1);
  aotrun_shim_read_kernel_options();
  aotrun_fb_conv_gcache_clear();
  ctl->notes[10] = 1 << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
  p = choose(&k32, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 11);
  aotrun_fb_conv_gplan_unref(p);
  unsetenv("AOTRUN_CONV_TF32");
  aotrun_shim_read_kernel_options();
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k32);
}

static void test_plan_workspace_limit_and_fallback_source(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  fake_timer t = {.ms = {[10] = 0.3f, [20] = 0.2f, [21] = 0.1f}};
  /* Too much workspace: skipped. */
  set_source(&ctl->mode_a, 2, 10, 11);
  ctl->workspace[10] = 1 << 20;
  ctl->workspace[11] = 512;
  aotrun_fb_conv_gplan *p = choose(&k, 1, 1000, &t);
  assert_int_equal(p->engine, 11);
  assert_int_equal(p->workspace, 512);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  /* Mode A has nothing: FALLBACK's list is the second source. */
  set_source(&ctl->mode_a, 0);
  set_source(&ctl->fallback, 1, 20);
  p = choose(&k, 1, 1 << 30, &t);
  assert_int_equal(p->engine, 20);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  /* Outside a capture both sources feed the benchmark; an engine mode A
   * already gave is not taken twice. */
  ctl->workspace[10] = 0;
  set_source(&ctl->mode_a, 1, 10);
  set_source(&ctl->fallback, 2, 10, 21);
  t.calls = 0;
  p = choose(&k, 0, 1 << 30, &t);
  assert_int_equal(t.calls, 2);
  assert_int_equal(p->engine, 21);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

static void test_plan_no_engine_falls_back_to_legacy(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  set_source(&ctl->mode_a, 1, 10);
  ctl->fail_finalize[10] = 1;
  set_source(&ctl->fallback, 0);
  fake_timer t = {{0}, 0};
  captured log;
  capture_start();
  aotrun_fb_conv_gplan *p = choose(&k, 0, 1 << 30, &t);
  capture_end(&log);
  assert_true(p->legacy);
  assert_null(p->plan);
  const char *want =
      "aotrun conv: aoti_torch_cuda_convolution: the cuDNN graph API has no "
      "plan for this convolution (convolution only: 1 engine configs from "
      "heuristic mode A and 0 from FALLBACK (CUDNN_STATUS_SUCCESS), 0 with "
      "disallowed numerics (down-converting), 1 failed to finalize: "
      "CUDNN_STATUS_NOT_SUPPORTED, 0 over the workspace limit of 1073741824 "
      "bytes, 0 duplicates; 0 plans, none ran); the legacy API runs it (test "
      "problem)\n";
  if (strcmp(log.text, want) != 0) fail_msg("log: %s", log.text);
  /* The graph was not kept: everything made for it is destroyed. */
  assert_int_equal(ctl->creates, ctl->destroys);
  aotrun_fb_conv_gplan_unref(p);
  /* Logged once: the key is cached as legacy, nothing rebuilt. */
  int creates = ctl->creates;
  capture_start();
  p = choose(&k, 0, 1 << 30, &t);
  capture_end(&log);
  assert_true(p->legacy);
  assert_string_equal(log.text, "");
  assert_int_equal(ctl->creates, creates);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  /* Plans that finalize but none runs in the benchmark: legacy too. */
  ctl->fail_finalize[10] = 0;
  set_source(&ctl->mode_a, 2, 10, 11);
  t.ms[10] = t.ms[11] = -1.0f;
  capture_start();
  p = choose(&k, 0, 1 << 30, &t);
  capture_end(&log);
  assert_true(p->legacy);
  assert_non_null(strstr(log.text, "2 plans, none ran"));
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

static void test_plan_bias(void **state) {
  (void)state;
  conv_case k = {0};
  k.x = fake(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8});
  k.w = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  k.b = fake(F16, CUDA, 1, (int64_t[]){6});
  plan_conv(&k, 1, 0, ONE, ONE, ONE, ZERO, 1);
  fake_timer t = {{0}, 0};
  /* The fused graph has an engine: the bias is part of the plan. */
  set_source(&ctl->fused_a, 1, 30);
  set_source(&ctl->mode_a, 1, 10);
  aotrun_fb_conv_gplan *p = choose(&k, 1, 1 << 30, &t);
  assert_true(p->fused_bias);
  assert_int_equal(p->engine, 30);
  assert_non_null(p->graph.add_op);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  /* It has none: the convolution alone, the bias kernel after it. */
  set_source(&ctl->fused_a, 0);
  p = choose(&k, 1, 1 << 30, &t);
  assert_false(p->fused_bias);
  assert_int_equal(p->engine, 10);
  assert_null(p->graph.add_op);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  free_case(&k);
  /* A windowed transposed plan never fuses (the zeros past dx's end get
   * the bias from the kernel after the window copy). */
  memset(&k, 0, sizeof k);
  k.x = fake(F32, CUDA, 4, (int64_t[]){1, 4, 5, 5});
  k.w = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3});
  k.b = fake(F32, CUDA, 1, (int64_t[]){3});
  plan_conv(&k, 1, 1, ONE, ONE, TWO, ONE, 1);
  assert_true(k.c.windowed);
  set_source(&ctl->fused_a, 1, 30);
  int mark = ctl->ndescs;
  p = choose(&k, 1, 1 << 30, &t);
  assert_false(p->fused_bias);
  assert_int_equal(count_of_type(mark, CUDNN_BACKEND_POINTWISE_DESCRIPTOR), 0);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

/* A 3x3 float16 convolution with a bias, planned on engine 30 with the
 * bias fused (the variant pack tests). */
static aotrun_fb_conv_gplan *fused_bias_plan(conv_case *k, fake_timer *t) {
  k->x = fake(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8});
  k->w = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  k->b = fake(F16, CUDA, 1, (int64_t[]){6});
  plan_conv(k, 1, 0, ONE, ONE, ONE, ZERO, 1);
  set_source(&ctl->fused_a, 1, 30);
  return choose(k, 1, 1 << 30, t);
}

static void test_execute_variant_pack(void **state) {
  (void)state;
  conv_case k = {0};
  fake_timer t = {{0}, 0};
  aotrun_fb_conv_gplan *p = fused_bias_plan(&k, &t);
  char x, w, y, b, ws;
  assert_int_equal(
      aotrun_fb_conv_graph_execute(api, handle, p, &x, &w, &y, &b, &ws),
      CUDNN_STATUS_SUCCESS);
  assert_int_equal(ctl->executes, 1);
  assert_int_equal(ctl->last_plan_engine, 30);
  assert_int_equal(ctl->last_count, 4);
  const int64_t uids[4] = {1, 2, 3, 4};
  assert_memory_equal(ctl->last_uids, uids, sizeof uids);
  assert_ptr_equal(ctl->last_ptrs[0], &x);
  assert_ptr_equal(ctl->last_ptrs[1], &w);
  assert_ptr_equal(ctl->last_ptrs[2], &y);
  assert_ptr_equal(ctl->last_ptrs[3], &b);
  assert_ptr_equal(ctl->last_workspace, &ws);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  /* Without a fused bias: three tensors, a NULL workspace allowed. */
  set_source(&ctl->fused_a, 0);
  set_source(&ctl->mode_a, 1, 10);
  p = choose(&k, 1, 1 << 30, &t);
  assert_int_equal(
      aotrun_fb_conv_graph_execute(api, handle, p, &x, &w, &y, NULL, NULL),
      CUDNN_STATUS_SUCCESS);
  assert_int_equal(ctl->last_count, 3);
  assert_memory_equal(ctl->last_uids, uids, 3 * sizeof uids[0]);
  assert_null(ctl->last_workspace);
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

/* The plan a call runs keeps its variant pack while the call's pointers
 * stay the same: a steady call builds no descriptor. */
static void test_execute_reuses_variant_pack(void **state) {
  (void)state;
  conv_case k = {0};
  fake_timer t = {{0}, 0};
  aotrun_fb_conv_gplan *p = fused_bias_plan(&k, &t);
  char x, w, y, y2, b, b2, ws, ws2;
  int mark = ctl->ndescs;
  for (int i = 0; i < 3; i++)
    assert_int_equal(aotrun_fb_conv_graph_execute_reusing(api, handle, p, &x,
                                                          &w, &y, &b, &ws),
                     CUDNN_STATUS_SUCCESS);
  assert_int_equal(ctl->executes, 3);
  assert_int_equal(count_of_type(mark, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR),
                   1);
  assert_ptr_equal(ctl->last_ptrs[2], &y);
  /* Each pointer that moves (output, bias, workspace) makes a new pack,
   * which replaces the old one. */
  void *const moved[3][3] = {{&y2, &b, &ws}, {&y2, &b2, &ws}, {&y2, &b2, &ws2}};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(aotrun_fb_conv_graph_execute_reusing(
                         api, handle, p, &x, &w, moved[i][0], moved[i][1],
                         moved[i][2]),
                     CUDNN_STATUS_SUCCESS);
    assert_int_equal(
        count_of_type(mark, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR), 2 + i);
    assert_ptr_equal(ctl->last_ptrs[2], &y2);
    assert_ptr_equal(ctl->last_ptrs[3], moved[i][1]);
    assert_ptr_equal(ctl->last_workspace, moved[i][2]);
  }
  int live = 0;
  for (int i = mark; i < ctl->ndescs; i++)
    live += ctl->descs[i]->type == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR &&
            !ctl->descs[i]->destroyed;
  assert_int_equal(live, 1);
  /* A plan being timed (not cached) builds its own pack each time and
   * leaves the plan's alone. */
  assert_int_equal(
      aotrun_fb_conv_graph_execute(api, handle, p, &x, &w, &y, &b, &ws),
      CUDNN_STATUS_SUCCESS);
  assert_ptr_equal(p->pack_ptrs[2], &y2);
  /* The plan's pack goes with the plan. */
  aotrun_fb_conv_gplan_unref(p);
  aotrun_fb_conv_gcache_clear();
  expect_no_leak();
  free_case(&k);
}

/* A handle's stream is set only when it changes, and again after a
 * failed set. */
static void test_stream_set_on_change(void **state) {
  (void)state;
  aotrun_fb_cudnn_handle h = {handle, NULL, 0};
  cudaStream_t s1 = (cudaStream_t)(uintptr_t)0x1000,
               s2 = (cudaStream_t)(uintptr_t)0x2000;
  cudaStream_t order[] = {s1, s1, s1, s2, s2, s1, NULL, NULL};
  const int calls_after[] = {1, 1, 1, 2, 2, 3, 4, 4};
  for (int i = 0; i < 8; i++) {
    assert_int_equal(aotrun_fb_cudnn_use_stream(api, &h, order[i]),
                     CUDNN_STATUS_SUCCESS);
    assert_int_equal(ctl->set_streams, calls_after[i]);
    assert_ptr_equal(ctl->last_stream, order[i] ? (void *)order[i] : NULL);
  }
  ctl->fail_set_stream = 1;
  assert_int_equal(aotrun_fb_cudnn_use_stream(api, &h, s1),
                   CUDNN_STATUS_BAD_PARAM);
  ctl->fail_set_stream = 0;
  assert_int_equal(aotrun_fb_cudnn_use_stream(api, &h, s1),
                   CUDNN_STATUS_SUCCESS);
  assert_int_equal(ctl->set_streams, 6); /* tried again after the failure */
  assert_int_equal(aotrun_fb_cudnn_use_stream(api, &h, s1),
                   CUDNN_STATUS_SUCCESS);
  assert_int_equal(ctl->set_streams, 6);
}

/* The problem's description for messages is written at its first use,
 * once. */
static void test_description_written_once(void **state) {
  (void)state;
  conv_case k = {0};
  k.x = fake(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8});
  k.w = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  plan_conv(&k, 0, 0, ONE, ONE, ONE, ZERO, 1);
  aotrun_fb_conv_what what = {&k.c, ""};
  const char *text = aotrun_fb_conv_what_text(&what);
  assert_ptr_equal(text, what.text);
  assert_string_equal(text,
                      "2d float16, input [2, 4, 8, 8], weight [6, 4, 3, 3], "
                      "output [2, 6, 8, 8], groups 1");
  /* Written once: a later change of the problem is not seen. */
  int64_t groups = k.c.groups;
  k.c.groups = 7;
  assert_string_equal(aotrun_fb_conv_what_text(&what), text);
  k.c.groups = groups;
  free_case(&k);
}

static void test_cache_bound_and_frees(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  set_source(&ctl->mode_a, 1, 10);
  const int64_t align[4] = {16, 16, 16, 0};
  aotrun_fb_conv_gkey key;
  aotrun_fb_conv_gkey_of(&k.c, align, &key);
  fake_timer t = {{0}, 0};
  aotrun_fb_conv_gplan *first = NULL;
  for (int i = 0; i < AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY + 3; i++) {
    key.base.in[0] = 1000 + i; /* another key, same problem */
    aotrun_fb_conv_choose ch = {api, handle, &k.c, &key, 1, 1 << 30,
                                time_by_engine, &t, "test problem"};
    aotrun_fb_conv_gplan *p = NULL;
    assert_int_equal(aotrun_fb_conv_graph_plan(&ch, &p), AOTI_TORCH_SUCCESS);
    if (i == 0)
      first = p; /* kept pinned across its eviction */
    else
      aotrun_fb_conv_gplan_unref(p);
  }
  assert_int_equal(aotrun_fb_conv_gcache_size(),
                   AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY);
  /* The 3 oldest were evicted: 2 freed, the pinned one still alive. Each
   * cached plan holds 3 tensors, the convolution, its operation, the
   * graph, the engine config and the plan. */
  const int per_plan = 8;
  assert_int_equal(ctl->creates - ctl->destroys,
                   per_plan * (AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY + 1));
  key.base.in[0] = 1000;
  aotrun_fb_conv_gplan *again = NULL;
  assert_false(aotrun_fb_conv_gcache_lookup(&key, &again));
  assert_int_equal(first->engine, 10);
  aotrun_fb_conv_gplan_unref(first);
  assert_int_equal(ctl->creates - ctl->destroys,
                   per_plan * AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY);
  key.base.in[0] = 1000 + AOTRUN_FB_CONV_GRAPH_CACHE_CAPACITY + 2;
  assert_true(aotrun_fb_conv_gcache_lookup(&key, &again));
  aotrun_fb_conv_gplan_unref(again);
  /* release_all's part: every descriptor destroyed. */
  aotrun_fb_conv_gcache_clear();
  assert_int_equal(aotrun_fb_conv_gcache_size(), 0);
  expect_no_leak();
  free_case(&k);
}

static void test_keys(void **state) {
  (void)state;
  conv_case k;
  simple_case(&k, F16);
  aotrun_fb_conv_gkey a, b;
  aotrun_fb_conv_gkey_of(&k.c, (const int64_t[]){16, 16, 16, 8}, &a);
  aotrun_fb_conv_gkey_of(&k.c, (const int64_t[]){16, 16, 16, 2}, &b);
  /* No bias: its alignment is not part of the key. */
  assert_memory_equal(&a, &b, sizeof a);
  aotrun_fb_conv_gkey_of(&k.c, (const int64_t[]){16, 8, 16, 0}, &b);
  assert_memory_not_equal(&a, &b, sizeof a);
  assert_int_equal(b.base.alignment, 8);
  free_case(&k);
}

int main(int argc, char **argv) {
  g_lib = argc > 1 ? argv[1] : getenv("AOTRUN_FAKE_CUDNN");
  if (g_lib == NULL) {
    fprintf(stderr, "usage: %s path/to/libfake_cudnn.so\n", argv[0]);
    return 2;
  }
  setenv("AOTRUN_CONV_LOG", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_loader_resolves_backend, each_setup),
      cmocka_unit_test_setup(test_graph_forward_grouped, each_setup),
      cmocka_unit_test_setup(test_graph_depthwise_channels_last, each_setup),
      cmocka_unit_test_setup(test_graph_transposed, each_setup),
      cmocka_unit_test_setup(test_graph_bias_fused, each_setup),
      cmocka_unit_test_setup(test_graph_float64, each_setup),
      cmocka_unit_test_setup(test_plan_benchmarks_fastest, each_setup),
      cmocka_unit_test_setup(test_plan_capture_then_benchmark, each_setup),
      cmocka_unit_test_setup(test_captured_plan_retired, each_setup),
      cmocka_unit_test_setup(test_plan_numerical_notes, each_setup),
      cmocka_unit_test_setup(test_plan_tf32_by_default, each_setup),
      cmocka_unit_test_setup(test_plan_workspace_limit_and_fallback_source,
                             each_setup),
      cmocka_unit_test_setup(test_plan_no_engine_falls_back_to_legacy,
                             each_setup),
      cmocka_unit_test_setup(test_plan_bias, each_setup),
      cmocka_unit_test_setup(test_execute_variant_pack, each_setup),
      cmocka_unit_test_setup(test_execute_reuses_variant_pack, each_setup),
      cmocka_unit_test_setup(test_stream_set_on_change, each_setup),
      cmocka_unit_test_setup(test_description_written_once, each_setup),
      cmocka_unit_test_setup(test_cache_bound_and_frees, each_setup),
      cmocka_unit_test_setup(test_keys, each_setup),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
