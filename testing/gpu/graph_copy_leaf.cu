// graph_copy_leaf.cu: a plain-CUDA reproduction of the graphs aotrun replays
// with device I/O (issue 13's open sanitizer item, docs/reliability.md): a
// kernel recorded by stream capture (relaxed mode), then, added to the
// captured graph, a device-to-device memcpy node after every leaf (the
// output node), optionally a memcpy node before the kernel (the input
// node) and a one-thread kernel after the copy (the done counter's node);
// instantiate, launch and synchronise, replay, re-point the output node
// at a second buffer (cudaGraphExecMemcpyNodeSetParams1D) and replay
// again, checking every value. No aotrun code: if compute-sanitizer's
// racecheck or synccheck dies on this too, the fault is the tool's.
//
// --realloc does what `aotrun run --device-io` does between calls: before
// each replay the caller's input and output buffers are freed and
// allocated again (cudaFree, cudaMalloc: often at the same address), and
// the copy nodes are re-pointed only where an address changed, as aotrun
// re-points them (--repoint-always: every replay). --pool takes the
// graph's own buffers (the static input, the kernel's output) from the
// stream-ordered pool (cudaMallocAsync), as aotrun's allocator does,
// instead of cudaMalloc. --alloc-in-capture allocates the kernel's output
// with cudaMalloc after the capture began (relaxed mode allows it), as
// aotrun's graph pool took its first chunk until 2026-12-08: the one
// difference the graph trace of a crashing aotrun run showed
// (testing/gpu/profile/graph_trace.c).
//
//   graph_copy_leaf [--input-node] [--kernel-leaf] [--realloc]
//                   [--repoint-always] [--pool] [--alloc-in-capture]
//                   [--replays N] [--n FLOATS]
//
// Prints one line per step; exit 0 when every value is right, 1 on a wrong
// value or bad arguments, 2 when CUDA fails (no device: the message says).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>

namespace {

__global__ void add_one(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

__global__ void bump(unsigned *count) { *count += 1u; }

struct Opts {
  bool input_node = false, kernel_leaf = false, realloc = false,
       repoint_always = false, pool = false, alloc_in_capture = false;
  int replays = 3, n = 1024;
};

int fail_cuda(const char *what, cudaError_t e) {
  std::printf("error: %s failed: %s\n", what, cudaGetErrorString(e));
  return 2;
}

#define TRY(call)                                   \
  do {                                              \
    cudaError_t e_ = (call);                        \
    if (e_ != cudaSuccess) return fail_cuda(#call, e_); \
  } while (0)

int parse(int argc, char **argv, Opts *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!std::strcmp(a, "--input-node")) {
      o->input_node = true;
    } else if (!std::strcmp(a, "--kernel-leaf")) {
      o->kernel_leaf = true;
    } else if (!std::strcmp(a, "--realloc")) {
      o->realloc = true;
    } else if (!std::strcmp(a, "--repoint-always")) {
      o->repoint_always = true;
    } else if (!std::strcmp(a, "--alloc-in-capture")) {
      o->alloc_in_capture = true;
    } else if (!std::strcmp(a, "--pool")) {
      o->pool = true;
    } else if ((!std::strcmp(a, "--replays") || !std::strcmp(a, "--n")) &&
               i + 1 < argc) {
      char *end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > (1 << 24)) {
        std::printf("error: %s needs an integer in [1, 16777216], got '%s'\n",
                    a, argv[i]);
        return 1;
      }
      (a[2] == 'r' ? o->replays : o->n) = (int)v;
    } else if (!std::strcmp(a, "--help")) {
      std::printf("usage: graph_copy_leaf [--input-node] [--kernel-leaf] "
                  "[--realloc] [--repoint-always] [--pool] [--alloc-in-capture] "
                  "[--replays N] "
                  "[--n FLOATS]\n");
      std::exit(0);
    } else {
      std::printf("error: unknown option '%s'\n", a);
      return 1;
    }
  }
  return 0;
}

// Every value of dev (n floats) equal to host[i] + 1.
int check(const char *step, const float *dev, const std::vector<float> &in,
          cudaStream_t s) {
  std::vector<float> got(in.size());
  TRY(cudaMemcpyAsync(got.data(), dev, in.size() * sizeof(float),
                      cudaMemcpyDeviceToHost, s));
  TRY(cudaStreamSynchronize(s));
  for (size_t i = 0; i < in.size(); i++)
    if (got[i] != in[i] + 1.0f) {
      std::printf("FAIL %s: [%zu] = %g, want %g\n", step, i, (double)got[i],
                  (double)(in[i] + 1.0f));
      return 1;
    }
  std::printf("ok %s\n", step);
  return 0;
}

int leaves(cudaGraph_t g, std::vector<cudaGraphNode_t> *out) {
  size_t n = 0;
  TRY(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  TRY(cudaGraphGetNodes(g, nodes.data(), &n));
  for (size_t i = 0; i < n; i++) {
    size_t deps = 0;
    TRY(cudaGraphNodeGetDependentNodes(nodes[i], nullptr, nullptr, &deps));
    if (deps == 0) out->push_back(nodes[i]);
  }
  return 0;
}

// The copy nodes of one graph exec and what they copy between.
struct Repoint {
  cudaGraphExec_t x;
  cudaGraphNode_t copy_in, copy_out;  // copy_in may be null
  float *static_in, *pool_out;
  size_t bytes;
  bool always;
};

// The caller's buffers freed and allocated again (--realloc), the input's
// values written again, the nodes re-pointed where an address changed (or
// always).
int reallocate(const Repoint &r, const std::vector<float> &in,
               float **caller_in, float **dst) {
  float *old_in = *caller_in, *old_dst = *dst;
  TRY(cudaFree(*caller_in));
  TRY(cudaFree(*dst));
  TRY(cudaMalloc(caller_in, r.bytes));
  TRY(cudaMalloc(dst, r.bytes));
  TRY(cudaMemcpy(*caller_in, in.data(), r.bytes, cudaMemcpyHostToDevice));
  if (r.copy_in != nullptr && (r.always || *caller_in != old_in))
    TRY(cudaGraphExecMemcpyNodeSetParams1D(r.x, r.copy_in, r.static_in,
                                           *caller_in, r.bytes,
                                           cudaMemcpyDeviceToDevice));
  if (r.always || *dst != old_dst)
    TRY(cudaGraphExecMemcpyNodeSetParams1D(r.x, r.copy_out, *dst, r.pool_out,
                                           r.bytes, cudaMemcpyDeviceToDevice));
  std::printf("realloc: input %s, output %s\n",
              *caller_in == old_in ? "same address" : "moved",
              *dst == old_dst ? "same address" : "moved");
  return 0;
}

int run(const Opts &o) {
  size_t bytes = (size_t)o.n * sizeof(float);
  std::vector<float> in(o.n);
  for (int i = 0; i < o.n; i++) in[i] = (float)i;
  cudaStream_t s;
  TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *caller_in, *static_in, *pool_out, *dst1, *dst2;
  unsigned *count;
  TRY(cudaMalloc(&caller_in, bytes));
  pool_out = nullptr;
  if (o.pool) {  // stream-ordered pool memory, ready before the capture
    TRY(cudaMallocAsync(&static_in, bytes, s));
    if (!o.alloc_in_capture) TRY(cudaMallocAsync(&pool_out, bytes, s));
    TRY(cudaStreamSynchronize(s));
  } else {
    TRY(cudaMalloc(&static_in, bytes));
    if (!o.alloc_in_capture) TRY(cudaMalloc(&pool_out, bytes));
  }
  TRY(cudaMalloc(&dst1, bytes));
  TRY(cudaMalloc(&dst2, bytes));
  TRY(cudaMalloc(&count, sizeof *count));
  TRY(cudaMemcpy(caller_in, in.data(), bytes, cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(static_in, in.data(), bytes, cudaMemcpyHostToDevice));
  // The model, recorded as aotrun records it.
  cudaGraph_t g;
  TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  if (o.alloc_in_capture) TRY(cudaMalloc(&pool_out, bytes));
  add_one<<<(o.n + 255) / 256, 256, 0, s>>>(pool_out, static_in, o.n);
  TRY(cudaGetLastError());
  TRY(cudaStreamEndCapture(s, &g));
  // The input node: the caller's input into the static buffer, before the
  // captured kernel (its roots).
  cudaGraphNode_t copy_in_node = nullptr;
  if (o.input_node) {
    std::vector<cudaGraphNode_t> roots;
    size_t n = 0;
    TRY(cudaGraphGetRootNodes(g, nullptr, &n));
    roots.resize(n);
    TRY(cudaGraphGetRootNodes(g, roots.data(), &n));
    TRY(cudaGraphAddMemcpyNode1D(&copy_in_node, g, nullptr, 0, static_in,
                                 caller_in, bytes, cudaMemcpyDeviceToDevice));
    for (cudaGraphNode_t r : roots)
      TRY(cudaGraphAddDependencies(g, &copy_in_node, &r, nullptr, 1));
  }
  // The output node, after every leaf.
  std::vector<cudaGraphNode_t> lv;
  if (int rc = leaves(g, &lv)) return rc;
  cudaGraphNode_t copy_out;
  TRY(cudaGraphAddMemcpyNode1D(&copy_out, g, lv.data(), lv.size(), dst1,
                               pool_out, bytes, cudaMemcpyDeviceToDevice));
  if (o.kernel_leaf) {  // the done counter's node, last
    void *args[] = {&count};
    cudaKernelNodeParams p = {};
    p.func = reinterpret_cast<void *>(bump);
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    cudaGraphNode_t k;
    TRY(cudaGraphAddKernelNode(&k, g, &copy_out, 1, &p));
  }
  cudaGraphExec_t x;
  TRY(cudaGraphInstantiate(&x, g, 0));
  std::printf("graph: kernel%s, output memcpy node%s%s\n",
              o.input_node ? ", input memcpy node" : "",
              o.kernel_leaf ? ", kernel node last" : "",
              o.alloc_in_capture ? ", its output allocated in the capture"
                                 : "");
  TRY(cudaGraphLaunch(x, s));
  TRY(cudaStreamSynchronize(s));
  if (check("first launch", dst1, in, s)) return 1;
  for (int r = 0; r < o.replays; r++) {
    if (o.realloc) {
      Repoint rp = {x, copy_in_node, copy_out, static_in, pool_out, bytes,
                    o.repoint_always};
      if (int rc = reallocate(rp, in, &caller_in, &dst1)) return rc;
    }
    TRY(cudaMemsetAsync(dst1, 0, bytes, s));
    TRY(cudaGraphLaunch(x, s));
    TRY(cudaStreamSynchronize(s));
    char step[64];
    std::snprintf(step, sizeof step, "replay %d", r + 1);
    if (check(step, dst1, in, s)) return 1;
  }
  TRY(cudaGraphExecMemcpyNodeSetParams1D(x, copy_out, dst2, pool_out, bytes,
                                         cudaMemcpyDeviceToDevice));
  TRY(cudaGraphLaunch(x, s));
  TRY(cudaStreamSynchronize(s));
  if (check("replay into a re-pointed output node", dst2, in, s)) return 1;
  TRY(cudaGraphExecDestroy(x));
  TRY(cudaGraphDestroy(g));
  if (o.pool) {
    TRY(cudaFreeAsync(static_in, s));
    if (!o.alloc_in_capture) TRY(cudaFreeAsync(pool_out, s));
    TRY(cudaStreamSynchronize(s));
  } else {
    TRY(cudaFree(static_in));
    if (!o.alloc_in_capture) TRY(cudaFree(pool_out));
  }
  if (o.alloc_in_capture) TRY(cudaFree(pool_out));
  for (void *p : {(void *)caller_in, (void *)dst1, (void *)dst2,
                  (void *)count})
    TRY(cudaFree(p));
  TRY(cudaStreamDestroy(s));
  std::printf("all ok\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  Opts o;
  if (int rc = parse(argc, argv, &o)) return rc;
  return run(o);
}
