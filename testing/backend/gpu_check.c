/*
 * gpu_check.c: aotrun_gpu_check, the GPU test binary of the CUDA backend's
 * CUDA graph behaviour. Runs on the GPU machine against a PROGRAM directory
 * exported there by torch; exits 77 (skip) with the reason when no GPU.
 *
 *   aotrun_gpu_check PLUGIN.so PROGRAM_DIR MODE [flags]
 *   MODE   replay  graphs on; --calls calls (>= 6); calls 1-3 must leave the
 *                  phase Warmup, call 4 onwards Replay; outputs checked
 *                  against --expected on every call
 *          shape   as replay for 4 calls, then input K viewed with
 *                  --reshape (same bytes, other shape) must be refused with
 *                  "input K has size A in dim D, captured with B"; a
 *                  correct call still works afterwards
 *          retry   graphs on; a model that cannot be captured (mask index /
 *                  .item()): every call's outputs match --expected, and
 *                  after call 4 the phase is Disabled (retried without a
 *                  graph, graphs off)
 *          recapture  as replay for 4 calls, then set_option recapture:
 *                  the --reshape'd input warms up one step, is captured and
 *                  replayed (output 0 takes the input's shape, values
 *                  compared flat), and the old shape is then refused
 *          share   --method and --method2 of one program share their weight
 *                  cache: fewer device copies together than alone
 *                  (get_option weight_copies); outputs stay right
 *          bench   --iters calls without a graph and --iters graph replays
 *                  on two handles; prints us/call for both and the ratio
 *          shapes  a graph per shape (option cuda_graph_shapes = --graphs
 *                  K, default 3) on a dynamic-batch program: every input
 *                  whose dim 0 equals input 0's (the largest batch) is cut
 *                  to each batch of --batches (default 1,2,4,2,1), cycled
 *                  for --calls calls (default 8, at least 24 used); each
 *                  call's outputs must equal those of a second handle
 *                  without graphs for the same call (--atol/--rtol), and
 *                  the first rows of --expected (row-wise models); at the
 *                  end the phase is Replay and cuda_graph_bytes reports
 *                  min(distinct batches, K) graphs; each cached batch's
 *                  replay is timed (--iters calls). Stateless models only
 *                  (both handles share the weights).
 *          fullmem the load-time check of free device memory (issue 15):
 *                  with the device filled until less than half the
 *                  program's weights.safetensors bytes are free, init must
 *                  fail with AOTRUN_ERR_OUT_OF_MEMORY and "needs N bytes
 *                  of device memory for its weights, M free"; with the
 *                  memory given back, init works (inputs are not read)
 *   flags  --method NAME      (default forward)
 *          --input FILE.npy   one per input, in order (required)
 *          --expected FILE.npy one per output, in order (sizes outputs;
 *                             required for outputs with dynamic dims)
 *          --calls N          (default 8)   --iters N (default 2000)
 *          --atol X --rtol X  (default 1e-5 / 1e-5, float32/float64 only;
 *                             other dtypes compare bytes exactly)
 *          --reshape K:D0,D1,...
 *          --log LEVEL        host log threshold (default info)
 *          --capture-at-init 0|1  option cuda_graph_capture_at_init
 *                             (default 0 here: the lazy path, whose
 *                             contract is above, is what a dynamic-shape
 *                             graph still takes); with 1 (and
 *                             cuda_graph_shapes --graphs, so that a
 *                             dynamic program is captured at init too)
 *                             the phase right after init is what it is
 *                             after call 4 (Replay, or Disabled where the
 *                             capture failed at init) and every call
 *                             keeps it
 *          --batches B1,B2,...  --graphs K   (mode shapes)
 * Prints "PASS: ..." / "FAIL: ..." lines; exit 0 pass, 1 fail, 2 usage,
 * 77 skip.
 */
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"

#define MAX_IO 32
#define EXIT_SKIP 77

typedef struct args {
  const char *plugin, *program, *mode, *method, *method2, *log;
  const char *inputs[MAX_IO], *expected[MAX_IO];
  int num_inputs, num_expected, calls, iters;
  double atol, rtol;
  int reshape_input;
  int reshape_ndim;
  int64_t reshape[AOTRUN_MAX_DIMS];
  int num_batches, graphs; /* mode shapes */
  int capture_at_init;
  int64_t batches[64];
} args;

typedef struct session {
  const aotrun_backend_api *api;
  aotrun_program_dir *dir;
  char *manifest;
  size_t manifest_size;
  aotrun_npy in[MAX_IO], want[MAX_IO];
  DLTensor in_t[MAX_IO], out_t[MAX_IO];
  int64_t out_shape[MAX_IO][AOTRUN_MAX_DIMS];
  size_t ni, no;
} session;

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

static int usage(void) {
  fprintf(stderr,
          "usage: aotrun_gpu_check PLUGIN.so PROGRAM_DIR "
          "replay|shape|retry|recapture|share|bench|shapes|fullmem "
          "[--method M] "
          "--input X.npy... [--expected Y.npy...] [--calls N] [--iters N] "
          "[--atol X] [--rtol X] [--reshape K:D0,D1,...] [--method2 M] "
          "[--log LEVEL] [--batches B1,B2,...] [--graphs K] "
          "[--capture-at-init 0|1]\n");
  return 2;
}

static int parse_reshape(const char *s, args *a) {
  char *end = NULL;
  a->reshape_input = (int)strtol(s, &end, 10);
  if (end == s || *end != ':') return -1;
  s = end + 1;
  for (a->reshape_ndim = 0; *s && a->reshape_ndim < AOTRUN_MAX_DIMS;) {
    a->reshape[a->reshape_ndim++] = strtoll(s, &end, 10);
    if (end == s) return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return *s == '\0' ? 0 : -1;
}

static int parse_batches(const char *s, args *a) {
  char *end = NULL;
  for (a->num_batches = 0; *s && a->num_batches < 64;) {
    a->batches[a->num_batches++] = strtoll(s, &end, 10);
    if (end == s || a->batches[a->num_batches - 1] < 1) return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return *s == '\0' && a->num_batches > 0 ? 0 : -1;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->method = "forward";
  a->log = "info";
  a->calls = 8;
  a->iters = 2000;
  a->atol = a->rtol = 1e-5;
  a->reshape_input = -1;
  a->graphs = 3;
  if (parse_batches("1,2,4,2,1", a)) return -1;
  if (argc < 4) return -1;
  a->plugin = argv[1];
  a->program = argv[2];
  a->mode = argv[3];
  for (int i = 4; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) return -1;
    i++;
    if (!strcmp(f, "--method")) a->method = v;
    else if (!strcmp(f, "--method2")) a->method2 = v;
    else if (!strcmp(f, "--input") && a->num_inputs < MAX_IO)
      a->inputs[a->num_inputs++] = v;
    else if (!strcmp(f, "--expected") && a->num_expected < MAX_IO)
      a->expected[a->num_expected++] = v;
    else if (!strcmp(f, "--calls")) a->calls = atoi(v);
    else if (!strcmp(f, "--iters")) a->iters = atoi(v);
    else if (!strcmp(f, "--atol")) a->atol = atof(v);
    else if (!strcmp(f, "--rtol")) a->rtol = atof(v);
    else if (!strcmp(f, "--log")) a->log = v;
    else if (!strcmp(f, "--graphs")) a->graphs = atoi(v);
    else if (!strcmp(f, "--capture-at-init")) a->capture_at_init = atoi(v);
    else if (!strcmp(f, "--batches")) {
      if (parse_batches(v, a)) return -1;
    } else if (!strcmp(f, "--reshape")) {
      if (parse_reshape(v, a)) return -1;
    } else
      return -1;
  }
  return 0;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Inputs from .npy; outputs sized from --expected or static io info. */
static int prepare_io(const args *a, session *s, aotrun_method *m) {
  s->api->get_num_io(m, AOTRUN_IO_INPUT, &s->ni);
  s->api->get_num_io(m, AOTRUN_IO_OUTPUT, &s->no);
  if ((size_t)a->num_inputs != s->ni || s->no > MAX_IO) {
    fail("method %s takes %zu inputs, %d --input given", a->method, s->ni,
         a->num_inputs);
    return -1;
  }
  for (size_t i = 0; i < s->ni; i++) {
    if (s->in[i].data == NULL &&
        aotrun_npy_read(a->inputs[i], &s->in[i]) != AOTRUN_OK) {
      fail("%s", aotrun_host_last_error());
      return -1;
    }
    s->in_t[i] = (DLTensor){s->in[i].data, {kDLCPU, 0}, s->in[i].ndim,
                            s->in[i].dtype, s->in[i].shape, NULL, 0};
  }
  for (size_t i = 0; i < s->no; i++) {
    aotrun_io_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    s->api->get_io_info(m, AOTRUN_IO_OUTPUT, i, &info);
    if ((int)i < a->num_expected && s->want[i].data == NULL &&
        aotrun_npy_read(a->expected[i], &s->want[i]) != AOTRUN_OK) {
      fail("%s", aotrun_host_last_error());
      return -1;
    }
    size_t bytes = aotrun_dtype_size(info.dtype);
    for (int d = 0; d < info.ndim; d++) {
      int64_t v = (int)i < a->num_expected ? s->want[i].shape[d]
                                           : info.shape[d];
      if (v < 0) {
        fail("output %zu (%s) has a dynamic dim: pass --expected", i,
             info.name);
        return -1;
      }
      s->out_shape[i][d] = v;
      bytes *= (size_t)v;
    }
    free(s->out_t[i].data);
    s->out_t[i] = (DLTensor){calloc(1, bytes ? bytes : 1), {kDLCPU, 0},
                             info.ndim, info.dtype, s->out_shape[i], NULL, 0};
  }
  return 0;
}

static int close_enough(DLDataType t, const void *got, const void *want,
                        size_t n, double atol, double rtol, double *worst) {
  *worst = 0;
  if (t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) {
    for (size_t i = 0; i < n; i++) {
      double g = t.bits == 32 ? ((const float *)got)[i]
                              : ((const double *)got)[i];
      double w = t.bits == 32 ? ((const float *)want)[i]
                              : ((const double *)want)[i];
      double e = fabs(g - w);
      if (e > *worst) *worst = e;
      if (!(e <= atol + rtol * fabs(w))) return 0;
    }
    return 1;
  }
  return memcmp(got, want, n * aotrun_dtype_size(t)) == 0;
}

static void check_outputs(const args *a, session *s, int call) {
  for (size_t i = 0; i < s->no && (int)i < a->num_expected; i++) {
    size_t n = 1;
    for (int d = 0; d < s->out_t[i].ndim; d++) n *= (size_t)s->out_shape[i][d];
    double worst;
    if (n * aotrun_dtype_size(s->out_t[i].dtype) != s->want[i].nbytes)
      fail("call %d output %zu: %zu elements, expected file holds %zu bytes",
           call, i, n, s->want[i].nbytes);
    else if (!close_enough(s->out_t[i].dtype, s->out_t[i].data,
                           s->want[i].data, n, a->atol, a->rtol, &worst))
      fail("call %d output %zu differs from %s (max abs error %g)", call, i,
           a->expected[i], worst);
  }
}

static const char *phase(session *s, aotrun_method *m) {
  aotrun_option o;
  if (s->api->get_option(m, "cuda_graph_phase", &o) != AOTRUN_OK) return "?";
  return o.string_value;
}

static aotrun_method *open_method(const args *a, session *s, int graphs) {
  aotrun_option opt = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, graphs ? a->method : ""};
  s->api->set_option(NULL, &opt);
  aotrun_option at_init = {"cuda_graph_capture_at_init", AOTRUN_OPTION_BOOL,
                           a->capture_at_init, 0, NULL};
  if (s->api->set_option(NULL, &at_init) != AOTRUN_OK)
    fail("set_option cuda_graph_capture_at_init: %s",
         s->api->last_error(NULL));
  /* A dynamic program's graph is captured at init only with a graph per
   * shape (the export's shapes take one). */
  aotrun_option shapes = {"cuda_graph_shapes", AOTRUN_OPTION_INT, 0,
                          a->capture_at_init ? a->graphs : 0, NULL};
  if (s->api->set_option(NULL, &shapes) != AOTRUN_OK)
    fail("set_option cuda_graph_shapes: %s", s->api->last_error(NULL));
  aotrun_key_value spec = {"method", a->method};
  aotrun_method *m = NULL;
  if (s->api->init(aotrun_program_dir_host_api(s->dir), s->manifest,
                   s->manifest_size, &spec, 1, &m) != AOTRUN_OK) {
    fail("init: %s", s->api->last_error(NULL));
    return NULL;
  }
  if (prepare_io(a, s, m) != 0) {
    s->api->destroy(m);
    return NULL;
  }
  return m;
}

static int call_once(session *s, aotrun_method *m, int call) {
  aotrun_status st = s->api->execute(m, s->in_t, s->ni, s->out_t, s->no);
  if (st != AOTRUN_OK) {
    fail("call %d: %s", call, s->api->last_error(m));
    return -1;
  }
  return 0;
}

/* Calls 1..n with phase checks: Warmup before call 4, then want_after;
 * with --capture-at-init 1, want_after from init on. */
static void run_calls(const args *a, session *s, aotrun_method *m, int n,
                      const char *want_after) {
  const char *at_init = a->capture_at_init ? want_after : "Warmup";
  if (strcmp(phase(s, m), at_init) != 0)
    fail("after init the phase is %s, expected %s", phase(s, m), at_init);
  else if (a->capture_at_init)
    printf("PASS: phase %s right after init (captured at init)\n", at_init);
  for (int c = 1; c <= n; c++) {
    if (call_once(s, m, c) != 0) return;
    check_outputs(a, s, c);
    const char *p = phase(s, m);
    const char *want = c < 4 && !a->capture_at_init ? "Warmup" : want_after;
    if (strcmp(p, want) != 0)
      fail("after call %d the phase is %s, expected %s", c, p, want);
  }
}

static void mode_shape(const args *a, session *s, aotrun_method *m) {
  run_calls(a, s, m, 4, "Replay");
  int k = a->reshape_input;
  if (k < 0 || (size_t)k >= s->ni) {
    fail("--reshape K:... must name an input");
    return;
  }
  DLTensor saved = s->in_t[k];
  DLTensor t = saved;
  t.ndim = a->reshape_ndim;
  t.shape = (int64_t *)a->reshape;
  char want[256] = "";
  if (t.ndim != saved.ndim)
    snprintf(want, sizeof want, "input %d has %d dims, captured with %d", k,
             t.ndim, saved.ndim);
  else
    for (int d = 0; d < t.ndim && !want[0]; d++)
      if (t.shape[d] != saved.shape[d])
        snprintf(want, sizeof want,
                 "input %d has size %lld in dim %d, captured with %lld", k,
                 (long long)t.shape[d], d, (long long)saved.shape[d]);
  s->in_t[k] = t;
  aotrun_status st = s->api->execute(m, s->in_t, s->ni, s->out_t, s->no);
  s->in_t[k] = saved;
  const char *msg = s->api->last_error(m);
  if (st != AOTRUN_ERR_INVALID_ARGUMENT)
    fail("a reshaped input gave status %d (%s), expected invalid argument",
         (int)st, msg);
  else if (strstr(msg, want) == NULL)
    fail("refusal message \"%s\" does not contain \"%s\"", msg, want);
  else
    printf("PASS: refused: %s\n", msg);
  if (call_once(s, m, 5) == 0) check_outputs(a, s, 5);
}

/* recapture: 4 calls (Replay), then set_option recapture; calls with the
 * --reshape'd input warm up one step, capture and replay the new shape
 * (output 0 is assumed to take the input's shape, as in the dyn4d model,
 * and its values are compared flat); the old shape is then refused because
 * the captured shapes were replaced. */
static void mode_recapture(const args *a, session *s, aotrun_method *m) {
  run_calls(a, s, m, 4, "Replay");
  aotrun_option opt = {"recapture", AOTRUN_OPTION_BOOL, 1, 0, NULL};
  if (s->api->set_option(m, &opt) != AOTRUN_OK) {
    fail("set_option recapture: %s", s->api->last_error(m));
    return;
  }
  if (strcmp(phase(s, m), "Warmup") != 0)
    fail("after recapture the phase is %s, expected Warmup", phase(s, m));
  DLTensor saved_in = s->in_t[0];
  int64_t saved_out[AOTRUN_MAX_DIMS];
  memcpy(saved_out, s->out_shape[0], sizeof saved_out);
  s->in_t[0].ndim = a->reshape_ndim;
  s->in_t[0].shape = (int64_t *)a->reshape;
  s->out_t[0].ndim = a->reshape_ndim;
  memcpy(s->out_shape[0], a->reshape, sizeof(int64_t) * (size_t)a->reshape_ndim);
  const char *want[] = {"Warmup", "Replay", "Replay"};
  for (int c = 0; c < 3; c++) {
    if (call_once(s, m, 5 + c) != 0) break;
    check_outputs(a, s, 5 + c);
    if (strcmp(phase(s, m), want[c]) != 0)
      fail("recapture call %d: phase %s, expected %s", c + 1, phase(s, m),
           want[c]);
  }
  s->in_t[0] = saved_in;
  s->out_t[0].ndim = saved_in.ndim;
  memcpy(s->out_shape[0], saved_out, sizeof saved_out);
  aotrun_status st = s->api->execute(m, s->in_t, s->ni, s->out_t, s->no);
  const char *msg = s->api->last_error(m);
  if (st != AOTRUN_ERR_INVALID_ARGUMENT || strstr(msg, "captured with") == NULL)
    fail("the old shape after recapture gave status %d (%s), expected a "
         "refusal naming the new captured shape", (int)st, msg);
  else
    printf("PASS: recaptured; old shape refused: %s\n", msg);
}

static int64_t weight_copies(session *s, aotrun_method *m) {
  aotrun_option o;
  if (s->api->get_option(m, "weight_copies", &o) != AOTRUN_OK) return -1;
  return o.int_value;
}

static aotrun_method *init_named(session *s, const char *method) {
  aotrun_key_value spec = {"method", method};
  aotrun_method *m = NULL;
  if (s->api->init(aotrun_program_dir_host_api(s->dir), s->manifest,
                   s->manifest_size, &spec, 1, &m) != AOTRUN_OK)
    fail("init %s: %s", method, s->api->last_error(NULL));
  return m;
}

/* share: the weight cache of one program is shared by its methods. Each of
 * --method and --method2 alone holds A and B device copies; loaded together
 * they hold fewer than A + B (the FQNs they share are uploaded once), and
 * --method's outputs stay right while and after --method2 lives. */
static void mode_share(const args *a, session *s, aotrun_method *m) {
  int64_t alone = weight_copies(s, m);
  aotrun_method *other = a->method2 ? init_named(s, a->method2) : NULL;
  if (other == NULL) {
    fail("share needs --method2");
    return;
  }
  int64_t together = weight_copies(s, other);
  s->api->destroy(other);
  s->api->destroy(m);
  other = init_named(s, a->method2);
  int64_t other_alone = other ? weight_copies(s, other) : -1;
  s->api->destroy(other);
  printf("INFO: weight copies: %s alone %lld, %s alone %lld, together %lld\n",
         a->method, (long long)alone, a->method2, (long long)other_alone,
         (long long)together);
  if (alone < 0 || other_alone < 0 || together < 0)
    fail("weight_copies could not be read");
  else if (together >= alone + other_alone || together < alone ||
           together < other_alone)
    fail("the methods do not share their weights: %lld together, %lld + "
         "%lld alone", (long long)together, (long long)alone,
         (long long)other_alone);
  else
    printf("PASS: %s and %s share %lld device copies\n", a->method,
           a->method2, (long long)(alone + other_alone - together));
}

/* ---- shapes: a graph per shape (cuda_graph_shapes) ---- */

/* One handle's outputs for mode shapes: buffers of the largest batch's
 * size, shapes reset to it before every call (the backend writes the real
 * sizes back). */
typedef struct batch_out {
  DLTensor t[MAX_IO];
  int64_t shape[MAX_IO][AOTRUN_MAX_DIMS];
} batch_out;

static void batch_out_init(const session *s, batch_out *o) {
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < s->no; i++) {
    o->t[i] = s->out_t[i];
    size_t bytes = aotrun_dtype_size(s->out_t[i].dtype);
    for (int d = 0; d < s->out_t[i].ndim; d++)
      bytes *= (size_t)s->out_shape[i][d];
    o->t[i].data = calloc(1, bytes ? bytes : 1);
    o->t[i].shape = o->shape[i];
  }
}

static void batch_out_free(const session *s, batch_out *o) {
  for (size_t i = 0; i < s->no; i++) free(o->t[i].data);
}

/* Executes m with every input whose dim 0 is maxb cut to b rows. */
static aotrun_status call_batch(session *s, aotrun_method *m, int64_t maxb,
                                int64_t b, batch_out *o) {
  DLTensor in[MAX_IO];
  int64_t shape[MAX_IO][AOTRUN_MAX_DIMS];
  for (size_t i = 0; i < s->ni; i++) {
    in[i] = s->in_t[i];
    memcpy(shape[i], s->in_t[i].shape, sizeof(int64_t) * (size_t)in[i].ndim);
    if (in[i].ndim > 0 && shape[i][0] == maxb) shape[i][0] = b;
    in[i].shape = shape[i];
  }
  for (size_t i = 0; i < s->no; i++)
    memcpy(o->shape[i], s->out_shape[i], sizeof o->shape[i]);
  return s->api->execute(m, in, s->ni, o->t, s->no);
}

static size_t numel_of(const DLTensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

/* The graph handle's outputs against the no-graph handle's, and against
 * the first rows of --expected. */
static void compare_batch(const args *a, session *s, const batch_out *g,
                          const batch_out *p, int call, int64_t b) {
  for (size_t i = 0; i < s->no; i++) {
    double worst;
    size_t n = numel_of(&g->t[i]);
    if (n != numel_of(&p->t[i]) ||
        memcmp(g->shape[i], p->shape[i],
               sizeof(int64_t) * (size_t)g->t[i].ndim) != 0)
      fail("call %d (batch %lld) output %zu: shape differs from the "
           "no-graph handle's", call, (long long)b, i);
    else if (!close_enough(g->t[i].dtype, g->t[i].data, p->t[i].data, n,
                           a->atol, a->rtol, &worst))
      fail("call %d (batch %lld) output %zu differs from the no-graph "
           "result (max abs error %g)", call, (long long)b, i, worst);
    else if ((int)i < a->num_expected &&
             n * aotrun_dtype_size(g->t[i].dtype) <= s->want[i].nbytes &&
             !close_enough(g->t[i].dtype, g->t[i].data, s->want[i].data, n,
                           a->atol, a->rtol, &worst))
      fail("call %d (batch %lld) output %zu differs from the first rows of "
           "%s (max abs error %g)", call, (long long)b, i, a->expected[i],
           worst);
  }
}

static int distinct_batches(const args *a) {
  int n = 0;
  for (int i = 0; i < a->num_batches; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= a->batches[j] == a->batches[i];
    n += !seen;
  }
  return n;
}

/* After the calls: Replay, and min(distinct, K) graphs reported. */
static void check_graph_report(const args *a, session *s, aotrun_method *g) {
  aotrun_option o;
  if (s->api->get_option(g, "cuda_graph_bytes", &o) != AOTRUN_OK) {
    fail("get_option cuda_graph_bytes: %s", s->api->last_error(g));
    return;
  }
  long held = strtol(o.string_value, NULL, 10);
  int want = distinct_batches(a) < a->graphs ? distinct_batches(a) : a->graphs;
  printf("INFO: cuda_graph_bytes: %s\n", o.string_value);
  if (strcmp(phase(s, g), "Replay") != 0)
    fail("after the calls the phase is %s, expected Replay", phase(s, g));
  if (held != want)
    fail("%ld graphs held, expected %d (%d batches, cuda_graph_shapes %d)",
         held, want, distinct_batches(a), a->graphs);
}

/* Replay time of each batch (its graph is cached when K covers them). */
static void time_batches(const args *a, session *s, aotrun_method *g,
                         int64_t maxb, batch_out *o) {
  for (int i = 0; i < a->num_batches; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= a->batches[j] == a->batches[i];
    if (seen) continue;
    double t0 = now_us();
    for (int k = 0; k < a->iters; k++)
      if (call_batch(s, g, maxb, a->batches[i], o) != AOTRUN_OK) return;
    printf("INFO: batch %lld: %.2f us/call over %d calls (graph replay, host "
           "in/out copies included)\n", (long long)a->batches[i],
           (now_us() - t0) / a->iters, a->iters);
  }
}

static void mode_shapes(const args *a, session *s, aotrun_method *g) {
  int64_t maxb = s->ni > 0 && s->in_t[0].ndim > 0 ? s->in_t[0].shape[0] : 0;
  for (int i = 0; i < a->num_batches; i++)
    if (a->batches[i] > maxb) {
      fail("batch %lld is larger than input 0's dim 0 (%lld)",
           (long long)a->batches[i], (long long)maxb);
      return;
    }
  aotrun_option k = {"cuda_graph_shapes", AOTRUN_OPTION_INT, 0, a->graphs,
                     NULL};
  if (s->api->set_option(g, &k) != AOTRUN_OK) {
    fail("set_option cuda_graph_shapes: %s", s->api->last_error(g));
    return;
  }
  aotrun_option off = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, ""};
  s->api->set_option(NULL, &off);
  aotrun_method *p = init_named(s, a->method);
  if (p == NULL) return;
  batch_out go, po;
  batch_out_init(s, &go);
  batch_out_init(s, &po);
  int calls = a->calls < 24 ? 24 : a->calls;
  for (int c = 0; c < calls; c++) {
    int64_t b = a->batches[c % a->num_batches];
    if (call_batch(s, g, maxb, b, &go) != AOTRUN_OK) {
      fail("call %d (batch %lld): %s", c + 1, (long long)b,
           s->api->last_error(g));
      break;
    }
    if (call_batch(s, p, maxb, b, &po) != AOTRUN_OK) {
      fail("no-graph call %d: %s", c + 1, s->api->last_error(p));
      break;
    }
    compare_batch(a, s, &go, &po, c + 1, b);
  }
  check_graph_report(a, s, g);
  time_batches(a, s, g, maxb, &go);
  batch_out_free(s, &go);
  batch_out_free(s, &po);
  s->api->destroy(p);
}

static double time_calls(session *s, aotrun_method *m, int iters) {
  double t0 = now_us();
  for (int i = 0; i < iters; i++)
    if (call_once(s, m, i) != 0) return -1;
  return (now_us() - t0) / iters;
}

/* Moves every input and output buffer to device memory (device = 1) or
 * back to host memory (device = 0); inputs keep their values. */
static int move_io(session *s, int device) {
  DLTensor *all[2 * MAX_IO];
  size_t n = 0;
  for (size_t i = 0; i < s->ni; i++) all[n++] = &s->in_t[i];
  for (size_t i = 0; i < s->no; i++) all[n++] = &s->out_t[i];
  for (size_t k = 0; k < n; k++) {
    DLTensor *t = all[k];
    size_t bytes = aotrun_dtype_size(t->dtype);
    for (int d = 0; d < t->ndim; d++) bytes *= (size_t)t->shape[d];
    int is_input = k < s->ni;
    if (device) {
      void *d = NULL;
      if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess ||
          (is_input && cudaMemcpy(d, t->data, bytes, cudaMemcpyHostToDevice) !=
                           cudaSuccess)) {
        fail("device io: cudaMalloc/cudaMemcpy of %zu bytes failed", bytes);
        return -1;
      }
      t->data = d;
      t->device = (DLDevice){kDLCUDA, 0};
    } else {
      cudaFree(t->data);
      t->data = is_input ? s->in[k].data : calloc(1, bytes ? bytes : 1);
      t->device = (DLDevice){kDLCPU, 0};
    }
  }
  return 0;
}

/* Like time_calls with device tensors, waiting for the GPU after each
 * call (as the eager PyTorch timing does). */
static double time_device_calls(session *s, aotrun_method *m, int iters) {
  double t0 = now_us();
  for (int i = 0; i < iters; i++) {
    if (call_once(s, m, i) != 0) return -1;
    cudaDeviceSynchronize();
  }
  return (now_us() - t0) / iters;
}

/* no graph vs graph replay with inputs and outputs in device memory. */
static void bench_device_io(const args *a, session *s) {
  double us[2] = {-1, -1};
  for (int graphs = 0; graphs < 2; graphs++) {
    aotrun_method *m = open_method(a, s, graphs);
    if (m == NULL) return;
    if (move_io(s, 1) != 0) {
      s->api->destroy(m);
      return;
    }
    for (int i = 0; i < 10; i++) call_once(s, m, i);
    us[graphs] = time_device_calls(s, m, a->iters);
    s->api->destroy(m);
    move_io(s, 0);
  }
  printf("BENCH: %s: device io: no graph %.2f us/call, graph replay %.2f "
         "us/call (%.2fx), %d iters\n",
         a->method, us[0], us[1], us[1] > 0 ? us[0] / us[1] : 0, a->iters);
}

static void mode_bench(const args *a, session *s) {
  aotrun_method *plain = open_method(a, s, 0);
  if (plain == NULL) return;
  for (int i = 0; i < 10; i++) call_once(s, plain, i);
  double us_plain = time_calls(s, plain, a->iters);
  s->api->destroy(plain);
  aotrun_method *graph = open_method(a, s, 1);
  if (graph == NULL) return;
  for (int i = 0; i < 10; i++) call_once(s, graph, i);
  if (strcmp(phase(s, graph), "Replay") != 0)
    fail("bench: the graph handle is in phase %s, not Replay",
         phase(s, graph));
  double us_graph = time_calls(s, graph, a->iters);
  s->api->destroy(graph);
  printf("BENCH: %s: no graph %.2f us/call, graph replay %.2f us/call "
         "(%.2fx), %d iters, host in/out copies included\n",
         a->method, us_plain, us_graph, us_graph > 0 ? us_plain / us_graph : 0,
         a->iters);
  bench_device_io(a, s);
}

/* ---- mode fullmem ---- */
#define HOG_MAX 8192

typedef struct hog {
  void *blocks[HOG_MAX];
  int n;
} hog;

/* Allocates blocks (1 GiB, then 64 MiB, then 1 MiB) until less than
 * `below` bytes of device memory are free, or until not even 1 MiB can be
 * allocated while less than `enough` bytes are free (on the H200 of
 * 2026-12-06 the 1 MiB blocks ran out above half the weights' size; less
 * than the weights still makes init's refusal the outcome under test).
 * 0 when it got there; *free_out: the free bytes at the end. */
static int hog_until(hog *h, size_t below, size_t enough, size_t *free_out) {
  static const size_t sizes[3] = {(size_t)1 << 30, (size_t)64 << 20,
                                  (size_t)1 << 20};
  for (int k = 0; k < 3; k++) {
    for (;;) {
      size_t free_b = 0, total = 0;
      if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return -1;
      if (free_b < below) return 0;
      if (free_b < below + sizes[k] && k < 2) break; /* a smaller block */
      if (h->n == HOG_MAX ||
          cudaMalloc(&h->blocks[h->n], sizes[k]) != cudaSuccess) {
        (void)cudaGetLastError();
        break;
      }
      h->n++;
    }
  }
  size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return -1;
  *free_out = free_b;
  return free_b < enough ? 0 : -1; /* below < enough */
}

static void hog_free(hog *h) {
  for (int i = 0; i < h->n; i++) cudaFree(h->blocks[i]);
  h->n = 0;
}

static void mode_fullmem(const args *a, session *s) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/weights.safetensors", a->program);
  if (stat(path, &st) != 0 || st.st_size < ((off_t)4 << 20)) {
    fail("fullmem needs a program with at least 4 MiB of weights (%s)", path);
    return;
  }
  static hog h; /* 64 KiB of pointers: not on the stack */
  size_t below = (size_t)st.st_size / 2, left = 0;
  if (hog_until(&h, below, (size_t)st.st_size, &left) != 0) {
    fail("could not fill the device to below %zu free bytes (%zu free "
         "after allocating all it could)",
         (size_t)st.st_size, left);
    hog_free(&h);
    return;
  }
  size_t free_b = 0, total = 0;
  cudaMemGetInfo(&free_b, &total);
  aotrun_key_value spec = {"method", a->method};
  aotrun_method *m = NULL;
  aotrun_status rc = s->api->init(aotrun_program_dir_host_api(s->dir),
                                  s->manifest, s->manifest_size, &spec, 1,
                                  &m);
  const char *msg = rc == AOTRUN_OK ? "" : s->api->last_error(NULL);
  if (rc == AOTRUN_ERR_OUT_OF_MEMORY &&
      strstr(msg, "of device memory for its weights") != NULL)
    printf("PASS: %zu bytes free, %lld bytes of weights: init refused: "
           "%s\n", free_b, (long long)st.st_size, msg);
  else
    fail("%zu bytes free, %lld bytes of weights: init gave status %d (%s), "
         "expected the free-memory refusal",
         free_b, (long long)st.st_size, (int)rc, msg);
  if (m != NULL) s->api->destroy(m);
  hog_free(&h);
  m = NULL;
  rc = s->api->init(aotrun_program_dir_host_api(s->dir), s->manifest,
                    s->manifest_size, &spec, 1, &m);
  if (rc != AOTRUN_OK)
    fail("init with the memory given back: %s", s->api->last_error(NULL));
  else
    printf("PASS: init with the memory given back\n");
  if (m != NULL) s->api->destroy(m);
}

static int run_mode(const args *a, session *s) {
  if (!strcmp(a->mode, "bench")) {
    mode_bench(a, s);
    return 0;
  }
  if (!strcmp(a->mode, "fullmem")) {
    mode_fullmem(a, s);
    return 0;
  }
  aotrun_method *m = open_method(a, s, 1);
  if (m == NULL) return 0;
  if (!strcmp(a->mode, "replay"))
    run_calls(a, s, m, a->calls < 6 ? 6 : a->calls, "Replay");
  else if (!strcmp(a->mode, "retry"))
    run_calls(a, s, m, a->calls < 5 ? 5 : a->calls, "Disabled");
  else if (!strcmp(a->mode, "shape"))
    mode_shape(a, s, m);
  else if (!strcmp(a->mode, "recapture"))
    mode_recapture(a, s, m);
  else if (!strcmp(a->mode, "shapes"))
    mode_shapes(a, s, m);
  else if (!strcmp(a->mode, "share")) {
    run_calls(a, s, m, 2, "Warmup");
    mode_share(a, s, m); /* destroys m */
    aotrun_method *again = open_method(a, s, 0);
    if (again != NULL) {
      if (call_once(s, again, 1) == 0) check_outputs(a, s, 1);
      s->api->destroy(again);
    }
    return 0;
  }
  else {
    s->api->destroy(m);
    return -1;
  }
  s->api->destroy(m);
  if (aotrun_program_dir_num_mapped(s->dir) != 0)
    fail("%zu named data still mapped after destroy",
         aotrun_program_dir_num_mapped(s->dir));
  return 0;
}

int main(int argc, char **argv) {
  args a;
  if (parse_args(argc, argv, &a) != 0) return usage();
  aotrun_backend *backend = NULL;
  if (aotrun_backend_open(a.plugin, AOTRUN_ABI_VERSION, &backend) != AOTRUN_OK) {
    printf("FAIL: %s\n", aotrun_host_last_error());
    return 1;
  }
  session s;
  memset(&s, 0, sizeof s);
  s.api = aotrun_backend_table(backend);
  char reason[256];
  if (!s.api->is_available(reason, sizeof reason)) {
    printf("SKIP: no usable GPU: %s\n", reason);
    aotrun_backend_close(backend);
    return EXIT_SKIP;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", a.program);
  s.manifest = read_file(path, &s.manifest_size);
  int32_t level = AOTRUN_LOG_INFO;
  if (s.manifest == NULL) {
    fail("cannot read %s", path);
  } else if (aotrun_program_dir_open(a.program, &s.dir) != AOTRUN_OK) {
    fail("%s", aotrun_host_last_error());
  } else {
    aotrun_log_level_parse(a.log, &level);
    aotrun_program_dir_set_log_level(s.dir, level);
    if (run_mode(&a, &s) != 0) {
      aotrun_program_dir_close(s.dir);
      aotrun_backend_close(backend);
      return usage();
    }
  }
  for (size_t i = 0; i < MAX_IO; i++) {
    aotrun_npy_free(&s.in[i]);
    aotrun_npy_free(&s.want[i]);
    free(s.out_t[i].data);
  }
  aotrun_program_dir_close(s.dir);
  free(s.manifest);
  aotrun_backend_close(backend);
  if (g_failures == 0) printf("PASS: %s %s\n", a.mode, a.method);
  return g_failures ? 1 : 0;
}
