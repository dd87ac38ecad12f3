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
//   memcpy_*_sync          one cudaMemcpyAsync of --copy-bytes (256) bytes,
//                          device to device, host (pageable) to device,
//                          device to host, + sync
//
// Usage: launch_floor [--reps R] [--warmup W] [--ns 1,2,4,...]
//                     [--copy-bytes B] [--device D]
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

struct options {
  long reps = 2000, warmup = 200, copy_bytes = 256;
  int device = 0;
  int ns[MAX_NS] = {1, 2, 4, 8, 16, 32, 64};
  int num_ns = 7;
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
enum work_kind { IDLE, LAUNCHES, GRAPH, COPY };

struct work {
  work_kind kind;
  int n;
  cudaStream_t stream;
  cudaGraphExec_t graph;
  void *dst;
  const void *src;
  size_t bytes;
  cudaMemcpyKind copy_kind;
};

static int issue(const work &w) {
  switch (w.kind) {
    case IDLE: return 0;
    case LAUNCHES:
      for (int i = 0; i < w.n; i++) empty_kernel<<<1, 1, 0, w.stream>>>();
      return TRY(cudaGetLastError());
    case GRAPH: return TRY(cudaGraphLaunch(w.graph, w.stream));
    case COPY:
      return TRY(cudaMemcpyAsync(w.dst, w.src, w.bytes, w.copy_kind, w.stream));
  }
  return 0;
}

// Median etc. of --reps timed repetitions of w + sync; -1 median on error.
static stat3 measure(const options &o, const work &w, double *times) {
  stat3 bad = {-1, -1, -1};
  for (long i = 0; i < o.warmup + o.reps; i++) {
    double t0 = now_us();
    if (issue(w) || TRY(cudaStreamSynchronize(w.stream))) return bad;
    double t = now_us() - t0;
    if (i >= o.warmup) times[i - o.warmup] = t;
  }
  return summarize(times, o.reps);
}

static int make_graph(int n, cudaStream_t s, cudaGraphExec_t *out) {
  cudaGraph_t g = NULL;
  if (TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)))
    return 1;
  for (int i = 0; i < n; i++) empty_kernel<<<1, 1, 0, s>>>();
  cudaError_t launch = cudaGetLastError();
  if (TRY(cudaStreamEndCapture(s, &g)) || TRY(launch)) return 1;
  int bad = TRY(cudaGraphInstantiate(out, g, 0));
  cudaGraphDestroy(g);
  return bad;
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

static int parse(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: launch_floor [--reps R] [--warmup W] [--ns 1,2,4,...] "
             "[--copy-bytes B] [--device D]\n"
             "prints one JSON object: median/p90/min us of empty-kernel "
             "launches + sync, CUDA graphs of N empty kernels + sync, small "
             "copies + sync\n");
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
    } else {
      fprintf(stderr, "launch_floor: unknown option '%s' (see --help)\n", a);
      return 1;
    }
  }
  return 0;
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
  void *d_a = NULL, *d_b = NULL, *h = NULL;
  if (TRY(cudaSetDevice(o.device)) ||
      TRY(cudaGetDeviceProperties(&prop, o.device)) ||
      TRY(cudaDriverGetVersion(&driver)) ||
      TRY(cudaRuntimeGetVersion(&runtime)) ||
      TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) ||
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
  for (int i = 0; i < 3; i++) print_stat(copies[i].key, copy[i], i < 2);
  printf("}\n");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaStreamDestroy(s);
  free(h);
  free(times);
  return 0;
}
