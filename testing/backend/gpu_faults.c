/*
 * gpu_faults.c: aotrun_gpu_faults, the GPU half of the fault sweep
 * (testing/loader/test_faults.c is the CPU half; docs/reliability.md,
 * "Fault points"). Run on the GPU machine by testing/gpu/run_suite.py
 * (check "faults" on the suite's mlp case); exits 77 without a GPU.
 *
 * One cycle is: create a method of the CUDA backend (the backend's own
 * method code, linked in: cuda_method.h), execute it 5 times (with CUDA
 * graphs: 3 warm-up calls, the capture, a replay), destroy it. A first
 * cycle records every fault point reached; then, for each hit, the cycle
 * runs again with that one hit failed (aot_loader/fault_point.h), in four
 * configurations: no graph, CUDA graphs, library in a temp file (host
 * tensors), and CUDA graphs on device tensors with the output nodes on
 * (two sets of device buffers taken in turn, so the graph's input and
 * output copy nodes are re-pointed every call: their fault points are
 * reached). After every cycle:
 *   - a failed step's message is non-empty and names the cause (the
 *     point's fragment below); a point with a fallback (memfd, CUDA graph
 *     capture: the call runs without a graph) may succeed;
 *   - successful calls give the expected outputs (--expected);
 *   - free device memory (cudaMemGetInfo, after the shim's block cache is
 *     handed back: aotrun_shim_release_cached_memory) drops by no more than
 *     a clean cycle's (measured over four; a model's CUDA modules may stay
 *     loaded) plus one 2 MiB granule per cycle, and over the whole sweep by
 *     no more than the clean cycles' loss plus one granule: failure paths
 *     leak nothing on the device;
 *   - nothing is left in $TMPDIR.
 * Prints "PASS faults MODE: ..." per configuration, "FAIL: ..." per problem;
 * exit status 1 on any FAIL.
 *
 * usage: aotrun_gpu_faults PROGRAM_DIR --input X.npy... --expected Y.npy...
 *                          [--method M] [--atol X] [--rtol X]
 */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "aot_loader/fault_point.h"
#include "aot_loader/library_image.h"
#include "backend_cuda/cuda_method.h"
#include "backend_cuda/cuda_options.h"
#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"
#include "shim_lib/aotrun_shim.h"

#define MAX_IO 32
#define MAX_HITS 512
#define POINT_MAX 48
#define CALLS 5
#define EXIT_SKIP 77

static int g_failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  g_failures++;
}

/* ---- the fault hook ------------------------------------------------------ */

typedef struct sweep {
  int record;
  size_t hits, fail_at;
  char failed[POINT_MAX];
  int failed_call;     /* the call it failed in (-1: create) */
  int capture_call;    /* the call that captured the graph (-2: none) */
  char names[MAX_HITS][POINT_MAX];
  int calls[MAX_HITS]; /* the call each recorded hit happened in */
  size_t num_names;
} sweep;

static sweep g_sweep;
static int g_call; /* -1 during create, then the call's index */

static int hook(void *ctx, const char *point) {
  sweep *s = ctx;
  s->hits++;
  if (s->record && s->num_names < MAX_HITS) {
    s->calls[s->num_names] = g_call;
    snprintf(s->names[s->num_names++], POINT_MAX, "%s", point);
  }
  if (s->hits != s->fail_at) return 0;
  s->failed_call = g_call;
  snprintf(s->failed, sizeof s->failed, "%s", point);
  if (strcmp(point, "temp_file.write") == 0) return ENOSPC;
  if (strcmp(point, "model_library.dlopen") == 0) return ELIBBAD;
  return EIO;
}

/* The message of a failed step, or NULL when the point may fall back (the
 * step then succeeds). CUDA graph steps fall back to a run without a graph
 * (docs/cuda-graphs.md): the call succeeds, or fails naming the step. */
static const char *fragment(const char *point, int *may_succeed) {
  static const struct {
    const char *point, *fragment;
    int may_succeed;
  } kWhat[] = {
      {"library_image.memfd", "", 1},
      {"library_image.tmpfile", "", 1},
      {"library_image.write", "", 1},
      {"temp_file.create", "cannot create a temp file", 0},
      {"temp_file.write", "No space left on device", 0},
      {"temp_file.close", "Input/output error", 0},
      {"model_library.dlopen", "cannot dlopen model library", 0},
      {"container_api.symbol", "missing required entry point", 0},
      {"model_library.create", "AOTInductorModelContainerCreateWithDevice", 0},
      {"model_library.constants", "UpdateUserManagedConstantBufferPairs", 0},
      {"model_library.blob", "UpdateConstantsFromBlob", 0},
      {"weight_cache.alloc", "cannot allocate", 0},
      {"weight_cache.upload", "uploading", 0},
      {"model_library.run", "returned 1 for", 0},
      {"method_run.copy", "copying", 0},
      {"method_run.synchronize", "waiting for the stream failed", 0},
      {"cuda_stream.create", "cudaStreamCreateWithFlags", 0},
      {"cuda_graph.begin_capture", "cudaStreamBeginCapture", 1},
      {"cuda_graph.end_capture", "cudaStreamEndCapture", 1},
      {"cuda_graph.instantiate", "cudaGraphInstantiate", 1},
      {"cuda_graph.launch", "cudaGraphLaunch", 1},
      {"cuda_graph.static_alloc", "cudaMalloc", 1},
      /* A chunk of the graph's pool: the one reserved before the capture
       * (a capture failure: the call runs without a graph) or one taken
       * inside it (the model's allocation fails in the capture). */
      {"cuda_graph.pool_chunk", "", 1},
      /* Input nodes (the default): an attach failure is a capture
       * failure; a refused pointer or switch copies on the stream, or
       * fails the call naming the switch. */
      {"cuda_graph.add_input_nodes", "cudaGraphAddMemcpyNode1D", 1},
      {"cuda_graph.point_input_node", "cudaGraphExecMemcpyNodeSetParams1D", 1},
      {"cuda_graph.enable_input_node", "cudaGraphNodeSetEnabled", 1},
      /* Output nodes (option cuda_graph_output_nodes, device outputs
       * only): the same three ways. */
      {"cuda_graph.add_output_nodes", "cudaGraphAddMemcpyNode1D", 1},
      {"cuda_graph.point_output_node", "cudaGraphExecMemcpyNodeSetParams1D",
       1},
      {"cuda_graph.enable_output_node", "cudaGraphNodeSetEnabled", 1},
  };
  for (size_t i = 0; i < sizeof kWhat / sizeof kWhat[0]; i++)
    if (strcmp(point, kWhat[i].point) == 0) {
      *may_succeed = kWhat[i].may_succeed;
      return kWhat[i].fragment;
    }
  *may_succeed = 1;
  return NULL; /* unknown here: only the memory and file checks apply */
}

/* ---- program, inputs, expected outputs ---------------------------------- */

typedef struct session {
  aotrun_program_dir *dir;
  const aotrun_host_api *host;
  const void *manifest;
  size_t manifest_size;
  void *manifest_token;
  const char *method;
  aotrun_npy in[MAX_IO], want[MAX_IO];
  DLTensor in_t[MAX_IO], out_t[MAX_IO];
  /* Device copies of the inputs and device outputs, two sets. */
  void *in_dev[2][MAX_IO], *out_dev[2][MAX_IO];
  DLTensor in_dt[2][MAX_IO];
  void *out_data[MAX_IO];
  int64_t out_shape[MAX_IO][AOTRUN_MAX_DIMS];
  size_t ni, no;
  double atol, rtol;
  char tmpdir[512];
} session;

static DLTensor host_tensor(aotrun_npy *a) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = a->data;
  t.device = (DLDevice){kDLCPU, 0};
  t.ndim = a->ndim;
  t.dtype = a->dtype;
  t.shape = a->shape;
  return t;
}

/* The device mode's buffers, allocated once (before any memory is
 * measured): each set holds a copy of the inputs and room for the
 * outputs. */
static int device_buffers(session *s) {
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < s->ni; i++) {
      size_t n = s->in[i].nbytes ? s->in[i].nbytes : 1;
      if (cudaMalloc(&s->in_dev[k][i], n) != cudaSuccess ||
          cudaMemcpy(s->in_dev[k][i], s->in[i].data, s->in[i].nbytes,
                     cudaMemcpyHostToDevice) != cudaSuccess)
        return -1;
      s->in_dt[k][i] = s->in_t[i];
      s->in_dt[k][i].data = s->in_dev[k][i];
      s->in_dt[k][i].device = (DLDevice){kDLCUDA, 0};
    }
    for (size_t i = 0; i < s->no; i++)
      if (cudaMalloc(&s->out_dev[k][i],
                     s->want[i].nbytes ? s->want[i].nbytes : 1) !=
          cudaSuccess)
        return -1;
  }
  return 0;
}

static int open_session(session *s, int argc, char **argv) {
  memset(s, 0, sizeof *s);
  s->method = "forward";
  s->atol = 1e-4;
  s->rtol = 1e-4;
  const char *program = argc > 1 ? argv[1] : NULL;
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    aotrun_npy *arr = NULL;
    if (strcmp(k, "--input") == 0 && s->ni < MAX_IO) arr = &s->in[s->ni++];
    else if (strcmp(k, "--expected") == 0 && s->no < MAX_IO)
      arr = &s->want[s->no++];
    else if (strcmp(k, "--method") == 0) s->method = v;
    else if (strcmp(k, "--atol") == 0) s->atol = atof(v);
    else if (strcmp(k, "--rtol") == 0) s->rtol = atof(v);
    else return -1;
    if (arr != NULL && aotrun_npy_read(v, arr) != AOTRUN_OK) {
      fprintf(stderr, "%s\n", aotrun_host_last_error());
      return -1;
    }
  }
  if (program == NULL || s->no == 0) return -1;
  if (aotrun_program_dir_open(program, &s->dir) != AOTRUN_OK) {
    fprintf(stderr, "%s\n", aotrun_host_last_error());
    return -1;
  }
  s->host = aotrun_program_dir_host_api(s->dir);
  if (s->host->get_named_data(s->host->ctx, "manifest.json", &s->manifest,
                              &s->manifest_size,
                              &s->manifest_token) != AOTRUN_OK) {
    fprintf(stderr, "%s\n", aotrun_host_last_error());
    return -1;
  }
  for (size_t i = 0; i < s->ni; i++) s->in_t[i] = host_tensor(&s->in[i]);
  for (size_t i = 0; i < s->no; i++) {
    s->out_data[i] = calloc(1, s->want[i].nbytes ? s->want[i].nbytes : 1);
    if (s->out_data[i] == NULL) return -1;
  }
  if (device_buffers(s) != 0) return -1;
  /* A private $TMPDIR: the temp-file configuration must leave it empty. */
  const char *base = getenv("TMPDIR");
  snprintf(s->tmpdir, sizeof s->tmpdir, "%s/aotrun-gpu-faults.XXXXXX",
           base != NULL && base[0] != '\0' ? base : "/tmp");
  if (mkdtemp(s->tmpdir) == NULL || setenv("TMPDIR", s->tmpdir, 1) != 0)
    return -1;
  return 0;
}

static void close_session(session *s) {
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < s->ni; i++) cudaFree(s->in_dev[k][i]);
    for (size_t i = 0; i < s->no; i++) cudaFree(s->out_dev[k][i]);
  }
  for (size_t i = 0; i < s->ni; i++) aotrun_npy_free(&s->in[i]);
  for (size_t i = 0; i < s->no; i++) {
    aotrun_npy_free(&s->want[i]);
    free(s->out_data[i]);
  }
  if (s->manifest_token != NULL)
    s->host->release_named_data(s->host->ctx, s->manifest_token);
  aotrun_program_dir_close(s->dir);
  rmdir(s->tmpdir);
}

static int tmpdir_entries(const session *s) {
  DIR *d = opendir(s->tmpdir);
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* Outputs sized like the expected arrays, zeroed before each call: host
 * memory, or device set `set` (0 or 1) when set >= 0. */
static void reset_outputs(session *s, int set) {
  for (size_t i = 0; i < s->no; i++) {
    memcpy(s->out_shape[i], s->want[i].shape,
           sizeof(int64_t) * (size_t)s->want[i].ndim);
    memset(s->out_data[i], 0, s->want[i].nbytes);
    DLTensor t = host_tensor(&s->want[i]);
    t.data = s->out_data[i];
    t.shape = s->out_shape[i];
    if (set >= 0) {
      (void)cudaMemset(s->out_dev[set][i], 0, s->want[i].nbytes);
      t.data = s->out_dev[set][i];
      t.device = (DLDevice){kDLCUDA, 0};
    }
    s->out_t[i] = t;
  }
}

/* The device outputs of set `set` into out_data, for outputs_match. */
static int fetch_outputs(session *s, int set) {
  for (size_t i = 0; i < s->no; i++)
    if (cudaMemcpy(s->out_data[i], s->out_dev[set][i], s->want[i].nbytes,
                   cudaMemcpyDeviceToHost) != cudaSuccess)
      return -1;
  return 0;
}

/* float32 / float64 outputs within atol + rtol * |want|; others exact. */
static int outputs_match(const session *s, char *why, size_t size) {
  for (size_t i = 0; i < s->no; i++) {
    const aotrun_npy *w = &s->want[i];
    size_t n = w->nbytes / (w->dtype.bits / 8 ? w->dtype.bits / 8 : 1);
    for (size_t k = 0; k < n; k++) {
      double got, want;
      if (w->dtype.code == kDLFloat && w->dtype.bits == 32) {
        got = ((const float *)s->out_data[i])[k];
        want = ((const float *)w->data)[k];
      } else if (w->dtype.code == kDLFloat && w->dtype.bits == 64) {
        got = ((const double *)s->out_data[i])[k];
        want = ((const double *)w->data)[k];
      } else {
        if (memcmp(s->out_data[i], w->data, w->nbytes) != 0) {
          snprintf(why, size, "output %zu differs", i);
          return 0;
        }
        break;
      }
      if (!(fabs(got - want) <= s->atol + s->rtol * fabs(want))) {
        snprintf(why, size, "output %zu element %zu is %g, expected %g", i,
                 k, got, want);
        return 0;
      }
    }
  }
  return 1;
}

/* ---- one cycle ----------------------------------------------------------- */

typedef struct mode {
  const char *name;
  int graph, temp_file;
  int device_io; /* device tensors, two sets in turn; output nodes on */
} mode;

typedef struct outcome {
  int failed_steps; /* init or calls that returned an error */
  char message[1024];
} outcome;

static void note(outcome *o, const char *msg) {
  o->failed_steps++;
  if (o->message[0] == '\0')
    snprintf(o->message, sizeof o->message, "%s",
             msg != NULL && msg[0] != '\0' ? msg : "(empty message)");
}

static outcome cycle(session *s, const mode *m) {
  outcome o;
  memset(&o, 0, sizeof o);
  aotrun_cuda_options defaults;
  aotrun_cuda_options_default(&defaults);
  if (m->graph)
    snprintf(defaults.graph_methods, sizeof defaults.graph_methods, "%s",
             s->method);
  defaults.library_temp_file = m->temp_file;
  /* The sweep fails each hit of create and execute; the init-time warm-up
   * run (on by default) would hit the execute path's points inside create,
   * where a failure is only a warning by design. */
  defaults.warm_up_run = 0;
  defaults.graph_output_nodes = m->device_io;
  aotrun_key_value spec = {"method", s->method};
  aotrun_library_image_test_refuse(
      m->temp_file ? 1u << AOTRUN_IMAGE_UNNAMED_FILE : 0);
  g_call = -1;
  aotrun_method *h = NULL;
  aotrun_error err;
  memset(&err, 0, sizeof err);
  aotrun_status st = aotrun_cuda_method_create(
      s->host, s->manifest, s->manifest_size, &spec, 1, &defaults, &h, &err);
  aotrun_library_image_test_refuse(0);
  if (st != AOTRUN_OK) {
    if (h != NULL) fail("%s: a failed create returned a handle", m->name);
    note(&o, err.message);
    return o;
  }
  for (int c = 0; c < CALLS; c++) {
    g_call = c;
    int set = m->device_io ? c & 1 : -1;
    reset_outputs(s, set);
    DLTensor *in = set >= 0 ? s->in_dt[set] : s->in_t;
    if (aotrun_cuda_method_execute(h, in, s->ni, s->out_t, s->no) !=
        AOTRUN_OK) {
      note(&o, aotrun_cuda_method_last_error(h));
      continue;
    }
    char why[256];
    if (set >= 0 && fetch_outputs(s, set) != 0)
      fail("%s: call %d: copying the outputs back failed", m->name, c);
    else if (!outputs_match(s, why, sizeof why))
      fail("%s: call %d after a fault: %s", m->name, c, why);
  }
  aotrun_cuda_method_destroy(h);
  return o;
}

/* Free device memory once the shim's cached blocks are handed back. */
static size_t free_device_memory(void) {
  (void)aotrun_shim_release_cached_memory(-1);
  (void)cudaDeviceSynchronize();
  size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 0;
  return free_b;
}

/* Device memory a cycle may take for good without a fault: what clean
 * cycles lose on average (CUDA modules a model loads and never unloads are
 * not aotrun's to free), plus one 2 MiB allocation granule. */
typedef struct memory_budget {
  size_t prev;     /* free memory after the last cycle */
  size_t per_cycle; /* average loss of a clean cycle */
  size_t start;    /* free memory before the first fault cycle */
} memory_budget;

#define GRANULE ((size_t)2 << 20)

static void check_hit(session *s, const mode *m, size_t k, memory_budget *b,
                      int capture_call) {
  printf("RUN: %s hit %zu\n", m->name, k);
  memset(&g_sweep, 0, sizeof g_sweep);
  g_sweep.fail_at = k;
  aotrun_fault_set_hook(hook, &g_sweep);
  outcome o = cycle(s, m);
  aotrun_fault_set_hook(NULL, NULL);
  const char *point = g_sweep.failed;
  int may_succeed = 1;
  const char *frag = fragment(point, &may_succeed);
  /* A failure while capturing is retried without a graph. */
  if (g_sweep.failed_call == capture_call) may_succeed = 1;
  if (o.failed_steps == 0 && !may_succeed)
    fail("%s: failing %s (hit %zu) went unnoticed", m->name, point, k);
  if (o.failed_steps > 0 && frag != NULL && frag[0] != '\0' &&
      strstr(o.message, frag) == NULL)
    fail("%s: failing %s (hit %zu): \"%s\" does not name \"%s\"", m->name,
         point, k, o.message, frag);
  if (o.failed_steps > 1 && strncmp(point, "cuda_graph.", 11) != 0)
    fail("%s: failing %s once failed %d steps: %s", m->name, point,
         o.failed_steps, o.message);
  size_t now = free_device_memory();
  if (now + b->per_cycle + GRANULE < b->prev)
    fail("%s: failing %s (hit %zu): %zu bytes of device memory not freed "
         "(a clean cycle keeps %zu)",
         m->name, point, k, b->prev - now, b->per_cycle);
  b->prev = now;
  if (tmpdir_entries(s) != 0)
    fail("%s: failing %s (hit %zu) left files in %s", m->name, point, k,
         s->tmpdir);
  printf("INFO: %-9s %-26s -> %s\n", m->name, point,
         o.failed_steps ? o.message : "ok (fell back)");
}

static void sweep_mode(session *s, const mode *m) {
  printf("RUN: %s: the recording cycle\n", m->name);
  int before = g_failures;
  memset(&g_sweep, 0, sizeof g_sweep);
  g_sweep.record = 1;
  aotrun_fault_set_hook(hook, &g_sweep);
  outcome o = cycle(s, m);
  aotrun_fault_set_hook(NULL, NULL);
  if (o.failed_steps) {
    fail("%s: the cycle without faults failed: %s", m->name, o.message);
    return;
  }
  size_t hits = g_sweep.hits;
  int capture_call = -2;
  for (size_t i = 0; i < g_sweep.num_names; i++)
    if (strcmp(g_sweep.names[i], "cuda_graph.begin_capture") == 0)
      capture_call = g_sweep.calls[i];
  if (m->graph && capture_call == -2)
    fail("%s: no CUDA graph was captured in %d calls", m->name, CALLS);
  /* Lazily created state (cuBLAS, pools) exists after one more cycle; the
   * next four say what a clean cycle keeps. */
  (void)cycle(s, m);
  memory_budget b;
  size_t first = free_device_memory();
  for (int i = 0; i < 4; i++) (void)cycle(s, m);
  b.start = b.prev = free_device_memory();
  b.per_cycle = first > b.start ? (first - b.start) / 4 : 0;
  printf("INFO: %s: a clean cycle keeps %zu bytes of device memory\n",
         m->name, b.per_cycle);
  for (size_t k = 1; k <= hits; k++) check_hit(s, m, k, &b, capture_call);
  size_t after = free_device_memory();
  size_t allowed = hits * b.per_cycle + GRANULE;
  if (after + allowed < b.start)
    fail("%s: %zu fault cycles lost %zu bytes of device memory, clean ones "
         "would keep %zu",
         m->name, hits, b.start - after, hits * b.per_cycle);
  if (g_failures == before)
    printf("PASS faults %s: %zu fault point hits failed one at a time; "
           "device memory free %zu bytes before, %zu after\n",
           m->name, hits, b.start, after);
}

/* A crash names where it happened: the frames go to stderr (addresses map
 * back with addr2line on the bundle's unstripped binary) and the signal is
 * re-raised so the exit status still says SIGSEGV. */
static void on_crash(int sig) {
  void *frames[64];
  int n = backtrace(frames, 64);
  static const char kHead[] = "CRASH: backtrace follows\n";
  (void)!write(STDERR_FILENO, kHead, sizeof kHead - 1);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void report_crashes(void) {
  void *warm[1];
  (void)backtrace(warm, 1); /* loads libgcc now, not inside the handler */
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGABRT, on_crash);
  signal(SIGFPE, on_crash);
}

int main(int argc, char **argv) {
  /* Line by line: a crash inside a cycle must leave the lines before it
   * (on the H200 the first run died with SIGSEGV and a fully buffered,
   * empty log). */
  setvbuf(stdout, NULL, _IOLBF, 0);
  report_crashes();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("SKIP: no CUDA device\n");
    return EXIT_SKIP;
  }
  session s;
  if (open_session(&s, argc, argv) != 0) {
    fprintf(stderr,
            "usage: aotrun_gpu_faults PROGRAM_DIR --input X.npy... "
            "--expected Y.npy... [--method M] [--atol X] [--rtol X]\n");
    return 2;
  }
  static const mode kModes[] = {{"nograph", 0, 0, 0},
                                {"graph", 1, 0, 0},
                                {"tempfile", 0, 1, 0},
                                {"graph_device", 1, 0, 1}};
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; i++)
    sweep_mode(&s, &kModes[i]);
  close_session(&s);
  printf("%s: %d failures\n", g_failures ? "FAIL" : "PASS", g_failures);
  return g_failures ? 1 : 0;
}
