/*
 * graph_trace.c: an LD_PRELOAD library that prints, in order, the CUDA
 * graph calls a process makes (capture, nodes added, instantiate, node
 * parameters set, launches) with the pointers and sizes they carry, and
 * writes each graph as DOT when it is instantiated. A development tool for
 * issue 13: it tells what aotrun's device-I/O graphs hold and the order in
 * which their parameters change, so a plain-CUDA program can do the same
 * (testing/gpu/graph_copy_leaf.cu):
 *
 *   AOTRUN_GRAPH_TRACE_DIR=/tmp/t LD_PRELOAD=libgraph_trace.so \
 *     aotrun run PROGRAM --device-io --calls 6 ...
 *
 * Lines go to stderr, prefixed "graph_trace:", numbered. DOT files are
 * graph-N.dot in AOTRUN_GRAPH_TRACE_DIR (none written where it is unset).
 * Built by testing/gpu/build_gpu_bundle.sh; not linked into anything.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The plugin's libcudart is loaded RTLD_LOCAL: look it up by name too. */
static void *real(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p == NULL) {
    void *h = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) p = dlsym(h, name);
  }
  if (p == NULL) {
    fprintf(stderr, "graph_trace: %s not found in any loaded library\n",
            name);
    _exit(70); /* a tracing tool: better stop than call NULL */
  }
  return p;
}

static unsigned long g_seq;

#define LINE(...)                                   \
  do {                                              \
    fprintf(stderr, "graph_trace: %lu ", ++g_seq);  \
    fprintf(stderr, __VA_ARGS__);                   \
    fputc('\n', stderr);                            \
  } while (0)

/* fn: the real `name`, typed as its declaration in cuda_runtime_api.h. */
#define REAL(name)                         \
  static __typeof__(&name) fn = NULL;      \
  if (fn == NULL) fn = (__typeof__(&name))real(#name)

static const char *node_type(cudaGraphNode_t n) {
  enum cudaGraphNodeType t;
  if (cudaGraphNodeGetType(n, &t) != cudaSuccess) return "?";
  switch (t) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "child graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "wait event";
    case cudaGraphNodeTypeEventRecord: return "event record";
    case cudaGraphNodeTypeMemAlloc: return "mem alloc";
    case cudaGraphNodeTypeMemFree: return "mem free";
    default: return "other";
  }
}

/* The graph's node types counted, then its DOT file. */
static void describe(cudaGraph_t g) {
  static unsigned n_graph;
  size_t n = 0;
  if (cudaGraphGetNodes(g, NULL, &n) != cudaSuccess) return;
  cudaGraphNode_t *nodes = calloc(n + 1, sizeof *nodes);
  if (nodes == NULL || cudaGraphGetNodes(g, nodes, &n) != cudaSuccess) {
    free(nodes);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    size_t deps = 0, dependents = 0;
    (void)cudaGraphNodeGetDependencies(nodes[i], NULL, NULL, &deps);
    (void)cudaGraphNodeGetDependentNodes(nodes[i], NULL, NULL,
                                         &dependents);
    LINE("  node %zu %p %s, %zu deps, %zu dependents", i, (void *)nodes[i],
         node_type(nodes[i]), deps, dependents);
  }
  free(nodes);
  const char *dir = getenv("AOTRUN_GRAPH_TRACE_DIR");
  if (dir == NULL || dir[0] == '\0') return;
  char path[4096];
  snprintf(path, sizeof path, "%s/graph-%u.dot", dir, ++n_graph);
  cudaError_t e = cudaGraphDebugDotPrint(
      g, path, cudaGraphDebugDotFlagsVerbose);
  LINE("  dot %s: %s", path, cudaGetErrorName(e));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   enum cudaStreamCaptureMode mode) {
  REAL(cudaStreamBeginCapture);
  cudaError_t e = fn(s, mode);
  LINE("cudaStreamBeginCapture(stream %p, mode %d) = %d", (void *)s,
       (int)mode, (int)e);
  return e;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  REAL(cudaStreamEndCapture);
  cudaError_t e = fn(s, g);
  LINE("cudaStreamEndCapture(stream %p) = %d, graph %p", (void *)s, (int)e,
       (void *)*g);
  return e;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g,
                                 unsigned long long flags) {
  REAL(cudaGraphInstantiate);
  LINE("cudaGraphInstantiate(graph %p, flags %llu)", (void *)g, flags);
  describe(g);
  cudaError_t e = fn(x, g, flags);
  LINE("  = %d, exec %p", (int)e, (void *)*x);
  return e;
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t g,
                                     const cudaGraphNode_t *deps, size_t nd,
                                     void *dst, const void *src, size_t bytes,
                                     enum cudaMemcpyKind kind) {
  REAL(cudaGraphAddMemcpyNode1D);
  cudaError_t e = fn(node, g, deps, nd, dst, src, bytes, kind);
  LINE("cudaGraphAddMemcpyNode1D(graph %p, %zu deps, dst %p, src %p, %zu B, "
       "kind %d) = %d, node %p",
       (void *)g, nd, dst, src, bytes, (int)kind, (int)e, (void *)*node);
  return e;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t g,
                                   const cudaGraphNode_t *deps, size_t nd,
                                   const struct cudaKernelNodeParams *p) {
  REAL(cudaGraphAddKernelNode);
  cudaError_t e = fn(node, g, deps, nd, p);
  LINE("cudaGraphAddKernelNode(graph %p, %zu deps, func %p) = %d, node %p",
       (void *)g, nd, p->func, (int)e, (void *)*node);
  return e;
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *edges, size_t n) {
  REAL(cudaGraphAddDependencies);
  cudaError_t e = fn(g, from, to, edges, n);
  LINE("cudaGraphAddDependencies(graph %p, %zu: %p -> %p) = %d", (void *)g, n,
       n ? (void *)from[0] : NULL, n ? (void *)to[0] : NULL, (int)e);
  return e;
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t x,
                                               cudaGraphNode_t node, void *dst,
                                               const void *src, size_t bytes,
                                               enum cudaMemcpyKind kind) {
  REAL(cudaGraphExecMemcpyNodeSetParams1D);
  cudaError_t e = fn(x, node, dst, src, bytes, kind);
  LINE("cudaGraphExecMemcpyNodeSetParams1D(exec %p, node %p, dst %p, src %p, "
       "%zu B, kind %d) = %d",
       (void *)x, (void *)node, dst, src, bytes, (int)kind, (int)e);
  return e;
}

cudaError_t cudaGraphExecKernelNodeSetParams(
    cudaGraphExec_t x, cudaGraphNode_t node,
    const struct cudaKernelNodeParams *p) {
  REAL(cudaGraphExecKernelNodeSetParams);
  cudaError_t e = fn(x, node, p);
  LINE("cudaGraphExecKernelNodeSetParams(exec %p, node %p) = %d", (void *)x,
       (void *)node, (int)e);
  return e;
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t x, cudaGraphNode_t node,
                                    unsigned int on) {
  REAL(cudaGraphNodeSetEnabled);
  cudaError_t e = fn(x, node, on);
  LINE("cudaGraphNodeSetEnabled(exec %p, node %p, %u) = %d", (void *)x,
       (void *)node, on, (int)e);
  return e;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
  REAL(cudaGraphLaunch);
  cudaError_t e = fn(x, s);
  LINE("cudaGraphLaunch(exec %p, stream %p) = %d", (void *)x, (void *)s,
       (int)e);
  return e;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
  REAL(cudaMalloc);
  cudaError_t e = fn(p, bytes);
  LINE("cudaMalloc(%zu B) = %d, %p", bytes, (int)e, *p);
  return e;
}

cudaError_t cudaFree(void *p) {
  REAL(cudaFree);
  cudaError_t e = fn(p);
  LINE("cudaFree(%p) = %d", p, (int)e);
  return e;
}

cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s) {
  REAL(cudaMallocAsync);
  cudaError_t e = fn(p, bytes, s);
  LINE("cudaMallocAsync(%zu B, stream %p) = %d, %p", bytes, (void *)s, (int)e,
       *p);
  return e;
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s) {
  REAL(cudaFreeAsync);
  cudaError_t e = fn(p, s);
  LINE("cudaFreeAsync(%p, stream %p) = %d", p, (void *)s, (int)e);
  return e;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            enum cudaMemcpyKind kind, cudaStream_t s) {
  REAL(cudaMemcpyAsync);
  cudaError_t e = fn(dst, src, bytes, kind, s);
  LINE("cudaMemcpyAsync(dst %p, src %p, %zu B, kind %d, stream %p) = %d", dst,
       src, bytes, (int)kind, (void *)s, (int)e);
  return e;
}
