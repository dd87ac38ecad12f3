/* conv_graph_build.c: a planned convolution (conv.h) as a cuDNN backend
 * operation graph (see conv_graph.h). No CUDA runtime calls. */
#include <stdbool.h>
#include <string.h>

#include "shim_lib/fallback/conv_graph.h"

static cudnnDataType_t io_type_of(int32_t dtype) {
  switch (dtype) {
    case AOTRUN_FB_FLOAT16: return CUDNN_DATA_HALF;
    case AOTRUN_FB_BFLOAT16: return CUDNN_DATA_BFLOAT16;
    case AOTRUN_FB_FLOAT64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

void aotrun_fb_conv_graph_spec_of(const aotrun_fb_conv *c, int fuse_bias,
                                  const int64_t align[4],
                                  aotrun_fb_conv_graph_spec *s) {
  memset(s, 0, sizeof *s);
  int rd = c->rd, sd = c->rd - 2;
  s->transposed = c->transposed;
  s->rd = rd;
  s->fuse_bias = fuse_bias;
  s->io_type = io_type_of(c->dtype);
  /* Accumulate in float for the 16-bit types and float32 (TF32 is a
   * matter of the engine, filtered in conv_graph_plan.c), double for
   * float64: the legacy path's compute types. */
  s->comp_type =
      c->dtype == AOTRUN_FB_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  /* The operands as conv_run.c hands them over: dense in the plan's
   * memory format (non-dense ones were copied). The weight keeps PyTorch's
   * [K, C / groups, ...] (transposed: [C_in, C_out / groups, ...]), which
   * is how the backend API expresses groups: the group count is the
   * input's channels over the weight's dim 1. */
  memcpy(s->x_dims, c->in_sizes, sizeof s->x_dims);
  aotrun_fb_format_strides(c->in_sizes, rd, c->channels_last, s->x_strides);
  memcpy(s->w_dims, c->w_sizes, sizeof s->w_dims);
  aotrun_fb_format_strides(c->w_sizes, rd, c->channels_last, s->w_strides);
  /* cuDNN's output: dx for a windowed transposed plan (conv_transposed.c
   * keeps its geometry), the result itself otherwise. */
  memcpy(s->y_dims, c->dx_sizes, sizeof s->y_dims);
  memcpy(s->y_strides, c->dx_strides, sizeof s->y_strides);
  for (int d = 0; d < rd; d++) s->b_dims[d] = 1;
  s->b_dims[1] = c->out_sizes[1];
  aotrun_fb_format_strides(s->b_dims, rd, c->channels_last, s->b_strides);
  s->x_align = align[0];
  s->w_align = align[1];
  s->y_align = align[2];
  s->b_align = align[3];
  for (int i = 0; i < sd; i++) {
    /* PyTorch pads symmetrically; dx_pad is the windowed plan's 0. */
    s->pre_pad[i] = c->dx_pad[i];
    s->post_pad[i] = c->dx_pad[i];
    s->stride[i] = c->stride[i];
    s->dil[i] = c->dil[i];
  }
}

/* One failing step ends the build: the status and its name are kept. */
typedef struct builder {
  const aotrun_fb_cudnn_api *api;
  cudnnStatus_t st;
  const char *step;
} builder;

static int ok(builder *b, cudnnStatus_t st, const char *step) {
  if (b->st != CUDNN_STATUS_SUCCESS) return 0;
  if (st != CUDNN_STATUS_SUCCESS) {
    b->st = st;
    b->step = step;
    return 0;
  }
  return 1;
}

static void set(builder *b, cudnnBackendDescriptor_t d,
                cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count,
                const void *values, const char *step) {
  if (b->st != CUDNN_STATUS_SUCCESS) return;
  ok(b, b->api->cudnnBackendSetAttribute(d, name, type, count, values), step);
}

static cudnnBackendDescriptor_t create(builder *b,
                                       cudnnBackendDescriptorType_t type,
                                       const char *step) {
  cudnnBackendDescriptor_t d = NULL;
  if (b->st != CUDNN_STATUS_SUCCESS) return NULL;
  if (!ok(b, b->api->cudnnBackendCreateDescriptor(type, &d), step))
    return NULL;
  return d;
}

static void finalize(builder *b, cudnnBackendDescriptor_t d,
                     const char *step) {
  if (b->st != CUDNN_STATUS_SUCCESS) return;
  ok(b, b->api->cudnnBackendFinalize(d), step);
}

static cudnnBackendDescriptor_t tensor(builder *b, int64_t uid, int rd,
                                       const int64_t *dims,
                                       const int64_t *strides,
                                       cudnnDataType_t type, int64_t align,
                                       bool is_virtual, const char *step) {
  cudnnBackendDescriptor_t t =
      create(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, step);
  set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type,
      step);
  set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rd, dims, step);
  set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rd, strides, step);
  set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, step);
  set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align,
      step);
  /* Only the fused graph's intermediate is virtual (never in memory). */
  if (is_virtual)
    set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
        &is_virtual, step);
  finalize(b, t, step);
  return t;
}

static cudnnBackendDescriptor_t convolution(builder *b,
                                            const aotrun_fb_conv_graph_spec *s) {
  const char *step = "the convolution descriptor";
  int64_t sd = s->rd - 2;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION; /* PyTorch's */
  cudnnBackendDescriptor_t d =
      create(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &sd,
      step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
      &s->comp_type, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
      &mode, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, sd,
      s->pre_pad, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, sd,
      s->post_pad, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, sd,
      s->stride, step);
  set(b, d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, sd, s->dil,
      step);
  finalize(b, d, step);
  return d;
}

/* y = 1 * conv(x, w) + 0 * y (forward), or dx = 1 * conv_bwd_data(dy, w)
 * (transposed: our input is dy, cuDNN's output dx). The scaling factors
 * have the compute type's width. */
static cudnnBackendDescriptor_t conv_operation(builder *b,
                                               const aotrun_fb_conv_graph_spec *s,
                                               const aotrun_fb_conv_graph *g,
                                               cudnnBackendDescriptor_t out) {
  const char *step = s->transposed ? "the backward-data operation"
                                   : "the forward operation";
  cudnnBackendDescriptor_t op = create(
      b,
      s->transposed ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                    : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
      step);
  double one_d = 1.0, zero_d = 0.0;
  float one_f = 1.0f, zero_f = 0.0f;
  int dbl = s->comp_type == CUDNN_DATA_DOUBLE;
  cudnnBackendAttributeType_t st = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void *one = dbl ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = dbl ? (const void *)&zero_d : (const void *)&zero_f;
  cudnnBackendAttributeType_t bd = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  if (!s->transposed) {
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, bd, 1, &g->x, step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, bd, 1, &g->w, step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, bd, 1, &out, step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, bd, 1,
        &g->conv, step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, st, 1, one,
        step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, st, 1, zero,
        step);
  } else {
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, bd, 1, &g->x,
        step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, bd, 1, &g->w,
        step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, bd, 1, &out,
        step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, bd, 1,
        &g->conv, step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, st, 1, one,
        step);
    set(b, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, st, 1, zero,
        step);
  }
  finalize(b, op, step);
  return op;
}

/* y = acc + bias (broadcast over N and the spatial dims), in the compute
 * type: one rounding to the output type. */
static void bias_add(builder *b, const aotrun_fb_conv_graph_spec *s,
                     aotrun_fb_conv_graph *g) {
  const char *step = "the bias addition";
  cudnnPointwiseMode_t mode = CUDNN_POINTWISE_ADD;
  g->add = create(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, step);
  set(b, g->add, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1,
      &mode, step);
  set(b, g->add, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1,
      &s->comp_type, step);
  finalize(b, g->add, step);
  g->add_op = create(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, step);
  cudnnBackendAttributeType_t bd = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  set(b, g->add_op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, bd, 1,
      &g->add, step);
  set(b, g->add_op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, bd, 1, &g->acc,
      step);
  set(b, g->add_op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, bd, 1, &g->b, step);
  set(b, g->add_op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, bd, 1, &g->y, step);
  finalize(b, g->add_op, step);
}

cudnnStatus_t aotrun_fb_conv_graph_build(const aotrun_fb_cudnn_api *api,
                                         cudnnHandle_t handle,
                                         const aotrun_fb_conv_graph_spec *s,
                                         aotrun_fb_conv_graph *g,
                                         const char **step) {
  memset(g, 0, sizeof *g);
  g->api = api;
  builder b = {api, CUDNN_STATUS_SUCCESS, NULL};
  g->x = tensor(&b, AOTRUN_FB_CONV_UID_X, s->rd, s->x_dims, s->x_strides,
                s->io_type, s->x_align, false,
                s->transposed ? "the input (dy) tensor" : "the input tensor");
  g->w = tensor(&b, AOTRUN_FB_CONV_UID_W, s->rd, s->w_dims, s->w_strides,
                s->io_type, s->w_align, false, "the weight tensor");
  g->y = tensor(&b, AOTRUN_FB_CONV_UID_Y, s->rd, s->y_dims, s->y_strides,
                s->io_type, s->y_align, false,
                s->transposed ? "the output (dx) tensor" : "the output tensor");
  if (s->fuse_bias) {
    g->b = tensor(&b, AOTRUN_FB_CONV_UID_B, s->rd, s->b_dims, s->b_strides,
                  s->io_type, s->b_align, false, "the bias tensor");
    g->acc = tensor(&b, AOTRUN_FB_CONV_UID_ACC, s->rd, s->y_dims,
                    s->y_strides, s->comp_type, s->y_align, true,
                    "the virtual convolution result");
  }
  g->conv = convolution(&b, s);
  g->conv_op = conv_operation(&b, s, g, s->fuse_bias ? g->acc : g->y);
  if (s->fuse_bias) bias_add(&b, s, g);
  const char *gstep = "the operation graph";
  g->graph = create(&b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, gstep);
  cudnnBackendDescriptor_t ops[2] = {g->conv_op, g->add_op};
  set(&b, g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, s->fuse_bias ? 2 : 1, ops, gstep);
  set(&b, g->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
      &handle, gstep);
  finalize(&b, g->graph, gstep);
  if (b.st != CUDNN_STATUS_SUCCESS) {
    aotrun_fb_conv_graph_destroy(g);
    *step = b.step;
  }
  return b.st;
}

void aotrun_fb_conv_graph_destroy(aotrun_fb_conv_graph *g) {
  if (g->api == NULL) return;
  /* Users before what they use. */
  cudnnBackendDescriptor_t all[10] = {g->graph, g->add_op, g->conv_op,
                                      g->add,   g->conv,   g->acc,
                                      g->b,     g->y,      g->w,
                                      g->x};
  for (int i = 0; i < 10; i++)
    if (all[i] != NULL) g->api->cudnnBackendDestroyDescriptor(all[i]);
  memset(g, 0, sizeof *g);
}
