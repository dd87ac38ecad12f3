/*
 * gpu_unload_check.c: aotrun_gpu_unload_check, the GPU test of unloading
 * the CUDA backend (ABI 1.1 deinit, issue 17). Loads the plugin through the
 * host library, runs a program (CUDA graphs on: warm-up, capture, replays;
 * one more call from a second thread, which lives on until after the
 * unload), unloads it, and does that --rounds times in one process.
 *
 *   aotrun_gpu_unload_check PLUGIN.so PROGRAM_DIR unload
 *       --input X.npy ... --expected Y.npy ... [--rounds N] [--method M]
 *
 * Checks: every call's outputs match --expected (1e-4 abs + rel, float;
 * other dtypes exactly); after each unload the plugin is no longer mapped;
 * the device's free memory (cudaMemGetInfo) after every round is within
 * 16 MiB of what it was after round 2, and the process's RSS after the last
 * round is within 32 MiB of what it was after round 10. Round 1 also
 * checks the rules: registry_destroy with the method open is refused and
 * changes nothing; a failed execute (an argument error: a wrong dtype)
 * leaves the handle usable; a failed get_io_info sets a message.
 * Prints "INFO: ..." figures and "PASS: ..." / "FAIL: ..." lines; exit 0
 * pass, 1 fail, 2 usage, 77 skip (no GPU).
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/npy.h"

#define MAX_IO 32
#define EXIT_SKIP 77
#define MIB ((size_t)1 << 20)

typedef struct args {
  const char *plugin, *program, *method;
  const char *inputs[MAX_IO], *expected[MAX_IO];
  int num_inputs, num_expected, rounds;
} args;

typedef struct io {
  aotrun_npy in[MAX_IO], want[MAX_IO];
  DLTensor in_t[MAX_IO], out_t[MAX_IO];
  int64_t out_shape[MAX_IO][AOTRUN_MAX_DIMS];
  size_t ni, no;
} io;

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
          "usage: aotrun_gpu_unload_check PLUGIN.so PROGRAM_DIR unload "
          "--input X.npy ... --expected Y.npy ... [--rounds N] "
          "[--method M]\n");
  return 2;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->method = "forward";
  a->rounds = 100;
  if (argc < 4 || strcmp(argv[3], "unload") != 0) return -1;
  a->plugin = argv[1];
  a->program = argv[2];
  for (int i = 4; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) return -1;
    if (!strcmp(argv[i], "--input") && a->num_inputs < MAX_IO)
      a->inputs[a->num_inputs++] = v;
    else if (!strcmp(argv[i], "--expected") && a->num_expected < MAX_IO)
      a->expected[a->num_expected++] = v;
    else if (!strcmp(argv[i], "--rounds"))
      a->rounds = atoi(v);
    else if (!strcmp(argv[i], "--method"))
      a->method = v;
    else
      return -1;
    i++;
  }
  return a->rounds >= 3 ? 0 : -1;
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

static size_t rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  fclose(f);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t device_free_bytes(void) {
  size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 0;
  return free_b;
}

static int plugin_is_loaded(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h != NULL) dlclose(h);
  return h != NULL;
}

/* Reads the .npy files once; sizes the outputs from --expected. */
static int load_io(const args *a, io *t) {
  t->ni = (size_t)a->num_inputs;
  t->no = (size_t)a->num_expected;
  for (size_t i = 0; i < t->ni; i++) {
    if (aotrun_npy_read(a->inputs[i], &t->in[i]) != AOTRUN_OK) goto bad;
    t->in_t[i] = (DLTensor){t->in[i].data,
                            {kDLCPU, 0},
                            t->in[i].ndim,
                            t->in[i].dtype,
                            t->in[i].shape,
                            NULL,
                            0};
  }
  for (size_t i = 0; i < t->no; i++) {
    if (aotrun_npy_read(a->expected[i], &t->want[i]) != AOTRUN_OK) goto bad;
    memcpy(t->out_shape[i], t->want[i].shape, sizeof t->out_shape[i]);
    t->out_t[i] = (DLTensor){calloc(1, t->want[i].nbytes + 1),
                             {kDLCPU, 0},
                             t->want[i].ndim,
                             t->want[i].dtype,
                             t->out_shape[i],
                             NULL,
                             0};
  }
  return 0;
bad:
  fail("%s", aotrun_host_last_error());
  return -1;
}

static void free_io(io *t) {
  for (size_t i = 0; i < MAX_IO; i++) {
    aotrun_npy_free(&t->in[i]);
    aotrun_npy_free(&t->want[i]);
    free(t->out_t[i].data);
  }
}

static int outputs_match(const io *t) {
  for (size_t i = 0; i < t->no; i++) {
    const DLTensor *o = &t->out_t[i];
    size_t n = t->want[i].nbytes / aotrun_dtype_size(o->dtype);
    if (o->dtype.code == kDLFloat &&
        (o->dtype.bits == 32 || o->dtype.bits == 64)) {
      for (size_t k = 0; k < n; k++) {
        double g = o->dtype.bits == 32 ? ((const float *)o->data)[k]
                                       : ((const double *)o->data)[k];
        double w = o->dtype.bits == 32 ? ((const float *)t->want[i].data)[k]
                                       : ((const double *)t->want[i].data)[k];
        if (!(fabs(g - w) <= 1e-4 + 1e-4 * fabs(w))) return 0;
      }
    } else if (memcmp(o->data, t->want[i].data, t->want[i].nbytes) != 0) {
      return 0;
    }
  }
  return 1;
}

static int call(aotrun_host_method *m, io *t, const char *what) {
  if (aotrun_host_method_execute(m, t->in_t, t->ni, t->out_t, t->no) !=
      AOTRUN_OK) {
    fail("%s: %s", what, aotrun_host_last_error());
    return -1;
  }
  if (!outputs_match(t)) {
    fail("%s: outputs differ from --expected", what);
    return -1;
  }
  return 0;
}

/* A second thread: one call (its own cuBLAS handles), then it waits until
 * the plugin is unloaded and exits (its thread-exit destructors must not
 * touch what deinit freed). */
typedef struct worker {
  aotrun_host_method *m;
  io *t;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int called, unloaded;
} worker;

static void *worker_main(void *p) {
  worker *w = p;
  (void)call(w->m, w->t, "call from a second thread");
  pthread_mutex_lock(&w->mu);
  w->called = 1;
  pthread_cond_broadcast(&w->cv);
  while (!w->unloaded) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Round 1's rule checks, on an open method. */
static void check_rules(aotrun_registry *r, aotrun_host_method *m, io *t) {
  if (aotrun_registry_destroy(r) != AOTRUN_ERR_INVALID_ARGUMENT)
    fail("registry_destroy with an open method was not refused");
  aotrun_io_info info;
  if (aotrun_host_method_io_info(m, AOTRUN_IO_OUTPUT, 999, &info) ==
          AOTRUN_OK ||
      aotrun_host_last_error()[0] == '\0')
    fail("get_io_info of output 999: no error or no message");
  DLDataType keep = t->in_t[0].dtype;
  t->in_t[0].dtype = (DLDataType){kDLInt, 8, 1};
  aotrun_status s =
      aotrun_host_method_execute(m, t->in_t, t->ni, t->out_t, t->no);
  t->in_t[0].dtype = keep;
  if (s != AOTRUN_ERR_INVALID_ARGUMENT)
    fail("execute with an int8 input 0: status %d, not invalid argument",
         (int)s);
  else
    printf("INFO: unload: refused as it should: %s\n",
           aotrun_host_last_error());
  (void)call(m, t, "call after a failed execute");
}

static void one_round(const args *a, int round, io *t, const char *manifest,
                      size_t manifest_size) {
  aotrun_registry *r = NULL;
  aotrun_program_dir *dir = NULL;
  aotrun_host_method *m = NULL;
  const aotrun_backend *b = NULL;
  aotrun_key_value spec = {"method", a->method};
  aotrun_option graphs = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                          0, 0, a->method};
  if (aotrun_registry_create(&r) != AOTRUN_OK ||
      aotrun_registry_load(r, a->plugin, &b) != AOTRUN_OK ||
      aotrun_backend_set_option(b, &graphs) != AOTRUN_OK ||
      aotrun_program_dir_open(a->program, &dir) != AOTRUN_OK ||
      aotrun_host_method_open(r, "cuda", aotrun_program_dir_host_api(dir),
                              manifest, manifest_size, &spec, 1,
                              &m) != AOTRUN_OK) {
    fail("round %d: %s", round, aotrun_host_last_error());
  } else {
    for (int c = 1; c <= 5 && g_failures == 0;
         c++) /* warm-up, capture, replay */
      (void)call(m, t, "call");
    if (round == 0) check_rules(r, m, t);
  }
  worker w = {m, t, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  pthread_t th;
  int started = m != NULL && pthread_create(&th, NULL, worker_main, &w) == 0;
  if (started) {
    pthread_mutex_lock(&w.mu);
    while (!w.called) pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
  }
  aotrun_host_method_close(m);
  aotrun_program_dir_close(dir);
  if (aotrun_registry_destroy(r) != AOTRUN_OK)
    fail("round %d: registry_destroy: %s", round, aotrun_host_last_error());
  if (plugin_is_loaded(a->plugin))
    fail("round %d: %s is still mapped after registry_destroy", round,
         a->plugin);
  if (started) {
    pthread_mutex_lock(&w.mu);
    w.unloaded = 1;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(th, NULL);
  }
}

int main(int argc, char **argv) {
  args a;
  if (parse_args(argc, argv, &a) != 0) return usage();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP: no usable GPU\n");
    return EXIT_SKIP;
  }
  (void)cudaSetDevice(0);
  (void)cudaFree(NULL); /* the primary context, before any measure */
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", a.program);
  size_t manifest_size = 0;
  char *manifest = read_file(path, &manifest_size);
  io t;
  memset(&t, 0, sizeof t);
  if (manifest == NULL) fail("cannot read %s", path);
  if (manifest != NULL && load_io(&a, &t) == 0) {
    size_t free0 = device_free_bytes(), free_base = 0, rss_base = 0;
    for (int round = 0; round < a.rounds && g_failures == 0; round++) {
      one_round(&a, round, &t, manifest, manifest_size);
      size_t free_now = device_free_bytes();
      if (round == 0)
        printf(
            "INFO: unload: device memory after round 1: %.1f MiB less free "
            "than "
            "before (code loaded once)\n",
            ((double)free0 - (double)free_now) / MIB);
      if (round == 1) free_base = free_now;
      if (round == 9) rss_base = rss_bytes();
      if (round > 1 && free_now + 16 * MIB < free_base)
        fail("round %d: %.1f MiB less device memory free than after round 2",
             round + 1, ((double)free_base - (double)free_now) / MIB);
    }
    if (g_failures == 0) {
      double drift = ((double)free_base - (double)device_free_bytes()) / MIB;
      double grew = ((double)rss_bytes() - (double)rss_base) / MIB;
      printf(
          "INFO: unload: %d rounds: device memory drift %.1f MiB (round 2 to "
          "last), RSS growth %.1f MiB (round 10 to last)\n",
          a.rounds, drift, grew);
      if (a.rounds > 10 && grew > 32)
        fail("RSS grew %.1f MiB from round 10 to round %d", grew, a.rounds);
    }
  }
  free_io(&t);
  free(manifest);
  if (g_failures == 0) printf("PASS: unload %s x%d\n", a.method, a.rounds);
  return g_failures ? 1 : 0;
}
