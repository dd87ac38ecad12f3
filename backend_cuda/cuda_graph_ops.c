/* cuda_graph_ops.c: see cuda_graph_ops.h. */
#include "backend_cuda/cuda_graph_ops.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "aot_loader/dl_dtype.h"
#include "aot_loader/fault_point.h"
#include "backend_cuda/cuda_device_ops.h"
#include "backend_cuda/graph_copy_kernel.h"
#include "backend_cuda/graph_pool.h"

#define C(ctx) ((aotrun_cuda_graph_ctx *)(ctx))

static aotrun_status cuda_failed(aotrun_error *err, const char *what,
                                 cudaError_t e) {
  return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED, "%s failed: %s (%s)",
                          what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static aotrun_status run_direct(void *ctx, const DLTensor *in, size_t ni,
                                DLTensor *out, size_t no, aotrun_error *err) {
  /* aotrun_cuda_method_execute checked the inputs already. */
  return aotrun_method_runner_run_checked_call(C(ctx)->runner, in, ni, out,
                                               no, C(ctx)->stream,
                                               C(ctx)->call, err);
}

static aotrun_status run_capture(void *ctx, const DLTensor *in, size_t ni,
                                 AtenTensorHandle *out, size_t no,
                                 aotrun_error *err) {
  return aotrun_method_runner_run_handles(C(ctx)->runner, in, ni, out, no,
                                          C(ctx)->stream, err);
}

/* The fault points below (fault_point.h) make a step fail as CUDA would,
 * leaving the stream as the real failure does (a capture that ended). */
static aotrun_status begin_capture(void *ctx, aotrun_error *err) {
  cudaError_t e = aotrun_fault_point("cuda_graph.begin_capture")
                      ? cudaErrorStreamCaptureUnsupported
                      : cudaStreamBeginCapture((cudaStream_t)C(ctx)->stream,
                                               cudaStreamCaptureModeRelaxed);
  return e == cudaSuccess ? AOTRUN_OK
                          : cuda_failed(err, "cudaStreamBeginCapture", e);
}

static aotrun_status end_capture(void *ctx, void **graph, aotrun_error *err) {
  cudaGraph_t g = NULL;
  cudaError_t e = cudaStreamEndCapture((cudaStream_t)C(ctx)->stream, &g);
  if (e == cudaSuccess && aotrun_fault_point("cuda_graph.end_capture")) {
    if (g != NULL) (void)cudaGraphDestroy(g);
    g = NULL;
    e = cudaErrorStreamCaptureInvalidated;
  }
  *graph = g;
  return e == cudaSuccess ? AOTRUN_OK
                          : cuda_failed(err, "cudaStreamEndCapture", e);
}

static int is_capturing(void *ctx) {
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing((cudaStream_t)C(ctx)->stream, &status) !=
      cudaSuccess)
    return 0;
  return status != cudaStreamCaptureStatusNone;
}

static aotrun_status instantiate(void *ctx, void *graph, void **exec,
                                 aotrun_error *err) {
  (void)ctx;
  cudaGraphExec_t x = NULL;
  cudaError_t e = aotrun_fault_point("cuda_graph.instantiate")
                      ? cudaErrorMemoryAllocation
                      : cudaGraphInstantiate(&x, (cudaGraph_t)graph, 0);
  *exec = e == cudaSuccess ? x : NULL;
  return e == cudaSuccess ? AOTRUN_OK
                          : cuda_failed(err, "cudaGraphInstantiate", e);
}

static aotrun_status launch(void *ctx, void *exec, aotrun_error *err) {
  cudaError_t e =
      aotrun_fault_point("cuda_graph.launch")
          ? cudaErrorLaunchFailure
          : cudaGraphLaunch((cudaGraphExec_t)exec,
                            (cudaStream_t)C(ctx)->stream);
  return e == cudaSuccess ? AOTRUN_OK : cuda_failed(err, "cudaGraphLaunch", e);
}

static aotrun_status synchronize(void *ctx, aotrun_error *err) {
  return aotrun_cuda_synchronize(C(ctx)->stream, err);
}

static void destroy_graph(void *ctx, void *graph) {
  (void)ctx;
  if (graph != NULL) (void)cudaGraphDestroy((cudaGraph_t)graph);
}

static void destroy_exec(void *ctx, void *exec) {
  (void)ctx;
  if (exec != NULL) (void)cudaGraphExecDestroy((cudaGraphExec_t)exec);
}

static void clear_error(void *ctx) {
  (void)ctx;
  (void)cudaGetLastError();
}

static aotrun_status static_alloc(void *ctx, size_t bytes, void **ptr,
                                  aotrun_error *err) {
  (void)ctx;
  cudaError_t e = aotrun_fault_point("cuda_graph.static_alloc")
                      ? cudaErrorMemoryAllocation
                      : cudaMalloc(ptr, bytes);
  if (e != cudaSuccess) {
    *ptr = NULL;
    return cuda_failed(err, "cudaMalloc", e);
  }
  return AOTRUN_OK;
}

static void static_free(void *ctx, void *ptr) {
  (void)ctx;
  if (ptr != NULL) (void)cudaFree(ptr);
}

static aotrun_status copy_inputs(void *ctx, const DLTensor *in,
                                 const DLTensor *st, size_t n,
                                 aotrun_error *err) {
  for (size_t i = 0; i < n; i++) {
    int host = in[i].device.device_type == kDLCPU ||
               in[i].device.device_type == kDLCUDAHost;
    const char *src = (const char *)in[i].data + in[i].byte_offset;
    aotrun_status s = aotrun_cuda_copy(
        st[i].data, src, aotrun_dl_nbytes(&in[i]),
        host ? AOTRUN_COPY_HOST_TO_DEVICE : AOTRUN_COPY_DEVICE_TO_DEVICE,
        C(ctx)->stream, err);
    if (s != AOTRUN_OK) return aotrun_error_prefix(err, "input %zu: ", i);
  }
  return AOTRUN_OK;
}

static aotrun_status copy_outputs(void *ctx, AtenTensorHandle *src,
                                  DLTensor *out, size_t n,
                                  aotrun_error *err) {
  return aotrun_method_runner_copy_outputs_call(C(ctx)->runner, src, out, n,
                                                C(ctx)->stream, C(ctx)->call,
                                                err);
}

static void delete_outputs(void *ctx, AtenTensorHandle *h, size_t n) {
  (void)ctx;
  aotrun_method_runner_delete_handles(h, n);
}

/* ---- the per-graph pool over cudaMalloc ---- */

static void *raw_alloc(void *ctx, size_t bytes) {
  (void)ctx;
  void *p = NULL;
  if (aotrun_fault_point("cuda_graph.pool_chunk") ||
      cudaMalloc(&p, bytes) != cudaSuccess)
    return NULL;
  return p;
}

static void raw_free(void *ctx, void *ptr) {
  (void)ctx;
  (void)cudaFree(ptr);
}

static aotrun_status pool_create(void *ctx, size_t reserve, void **pool,
                                 aotrun_error *err) {
  (void)ctx;
  static const aotrun_pool_raw_ops kRaw = {NULL, raw_alloc, raw_free};
  aotrun_graph_pool *p = NULL;
  aotrun_status st = aotrun_graph_pool_create(&kRaw, &p, err);
  /* Its memory before the capture begins (graph_pool.h). */
  if (st == AOTRUN_OK)
    st = aotrun_graph_pool_reserve(
        p, reserve > AOTRUN_GRAPH_POOL_CHUNK ? reserve : AOTRUN_GRAPH_POOL_CHUNK,
        err);
  if (st != AOTRUN_OK) {
    aotrun_graph_pool_destroy(p);
    p = NULL;
  }
  *pool = p;
  return st;
}

static void pool_install(void *ctx, void *pool) {
  (void)ctx;
  if (pool == NULL) {
    aotrun_shim_set_thread_allocator(NULL);
    return;
  }
  aotrun_shim_allocator a = aotrun_graph_pool_allocator(pool);
  aotrun_shim_set_thread_allocator(&a);
}

static void pool_destroy(void *ctx, void *pool) {
  /* Replays may still be running on the stream. */
  (void)cudaStreamSynchronize((cudaStream_t)C(ctx)->stream);
  aotrun_graph_pool_destroy(pool);
}

static size_t pool_bytes(void *ctx, void *pool) {
  (void)ctx;
  return aotrun_graph_pool_reserved(pool);
}

/* ---- input copies as nodes of the graph (graph_input_nodes.h) ---- */

static const void *source_of(const DLTensor *t) {
  return (const char *)t->data + t->byte_offset;
}

/* One device-to-device copy node after deps: a kernel node where option
 * cuda_graph_copy_kernels is on (graph_copy_kernel.h), else a memcpy
 * node. Names the call that failed in err. */
static aotrun_status add_copy_node(const aotrun_cuda_graph_ctx *c,
                                   cudaGraph_t g, const cudaGraphNode_t *deps,
                                   size_t num_deps, void *dst,
                                   const void *src, size_t bytes,
                                   cudaGraphNode_t *node, aotrun_error *err) {
  cudaError_t e;
  if (c->copy_kernels) {
    aotrun_copy_kernel_args a;
    struct cudaKernelNodeParams p;
    aotrun_graph_copy_kernel_params(&a, dst, src, bytes, &p);
    e = cudaGraphAddKernelNode(node, g, deps, num_deps, &p);
    if (e != cudaSuccess) return cuda_failed(err, "cudaGraphAddKernelNode", e);
    return AOTRUN_OK;
  }
  e = cudaGraphAddMemcpyNode1D(node, g, deps, num_deps, dst, src, bytes,
                               cudaMemcpyDeviceToDevice);
  if (e != cudaSuccess) return cuda_failed(err, "cudaGraphAddMemcpyNode1D", e);
  return AOTRUN_OK;
}

/* Each node is added first, then made a dependency of the roots that the
 * captured graph had (read before any node is added). */
static aotrun_status add_input_nodes(void *ctx, void *graph,
                                     const DLTensor *in, const DLTensor *st,
                                     size_t n, void **nodes,
                                     aotrun_error *err) {
  if (aotrun_fault_point("cuda_graph.add_input_nodes"))
    return cuda_failed(err, "cudaGraphAddMemcpyNode1D",
                       cudaErrorMemoryAllocation);
  cudaGraph_t g = (cudaGraph_t)graph;
  size_t num_roots = 0;
  cudaError_t e = cudaGraphGetRootNodes(g, NULL, &num_roots);
  if (e != cudaSuccess) return cuda_failed(err, "cudaGraphGetRootNodes", e);
  cudaGraphNode_t *roots = calloc(num_roots + 1, sizeof *roots);
  if (roots == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory for %zu graph root nodes",
                            num_roots);
  e = cudaGraphGetRootNodes(g, roots, &num_roots);
  aotrun_status status = AOTRUN_OK;
  if (e != cudaSuccess)
    status = cuda_failed(err, "cudaGraphGetRootNodes", e);
  for (size_t i = 0; i < n && status == AOTRUN_OK; i++) {
    cudaGraphNode_t node = NULL;
    status = add_copy_node(C(ctx), g, NULL, 0, st[i].data, source_of(&in[i]),
                           aotrun_dl_nbytes(&in[i]), &node, err);
    if (status != AOTRUN_OK) break;
    nodes[i] = node;
    for (size_t r = 0; r < num_roots && e == cudaSuccess; r++)
      e = cudaGraphAddDependencies(g, &node, &roots[r], NULL, 1);
    if (e != cudaSuccess)
      status = cuda_failed(err, "cudaGraphAddDependencies", e);
  }
  free(roots);
  return status;
}

/* Re-points a copy node of exec (device to device), a kernel node or a
 * memcpy node whichever it was made (the option may have changed since:
 * its kind is read, only when a pointer changed); `fault` names its fault
 * point. */
static aotrun_status point_node(void *exec, void *node, void *dst,
                                const void *src, size_t bytes,
                                const char *fault, aotrun_error *err) {
  enum cudaGraphNodeType type = cudaGraphNodeTypeMemcpy;
  cudaError_t e = aotrun_fault_point(fault)
                      ? cudaErrorInvalidValue
                      : cudaGraphNodeGetType((cudaGraphNode_t)node, &type);
  const char *what = "cudaGraphExecMemcpyNodeSetParams1D";
  if (e == cudaSuccess && type == cudaGraphNodeTypeKernel) {
    aotrun_copy_kernel_args a;
    struct cudaKernelNodeParams p;
    aotrun_graph_copy_kernel_params(&a, dst, src, bytes, &p);
    what = "cudaGraphExecKernelNodeSetParams";
    e = cudaGraphExecKernelNodeSetParams((cudaGraphExec_t)exec,
                                         (cudaGraphNode_t)node, &p);
  } else if (e == cudaSuccess) {
    e = cudaGraphExecMemcpyNodeSetParams1D((cudaGraphExec_t)exec,
                                           (cudaGraphNode_t)node, dst, src,
                                           bytes, cudaMemcpyDeviceToDevice);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* a refused pointer is not the stream's */
    return cuda_failed(err, what, e);
  }
  return AOTRUN_OK;
}

static aotrun_status point_input_node(void *ctx, void *exec, void *node,
                                      const DLTensor *in, const DLTensor *st,
                                      aotrun_error *err) {
  (void)ctx;
  return point_node(exec, node, st->data, source_of(in), aotrun_dl_nbytes(in),
                    "cuda_graph.point_input_node", err);
}

/* cudaGraphNodeSetEnabled on a copy node; `fault` names its fault point. */
static aotrun_status enable_node(void *exec, void *node, int on,
                                 const char *fault, aotrun_error *err) {
  cudaError_t e = aotrun_fault_point(fault)
                      ? cudaErrorInvalidValue
                      : cudaGraphNodeSetEnabled((cudaGraphExec_t)exec,
                                                (cudaGraphNode_t)node,
                                                on ? 1u : 0u);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return cuda_failed(err, "cudaGraphNodeSetEnabled", e);
  }
  return AOTRUN_OK;
}

static aotrun_status enable_input_node(void *ctx, void *exec, void *node,
                                       int on, aotrun_error *err) {
  (void)ctx;
  return enable_node(exec, node, on, "cuda_graph.enable_input_node", err);
}

/* ---- output copies as nodes of the graph (graph_output_nodes.h) ---- */

static aotrun_status plan_outputs(void *ctx, AtenTensorHandle *src,
                                  DLTensor *out, size_t n,
                                  aotrun_output_copy *plan,
                                  aotrun_error *err) {
  return aotrun_method_runner_plan_output_copies(C(ctx)->runner, src, out, n,
                                                 C(ctx)->call, plan, err);
}

static aotrun_status finish_outputs(void *ctx, aotrun_error *err) {
  return aotrun_method_runner_finish_call(C(ctx)->runner, C(ctx)->stream,
                                          C(ctx)->call, err);
}

/* The graph's leaves (nodes nothing depends on), malloc'ed into *leaves. */
static aotrun_status graph_leaves(cudaGraph_t g, cudaGraphNode_t **leaves,
                                  size_t *num_leaves, aotrun_error *err) {
  *leaves = NULL;
  *num_leaves = 0;
  size_t n = 0;
  cudaError_t e = cudaGraphGetNodes(g, NULL, &n);
  if (e != cudaSuccess) return cuda_failed(err, "cudaGraphGetNodes", e);
  cudaGraphNode_t *nodes = calloc(n + 1, sizeof *nodes);
  if (nodes == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory for %zu graph nodes", n);
  e = cudaGraphGetNodes(g, nodes, &n);
  size_t kept = 0;
  for (size_t i = 0; i < n && e == cudaSuccess; i++) {
    size_t dependents = 0;
    e = cudaGraphNodeGetDependentNodes(nodes[i], NULL, NULL, &dependents);
    if (e == cudaSuccess && dependents == 0) nodes[kept++] = nodes[i];
  }
  if (e != cudaSuccess) {
    free(nodes);
    return cuda_failed(err, "cudaGraphGetNodes/GetDependentNodes", e);
  }
  *leaves = nodes;
  *num_leaves = kept;
  return AOTRUN_OK;
}

/* Each node is added after every leaf the captured graph had (read before
 * any node is added). */
static aotrun_status add_output_nodes(void *ctx, void *graph,
                                      const aotrun_output_copy *plan,
                                      size_t n, void **nodes,
                                      aotrun_error *err) {
  if (aotrun_fault_point("cuda_graph.add_output_nodes"))
    return cuda_failed(err, "cudaGraphAddMemcpyNode1D",
                       cudaErrorMemoryAllocation);
  cudaGraph_t g = (cudaGraph_t)graph;
  cudaGraphNode_t *leaves = NULL;
  size_t num_leaves = 0;
  aotrun_status status = graph_leaves(g, &leaves, &num_leaves, err);
  for (size_t i = 0; i < n && status == AOTRUN_OK; i++) {
    cudaGraphNode_t node = NULL;
    status = add_copy_node(C(ctx), g, leaves, num_leaves, plan[i].dst,
                           plan[i].src, plan[i].bytes, &node, err);
    if (status != AOTRUN_OK) break;
    nodes[i] = node;
  }
  free(leaves);
  return status;
}

static aotrun_status point_output_node(void *ctx, void *exec, void *node,
                                       const aotrun_output_copy *copy,
                                       aotrun_error *err) {
  (void)ctx;
  return point_node(exec, node, copy->dst, copy->src, copy->bytes,
                    "cuda_graph.point_output_node", err);
}

static aotrun_status enable_output_node(void *ctx, void *exec, void *node,
                                        int on, aotrun_error *err) {
  (void)ctx;
  return enable_node(exec, node, on, "cuda_graph.enable_output_node", err);
}

/* ---- the done counter's node (cuda_done_flag.h) ---- */

static aotrun_status add_done_node(void *ctx, void *graph, int *added,
                                   aotrun_error *err) {
  *added = 0;
  if (!C(ctx)->done_flag) return AOTRUN_OK;
  if (aotrun_fault_point("cuda_graph.add_done_node"))
    return cuda_failed(err, "cudaGraphAddKernelNode",
                       cudaErrorMemoryAllocation);
  cudaGraphNode_t *leaves = NULL;
  size_t num_leaves = 0;
  aotrun_status st =
      graph_leaves((cudaGraph_t)graph, &leaves, &num_leaves, err);
  if (st == AOTRUN_OK)
    st = aotrun_cuda_done_flag_add_node(&C(ctx)->done, graph,
                                        (void *const *)leaves, num_leaves,
                                        added, err);
  free(leaves);
  return st;
}

static void done_launched(void *ctx, int awaitable) {
  aotrun_cuda_done_flag_launched(&C(ctx)->done, awaitable);
}

static void log_message(void *ctx, int32_t level, const char *message) {
  if (C(ctx)->log != NULL) C(ctx)->log(C(ctx)->log_ctx, level, message);
}

aotrun_graph_ops aotrun_cuda_graph_ops(aotrun_cuda_graph_ctx *ctx) {
  aotrun_graph_ops ops = {
      .ctx = ctx,
      .run_direct = run_direct,
      .run_capture = run_capture,
      .begin_capture = begin_capture,
      .end_capture = end_capture,
      .is_capturing = is_capturing,
      .instantiate = instantiate,
      .launch = launch,
      .synchronize = synchronize,
      .destroy_graph = destroy_graph,
      .destroy_exec = destroy_exec,
      .clear_error = clear_error,
      .static_alloc = static_alloc,
      .static_free = static_free,
      .copy_inputs = copy_inputs,
      .copy_outputs = copy_outputs,
      .delete_outputs = delete_outputs,
      .pool_create = pool_create,
      .pool_install = pool_install,
      .pool_destroy = pool_destroy,
      .pool_bytes = pool_bytes,
      .log = log_message,
      .add_input_nodes = add_input_nodes,
      .point_input_node = point_input_node,
      .enable_input_node = enable_input_node,
      .plan_outputs = plan_outputs,
      .finish_outputs = finish_outputs,
      .add_output_nodes = add_output_nodes,
      .point_output_node = point_output_node,
      .enable_output_node = enable_output_node,
      .add_done_node = add_done_node,
      .done_launched = done_launched,
  };
  return ops;
}
