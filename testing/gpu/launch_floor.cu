// launch_floor.cu: the floor a runtime cannot go below on this GPU, for
// comparing a program of N kernels against (issue 12). Each figure is host
// wall time (clock_gettime) of the work plus cudaStreamSynchronize, over
// --reps repetitions after --warmup ones: median, p90, min in us.
//
//   sync_idle              cudaStreamSynchronize of an idle stream
//   launches_sync[N]       N empty-kernel launches + sync (N = 1 is "one
//                          launch + sync")
//   graph_launch_sync[N]   one cudaGraphLaunch of a graph of N empty kernels
//                          (captured from a stream) + sync
//   graph_launch_event_spin[N]  the same graph, its end awaited by recording
//                          an event after the launch and spinning on
//                          cudaEventQuery instead of cudaStreamSynchronize
//   graph_launch_flag_spin[N]   a graph of the N kernels and one more that
//                          bumps a counter in mapped host memory, awaited
//                          by spinning on that counter (no CUDA call after
//                          the launch): whether a runtime can notice a
//                          replay's end sooner than the synchronisation
//                          (issue 12's "wall <= GPU time + 3 us" is below
//                          graph_launch_sync's own wall - device time)
//   memcpy_*_sync          one cudaMemcpyAsync of --copy-bytes (256) bytes,
//                          device to device, host (pageable) to device,
//                          device to host, + sync
//   replay_*[N]            a graph replay with device I/O, as a runtime
//                          does it for a caller whose input and output
//                          buffers change from call to call (two caller
//                          buffer pairs, alternating): a graph of N empty
//                          kernels between the copy of --copy-bytes in and
//                          the copy out, + sync, in three ways:
//     replay_copies_sync      cudaMemcpyAsync in, cudaGraphLaunch,
//                             cudaMemcpyAsync out (aotrun's replay today)
//     replay_memcpy_nodes_sync  the copies are memcpy nodes of the graph,
//                             pointed at this call's buffers with
//                             cudaGraphExecMemcpyNodeSetParams, then one
//                             cudaGraphLaunch
//     replay_kernel_nodes_sync  the copies are copy-kernel nodes, pointed
//                             with cudaGraphExecKernelNodeSetParams
//                          (whether updating the graph is cheaper than two
//                          copies on the stream: issue 12's replay target)
//     KEY_device, KEY_host_side  for each replay KEY, a second pass with
//                             CUDA events around the work: its device time,
//                             and wall minus device time per repetition
//                             (what the host adds: issue 16's "replay is
//                             only the launch plus the copies")
//   busy[i]                with --busy N:US,...: for each pair, N kernels
//                          that spin until their device time sums to about
//                          US (a program's GPU time; each spins
//                          (US - the device time of N empty kernels) / N),
//                          so the floor has the program's kernel count and
//                          GPU time and nothing else:
//     launches_sync           N plain launches + sync
//     graph_launch_sync       a graph of the N + sync
//     graph_device_us         the graph's device time (events): how close
//                             the spin came to US
//
// Usage: launch_floor [--reps R] [--warmup W] [--ns 1,2,4,...]
//                     [--copy-bytes B] [--device D] [--busy N:US,...]
// Prints one JSON object on stdout. Exit 0; 1 for a bad command line; 2
// when CUDA fails (no device, no driver): then the JSON has "error" and the
// message is also on stderr.
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_NS 32
#define MAX_N 4096

__global__ void empty_kernel() {}

// Spins for ns nanoseconds of the GPU's global timer: a kernel with a
// chosen device time and no memory traffic.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// The last node of a flag graph: the replay's end, told to the host by a
// counter in mapped host memory (the device keeps its own copy, so it
// never reads host memory).
__global__ void bump_kernel(unsigned int *device_count,
                            volatile unsigned int *host_flag) {
  unsigned int v = ++*device_count;
  *host_flag = v;
  __threadfence_system();
}

// The copy a replay needs, as a kernel: bytes from src to dst.
__global__ void copy_kernel(char *dst, const char *src, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

struct options {
  long reps = 2000, warmup = 200, copy_bytes = 256;
  int device = 0;
  int ns[MAX_NS] = {1, 2, 4, 8, 16, 32, 64};
  int num_ns = 7;
  int busy_n[MAX_NS] = {0};
  double busy_us[MAX_NS] = {0};
  int num_busy = 0;
};

struct stat3 {
  double median, p90, min;
};

static char g_error[1024];

// Records the first CUDA failure; returns nonzero when `e` is an error.
static int failed(cudaError_t e, const char *what, int line) {
  if (e == cudaSuccess) return 0;
  if (g_error[0] == '\0')
    snprintf(g_error, sizeof g_error, "%s failed at launch_floor.cu:%d: %s (%s, %d)",
             what, line, cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
  return 1;
}
#define TRY(call) (failed((call), #call, __LINE__))

static double now_us() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static stat3 summarize(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  stat3 s;
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  long r90 = (90 * n + 99) / 100;
  s.p90 = v[r90 > 0 ? r90 - 1 : 0];
  s.min = v[0];
  return s;
}

// What one repetition does before the synchronisation.
enum work_kind {
  IDLE,
  LAUNCHES,
  BUSY_LAUNCHES,
  GRAPH,
  COPY,
  REPLAY_COPIES,
  REPLAY_MEMCPY_NODES,
  REPLAY_KERNEL_NODES
};

// A replay's graph and the caller's two buffer pairs it alternates over.
struct replay {
  // The graph outlives its exec: the exec node setters take the node
  // handles of the graph the exec was instantiated from, and those die
  // with it (destroying it first made every update "invalid argument").
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaGraphNode_t in_node, out_node; // the copy nodes (node variants)
  cudaMemcpy3DParms in_copy, out_copy; // memcpy nodes' params as built
  char *static_in, *static_out;      // the graph's own buffers
  char *caller_in[2], *caller_out[2];
  long turn;
};

// How a repetition waits for its work to end.
enum wait_kind { WAIT_SYNC, WAIT_EVENT_SPIN, WAIT_FLAG_SPIN };

struct work {
  work_kind kind;
  wait_kind wait;
  cudaEvent_t done;              // WAIT_EVENT_SPIN: recorded after the work
  volatile unsigned int *flag;   // WAIT_FLAG_SPIN: bumped by the graph's end
  unsigned int *expected;        // the value the next end writes, less one
  int n;
  unsigned long long spin_ns; // BUSY_LAUNCHES: each kernel's spin
  cudaStream_t stream;
  cudaGraphExec_t graph;
  void *dst;
  const void *src;
  size_t bytes;
  cudaMemcpyKind copy_kind;
  replay *r;
};

static int set_copy_kernel(cudaGraphExec_t exec, cudaGraphNode_t node,
                           char *dst, const char *src, size_t n) {
  void *args[3] = {&dst, &src, &n};
  cudaKernelNodeParams p = {};
  p.func = (void *)copy_kernel;
  p.gridDim = dim3(1);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return TRY(cudaGraphExecKernelNodeSetParams(exec, node, &p));
}

// One replay with this turn's caller buffers.
static int issue_replay(const work &w) {
  replay *r = w.r;
  int k = (int)(r->turn++ & 1);
  const cudaMemcpyKind d2d = cudaMemcpyDeviceToDevice;
  switch (w.kind) {
    case REPLAY_COPIES:
      return TRY(cudaMemcpyAsync(r->static_in, r->caller_in[k], w.bytes, d2d,
                                 w.stream)) ||
             TRY(cudaGraphLaunch(r->exec, w.stream)) ||
             TRY(cudaMemcpyAsync(r->caller_out[k], r->static_out, w.bytes, d2d,
                                 w.stream));
    case REPLAY_MEMCPY_NODES: {
      // The node's own parameters with the pointers changed.
      cudaMemcpy3DParms in = r->in_copy, out = r->out_copy;
      in.srcPtr.ptr = r->caller_in[k];
      out.dstPtr.ptr = r->caller_out[k];
      return TRY(cudaGraphExecMemcpyNodeSetParams(r->exec, r->in_node, &in)) ||
             TRY(cudaGraphExecMemcpyNodeSetParams(r->exec, r->out_node,
                                                  &out)) ||
             TRY(cudaGraphLaunch(r->exec, w.stream));
    }
    default:
      return set_copy_kernel(r->exec, r->in_node, r->static_in,
                             r->caller_in[k], w.bytes) ||
             set_copy_kernel(r->exec, r->out_node, r->caller_out[k],
                             r->static_out, w.bytes) ||
             TRY(cudaGraphLaunch(r->exec, w.stream));
  }
}

static int issue(const work &w) {
  switch (w.kind) {
    case IDLE: return 0;
    case LAUNCHES:
      for (int i = 0; i < w.n; i++) empty_kernel<<<1, 1, 0, w.stream>>>();
      return TRY(cudaGetLastError());
    case BUSY_LAUNCHES:
      for (int i = 0; i < w.n; i++)
        spin_kernel<<<1, 1, 0, w.stream>>>(w.spin_ns);
      return TRY(cudaGetLastError());
    case GRAPH: return TRY(cudaGraphLaunch(w.graph, w.stream));
    case COPY:
      return TRY(cudaMemcpyAsync(w.dst, w.src, w.bytes, w.copy_kind, w.stream));
    default: return issue_replay(w);
  }
}

// A flag spin gives up after this long and asks the stream why.
#define FLAG_WAIT_LIMIT_US 5e6

static int wait_flag(const work &w) {
  unsigned int want = ++*w.expected;
  double t0 = now_us();
  while (*w.flag != want) {
    if (now_us() - t0 > FLAG_WAIT_LIMIT_US) {
      cudaError_t e = cudaStreamQuery(w.stream);
      if (e != cudaSuccess && e != cudaErrorNotReady) return TRY(e);
      snprintf(g_error, sizeof g_error,
               "the flag graph's counter stayed at %u, expected %u",
               *w.flag, want);
      return 1;
    }
  }
  return 0;
}

// The end of a repetition's work, as w.wait says.
static int wait_for(const work &w) {
  switch (w.wait) {
    case WAIT_EVENT_SPIN: {
      if (TRY(cudaEventRecord(w.done, w.stream))) return 1;
      cudaError_t e;
      while ((e = cudaEventQuery(w.done)) == cudaErrorNotReady) {
      }
      return TRY(e);
    }
    case WAIT_FLAG_SPIN: return wait_flag(w);
    default: return TRY(cudaStreamSynchronize(w.stream));
  }
}

// Median etc. of --reps timed repetitions of w + its wait; -1 median on
// error.
static stat3 measure(const options &o, const work &w, double *times) {
  stat3 bad = {-1, -1, -1};
  for (long i = 0; i < o.warmup + o.reps; i++) {
    double t0 = now_us();
    if (issue(w) || wait_for(w)) return bad;
    double t = now_us() - t0;
    if (i >= o.warmup) times[i - o.warmup] = t;
  }
  return summarize(times, o.reps);
}

// The replay variants again, timed on the device: CUDA events around the
// work on the stream (copies and graph). A separate pass: the two records
// would add to the wall time measure() takes. *host_side gets wall minus
// device time per repetition: what the host adds (the launch calls, the
// synchronisation's wake-up), the figure aotrun's replay is compared with.
static stat3 measure_device(const options &o, const work &w, double *times,
                            cudaEvent_t e0, cudaEvent_t e1,
                            stat3 *host_side) {
  stat3 bad = {-1, -1, -1};
  double *gaps = (double *)malloc((size_t)o.reps * sizeof(double));
  if (gaps == NULL) return bad;
  for (long i = 0; i < o.warmup + o.reps; i++) {
    float ms = 0;
    double t0 = now_us();
    if (TRY(cudaEventRecord(e0, w.stream)) || issue(w) ||
        TRY(cudaEventRecord(e1, w.stream)) ||
        TRY(cudaEventSynchronize(e1)) ||
        TRY(cudaEventElapsedTime(&ms, e0, e1))) {
      free(gaps);
      return bad;
    }
    double wall = now_us() - t0;
    if (i >= o.warmup) {
      times[i - o.warmup] = ms * 1000.0;
      gaps[i - o.warmup] = wall - ms * 1000.0;
    }
  }
  *host_side = summarize(gaps, o.reps);
  free(gaps);
  return summarize(times, o.reps);
}

// A graph of n kernels captured from s: empty ones (spin_ns 0) or
// spinning; with a host flag, then a bump_kernel telling the host.
static int make_graph(int n, cudaStream_t s, cudaGraphExec_t *out,
                      unsigned long long spin_ns = 0,
                      unsigned int *device_count = NULL,
                      volatile unsigned int *host_flag = NULL) {
  cudaGraph_t g = NULL;
  if (TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)))
    return 1;
  for (int i = 0; i < n; i++) {
    if (spin_ns > 0)
      spin_kernel<<<1, 1, 0, s>>>(spin_ns);
    else
      empty_kernel<<<1, 1, 0, s>>>();
  }
  if (host_flag != NULL) bump_kernel<<<1, 1, 0, s>>>(device_count, host_flag);
  cudaError_t launch = cudaGetLastError();
  if (TRY(cudaStreamEndCapture(s, &g)) || TRY(launch)) return 1;
  int bad = TRY(cudaGraphInstantiate(out, g, 0));
  cudaGraphDestroy(g);
  return bad;
}

// The replay graph of `kind`: N empty kernels in a chain, after the copy
// in and before the copy out (as nodes of the graph for the node kinds;
// on the stream around the launch for REPLAY_COPIES). Built node by node
// so the copy nodes' handles are known.
static int make_replay_graph(work_kind kind, int n, size_t bytes,
                             replay *r) {
  if (TRY(cudaGraphCreate(&r->graph, 0))) return 1;
  cudaGraph_t g = r->graph;
  cudaGraphNode_t prev = NULL;
  int bad = 0;
  size_t count = bytes;
  char *dst = r->static_in, *src = r->caller_in[0];
  void *args[3] = {&dst, &src, &count};
  cudaKernelNodeParams copy = {};
  copy.func = (void *)copy_kernel;
  copy.gridDim = dim3(1);
  copy.blockDim = dim3(256);
  copy.kernelParams = args;
  if (kind == REPLAY_MEMCPY_NODES)
    bad = TRY(cudaGraphAddMemcpyNode1D(&r->in_node, g, NULL, 0, r->static_in,
                                       r->caller_in[0], bytes,
                                       cudaMemcpyDeviceToDevice));
  else if (kind == REPLAY_KERNEL_NODES)
    bad = TRY(cudaGraphAddKernelNode(&r->in_node, g, NULL, 0, &copy));
  if (kind != REPLAY_COPIES) prev = r->in_node;
  cudaKernelNodeParams empty = {};
  empty.func = (void *)empty_kernel;
  empty.gridDim = dim3(1);
  empty.blockDim = dim3(1);
  for (int i = 0; i < n && !bad; i++) {
    cudaGraphNode_t node = NULL;
    bad = TRY(cudaGraphAddKernelNode(&node, g, prev ? &prev : NULL,
                                     prev ? 1 : 0, &empty));
    prev = node;
  }
  dst = r->caller_out[0];
  src = r->static_out;
  if (!bad && kind == REPLAY_MEMCPY_NODES)
    bad = TRY(cudaGraphAddMemcpyNode1D(&r->out_node, g, &prev, 1,
                                       r->caller_out[0], r->static_out, bytes,
                                       cudaMemcpyDeviceToDevice)) ||
          TRY(cudaGraphMemcpyNodeGetParams(r->in_node, &r->in_copy)) ||
          TRY(cudaGraphMemcpyNodeGetParams(r->out_node, &r->out_copy));
  else if (!bad && kind == REPLAY_KERNEL_NODES)
    bad = TRY(cudaGraphAddKernelNode(&r->out_node, g, &prev, 1, &copy));
  if (!bad) bad = TRY(cudaGraphInstantiate(&r->exec, g, 0));
  return bad;
}

// One --busy pair measured.
struct busy_result {
  stat3 launches, graph, graph_device;
  double empty_device_us;   // a graph of N empty kernels, on the device
  unsigned long long spin_ns; // each kernel's spin
};

// N spinning kernels whose device time sums to about us: the spin is
// calibrated against the device time of N empty kernels in a graph.
static int measure_busy(const options &o, int n, double us, cudaStream_t s,
                        double *times, cudaEvent_t e0, cudaEvent_t e1,
                        busy_result *b) {
  cudaGraphExec_t exec = NULL;
  stat3 host_side;
  work w = {};
  w.stream = s;
  w.kind = GRAPH;
  if (make_graph(n, s, &exec)) return 1;
  w.graph = exec;
  stat3 empty = measure_device(o, w, times, e0, e1, &host_side);
  cudaGraphExecDestroy(exec);
  if (g_error[0] != '\0') return 1;
  b->empty_device_us = empty.median;
  double spin_us = us > empty.median ? (us - empty.median) / n : 0;
  b->spin_ns = (unsigned long long)(spin_us * 1000.0 + 0.5);
  w.kind = BUSY_LAUNCHES;
  w.n = n;
  w.spin_ns = b->spin_ns;
  b->launches = measure(o, w, times);
  if (g_error[0] != '\0' || make_graph(n, s, &exec, b->spin_ns)) return 1;
  w.kind = GRAPH;
  w.graph = exec;
  b->graph = measure(o, w, times);
  if (g_error[0] == '\0')
    b->graph_device = measure_device(o, w, times, e0, e1, &host_side);
  cudaGraphExecDestroy(exec);
  return g_error[0] != '\0';
}

static void print_busy(const options &o, const busy_result *b) {
  printf("  \"busy\": [");
  for (int i = 0; i < o.num_busy; i++)
    printf("%s\n    {\"n\": %d, \"busy_us\": %.3f, \"spin_ns\": %llu, "
           "\"empty_graph_device_us\": %.3f, "
           "\"launches_sync\": {\"median\": %.3f, \"p90\": %.3f, \"min\": %.3f}, "
           "\"graph_launch_sync\": {\"median\": %.3f, \"p90\": %.3f, \"min\": %.3f}, "
           "\"graph_device_us\": %.3f}",
           i ? "," : "", o.busy_n[i], o.busy_us[i], b[i].spin_ns,
           b[i].empty_device_us, b[i].launches.median, b[i].launches.p90,
           b[i].launches.min, b[i].graph.median, b[i].graph.p90,
           b[i].graph.min, b[i].graph_device.median);
  printf("\n  ],\n");
}

static void print_stat(const char *key, stat3 s, int comma) {
  printf("  \"%s\": {\"median\": %.3f, \"p90\": %.3f, \"min\": %.3f}%s\n", key,
         s.median, s.p90, s.min, comma ? "," : "");
}

static void print_series(const char *key, const options &o, const stat3 *s,
                         int comma) {
  printf("  \"%s\": {", key);
  for (int i = 0; i < o.num_ns; i++)
    printf("%s\"%d\": {\"median\": %.3f, \"p90\": %.3f, \"min\": %.3f}",
           i ? ", " : "", o.ns[i], s[i].median, s[i].p90, s[i].min);
  printf("}%s\n", comma ? "," : "");
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static int fail_json(const options &o) {
  fprintf(stderr, "launch_floor: %s\n", g_error);
  printf("{\n  \"error\": ");
  json_string(g_error);
  printf(",\n  \"reps\": %ld\n}\n", o.reps);
  return 2;
}

static int parse_long(const char *opt, const char *v, long lo, long hi,
                      long *out) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi) {
    fprintf(stderr, "launch_floor: %s needs an integer in [%ld, %ld], got '%s'\n",
            opt, lo, hi, v);
    return 1;
  }
  *out = x;
  return 0;
}

static int parse_ns(const char *v, options *o) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", v);
  o->num_ns = 0;
  for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    long n;
    if (o->num_ns == MAX_NS) {
      fprintf(stderr, "launch_floor: --ns takes at most %d values\n", MAX_NS);
      return 1;
    }
    if (parse_long("--ns", tok, 1, MAX_N, &n)) return 1;
    o->ns[o->num_ns++] = (int)n;
  }
  if (o->num_ns == 0) {
    fprintf(stderr, "launch_floor: --ns needs a list like 1,2,4\n");
    return 1;
  }
  return 0;
}

// --busy N:US,... (N kernels, US microseconds of device time in all).
static int parse_busy(const char *v, options *o) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", v);
  o->num_busy = 0;
  for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
    char *colon = strchr(tok, ':'), *end;
    if (o->num_busy == MAX_NS || colon == NULL) {
      fprintf(stderr, "launch_floor: --busy takes at most %d pairs N:US, got "
              "'%s'\n", MAX_NS, tok);
      return 1;
    }
    *colon = '\0';
    long n;
    if (parse_long("--busy", tok, 1, MAX_N, &n)) return 1;
    errno = 0;
    double us = strtod(colon + 1, &end);
    if (end == colon + 1 || *end != '\0' || errno != 0 || !(us >= 0) ||
        us > 1e6) {
      fprintf(stderr, "launch_floor: --busy needs microseconds in [0, 1e6] "
              "after N:, got '%s'\n", colon + 1);
      return 1;
    }
    o->busy_n[o->num_busy] = (int)n;
    o->busy_us[o->num_busy++] = us;
  }
  if (o->num_busy == 0) {
    fprintf(stderr, "launch_floor: --busy needs a list like 9:82.5\n");
    return 1;
  }
  return 0;
}

static int parse(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: launch_floor [--reps R] [--warmup W] [--ns 1,2,4,...] "
             "[--copy-bytes B] [--device D] [--busy N:US,...]\n"
             "prints one JSON object: median/p90/min us of empty-kernel "
             "launches + sync, CUDA graphs of N empty kernels + sync, small "
             "copies + sync, graph replays with device I/O three ways, and "
             "with --busy N kernels spinning for US us in all (launches and "
             "a graph)\n");
      exit(0);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "launch_floor: %s needs a value (see --help)\n", a);
      return 1;
    }
    const char *v = argv[++i];
    long x;
    if (!strcmp(a, "--reps")) {
      if (parse_long(a, v, 1, 10000000, &o->reps)) return 1;
    } else if (!strcmp(a, "--warmup")) {
      if (parse_long(a, v, 0, 10000000, &o->warmup)) return 1;
    } else if (!strcmp(a, "--copy-bytes")) {
      if (parse_long(a, v, 1, 1L << 30, &o->copy_bytes)) return 1;
    } else if (!strcmp(a, "--device")) {
      if (parse_long(a, v, 0, 1023, &x)) return 1;
      o->device = (int)x;
    } else if (!strcmp(a, "--ns")) {
      if (parse_ns(v, o)) return 1;
    } else if (!strcmp(a, "--busy")) {
      if (parse_busy(v, o)) return 1;
    } else {
      fprintf(stderr, "launch_floor: unknown option '%s' (see --help)\n", a);
      return 1;
    }
  }
  return 0;
}

// graph_launch_event_spin and graph_launch_flag_spin for each N.
static int measure_spins(const options &o, cudaStream_t s, double *times,
                         stat3 *event_spin, stat3 *flag_spin) {
  cudaEvent_t done = NULL;
  unsigned int *host_flag = NULL, *device_count = NULL, expected = 0;
  int bad = TRY(cudaEventCreateWithFlags(&done, cudaEventDisableTiming)) ||
            TRY(cudaHostAlloc((void **)&host_flag, sizeof *host_flag,
                              cudaHostAllocMapped)) ||
            TRY(cudaMalloc((void **)&device_count, sizeof *device_count)) ||
            TRY(cudaMemset(device_count, 0, sizeof *device_count));
  if (!bad) *host_flag = 0;
  for (int i = 0; i < o.num_ns && !bad; i++) {
    work w = {};
    w.stream = s;
    w.kind = GRAPH;
    cudaGraphExec_t exec = NULL;
    bad = make_graph(o.ns[i], s, &exec);
    if (!bad) {
      w.graph = exec;
      w.wait = WAIT_EVENT_SPIN;
      w.done = done;
      event_spin[i] = measure(o, w, times);
      cudaGraphExecDestroy(exec);
      bad = event_spin[i].median < 0;
    }
    if (!bad) bad = make_graph(o.ns[i], s, &exec, 0, device_count, host_flag);
    if (!bad) {
      w.graph = exec;
      w.wait = WAIT_FLAG_SPIN;
      w.flag = host_flag;
      w.expected = &expected;
      flag_spin[i] = measure(o, w, times);
      cudaGraphExecDestroy(exec);
      bad = flag_spin[i].median < 0;
    }
  }
  if (done != NULL) cudaEventDestroy(done);
  if (host_flag != NULL) cudaFreeHost(host_flag);
  if (device_count != NULL) cudaFree(device_count);
  return bad;
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) return 1;
  double *times = (double *)malloc((size_t)o.reps * sizeof(double));
  if (times == NULL) {
    fprintf(stderr, "launch_floor: out of memory for %ld reps\n", o.reps);
    return 1;
  }
  cudaDeviceProp prop;
  int driver = 0, runtime = 0;
  cudaStream_t s = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  void *d_a = NULL, *d_b = NULL, *h = NULL;
  if (TRY(cudaSetDevice(o.device)) ||
      TRY(cudaGetDeviceProperties(&prop, o.device)) ||
      TRY(cudaDriverGetVersion(&driver)) ||
      TRY(cudaRuntimeGetVersion(&runtime)) ||
      TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) ||
      TRY(cudaEventCreate(&e0)) || TRY(cudaEventCreate(&e1)) ||
      TRY(cudaMalloc(&d_a, (size_t)o.copy_bytes)) ||
      TRY(cudaMalloc(&d_b, (size_t)o.copy_bytes)))
    return fail_json(o);
  h = calloc(1, (size_t)o.copy_bytes); /* pageable, as a plain host buffer */
  if (h == NULL) {
    snprintf(g_error, sizeof g_error, "out of host memory");
    return fail_json(o);
  }
  stat3 launches[MAX_NS], graphs[MAX_NS];
  work w = {};
  w.stream = s;
  w.kind = IDLE;
  stat3 idle = measure(o, w, times);
  w.kind = LAUNCHES;
  w.n = 1;
  stat3 one = measure(o, w, times);
  for (int i = 0; i < o.num_ns && g_error[0] == '\0'; i++) {
    w.n = o.ns[i];
    launches[i] = measure(o, w, times);
  }
  for (int i = 0; i < o.num_ns && g_error[0] == '\0'; i++) {
    cudaGraphExec_t exec = NULL;
    if (make_graph(o.ns[i], s, &exec)) break;
    w.kind = GRAPH;
    w.graph = exec;
    graphs[i] = measure(o, w, times);
    cudaGraphExecDestroy(exec);
  }
  // The spin waits are reported as their own error when they fail.
  stat3 event_spin[MAX_NS], flag_spin[MAX_NS];
  char spin_error[sizeof g_error] = {0};
  if (g_error[0] == '\0' && measure_spins(o, s, times, event_spin, flag_spin)) {
    memcpy(spin_error, g_error, sizeof g_error);
    g_error[0] = '\0';
    (void)cudaGetLastError();
  }
  busy_result busy[MAX_NS] = {};
  for (int i = 0; i < o.num_busy && g_error[0] == '\0'; i++)
    if (measure_busy(o, o.busy_n[i], o.busy_us[i], s, times, e0, e1, &busy[i]))
      break;
  w = work{};
  w.stream = s;
  w.kind = COPY;
  w.bytes = (size_t)o.copy_bytes;
  const struct {
    const char *key;
    void *dst;
    const void *src;
    cudaMemcpyKind kind;
  } copies[3] = {{"memcpy_d2d_sync", d_b, d_a, cudaMemcpyDeviceToDevice},
                 {"memcpy_h2d_sync", d_a, h, cudaMemcpyHostToDevice},
                 {"memcpy_d2h_sync", h, d_a, cudaMemcpyDeviceToHost}};
  stat3 copy[3];
  for (int i = 0; i < 3 && g_error[0] == '\0'; i++) {
    w.dst = copies[i].dst;
    w.src = copies[i].src;
    w.copy_kind = copies[i].kind;
    copy[i] = measure(o, w, times);
  }
  // Replays: static buffers and two caller buffer pairs of copy_bytes.
  const struct {
    const char *key;
    work_kind kind;
  } replays[3] = {{"replay_copies_sync", REPLAY_COPIES},
                  {"replay_memcpy_nodes_sync", REPLAY_MEMCPY_NODES},
                  {"replay_kernel_nodes_sync", REPLAY_KERNEL_NODES}};
  stat3 replayed[3][MAX_NS], on_device[3][MAX_NS], host_side[3][MAX_NS];
  // A replay variant that fails is reported as its own error; the others
  // still run.
  char replay_error[3][sizeof g_error] = {{0}};
  replay r = {};
  char **bufs[6] = {&r.static_in,    &r.static_out,    &r.caller_in[0],
                    &r.caller_in[1], &r.caller_out[0], &r.caller_out[1]};
  for (int i = 0; i < 6 && g_error[0] == '\0'; i++)
    if (TRY(cudaMalloc((void **)bufs[i], (size_t)o.copy_bytes))) break;
  int buffers_ok = g_error[0] == '\0';
  for (int k = 0; k < 3 && buffers_ok; k++) {
    for (int i = 0; i < o.num_ns && g_error[0] == '\0'; i++) {
      if (!make_replay_graph(replays[k].kind, o.ns[i], w.bytes, &r)) {
        w.kind = replays[k].kind;
        w.r = &r;
        replayed[k][i] = measure(o, w, times);
        if (g_error[0] == '\0')
          on_device[k][i] =
              measure_device(o, w, times, e0, e1, &host_side[k][i]);
      }
      if (r.exec != NULL) cudaGraphExecDestroy(r.exec);
      if (r.graph != NULL) cudaGraphDestroy(r.graph);
      r.exec = NULL;
      r.graph = NULL;
    }
    if (g_error[0] != '\0') {
      memcpy(replay_error[k], g_error, sizeof g_error);
      g_error[0] = '\0';
      (void)cudaGetLastError();  // a refused update is not sticky
    }
  }
  for (int i = 0; i < 6; i++) cudaFree(*bufs[i]);
  if (g_error[0] != '\0') return fail_json(o);
  printf("{\n  \"device\": ");
  json_string(prop.name);
  printf(",\n  \"cuda_driver_version\": %d,\n  \"cuda_runtime_version\": %d,\n",
         driver, runtime);
  printf("  \"reps\": %ld,\n  \"warmup\": %ld,\n  \"copy_bytes\": %ld,\n",
         o.reps, o.warmup, o.copy_bytes);
  printf("  \"unit\": \"us, host wall time of the work + "
         "cudaStreamSynchronize\",\n");
  print_stat("sync_idle", idle, 1);
  print_stat("one_launch_sync", one, 1);
  print_series("launches_sync", o, launches, 1);
  print_series("graph_launch_sync", o, graphs, 1);
  if (spin_error[0] == '\0') {
    print_series("graph_launch_event_spin", o, event_spin, 1);
    print_series("graph_launch_flag_spin", o, flag_spin, 1);
  } else {
    printf("  \"graph_launch_spin_error\": ");
    json_string(spin_error);
    printf(",\n");
  }
  if (o.num_busy > 0) print_busy(o, busy);
  for (int i = 0; i < 3; i++) print_stat(copies[i].key, copy[i], 1);
  for (int k = 0; k < 3; k++) {
    if (replay_error[k][0] == '\0') {
      char key[96];
      print_series(replays[k].key, o, replayed[k], 1);
      snprintf(key, sizeof key, "%s_device", replays[k].key);
      print_series(key, o, on_device[k], 1);
      snprintf(key, sizeof key, "%s_host_side", replays[k].key);
      print_series(key, o, host_side[k], 1);
      continue;
    }
    printf("  \"%s_error\": ", replays[k].key);
    json_string(replay_error[k]);
    printf(",\n");
  }
  printf("  \"num_ns\": %d\n}\n", o.num_ns);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
  free(h);
  free(times);
  return 0;
}
