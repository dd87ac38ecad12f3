/*
 * minimal_plugin.c: the smallest complete aotrun backend plugin, a "scale"
 * backend (the example of docs/plugin-abi.md).
 *
 *   processed bytes  an ASCII float factor, e.g. "2.5". When they are not a
 *                    number (e.g. a program manifest from `aotrun run`), the
 *                    factor is read from the named data "factor.txt".
 *   execute          y = x * factor + offset, one float32 rank-1 input and
 *                    one float32 output in host memory.
 *   options          "offset" (INT, added to every output) and "label"
 *                    (STRING), per handle; method NULL sets the defaults
 *                    for handles created afterwards.
 *
 * With -DMINIMAL_GPU_TIMING (the _gpu_timing variant) it also has the CUDA
 * backend's timing options: "gpu_timing" (BOOL, per handle) and, read-only,
 * "last_gpu_time_ns" (INT): a made-up time of the last call, 2000 + 100 *
 * (call % 5) ns, and -1 (unknown) for every 4th call or with timing off.
 *
 * With -DMINIMAL_LOG_LEVEL (the _log_level variant) it has the CUDA
 * backend's backend-wide STRING option "log_level" and its init logs
 * "minimal: init, log level debug" at DEBUG when that level is "debug".
 *
 * With -DMINIMAL_FAKE_CUDA (the _fake_cuda variants, named "cuda": `aotrun
 * demo`'s CUDA part on a CPU) it also takes kDLCUDA tensors (their memory is
 * host memory from testing/plugins/fake_cudart.c), the per-handle STRING
 * option "enable_cuda_graph_for_method" and, read-only, "cuda_graph_phase":
 * Disabled, Warmup for the first MINIMAL_GRAPH_WARMUP calls after graphs
 * were enabled, then Replay (never Replay with -DMINIMAL_NO_REPLAY).
 *
 * ABI 1.1: it offers one extension through get_extension,
 * "minimal.stats.v1" (minimal_ext.h). Built with -DMINIMAL_ABI_1_0_HEADER it
 * is a genuine 1.0 plugin, compiled against the frozen 1.0 header.
 *
 * The test variants in testing/plugins/BUILD are built from this file with
 * -D flags (MINIMAL_*); a real plugin would not have them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef MINIMAL_ABI_1_0_HEADER /* built against the header as released in 1.0 */
#include "testing/plugins/abi_1_0/aotrun_plugin_1_0.h"
#else
#include "plugin_api/aotrun_plugin.h"
#endif

#ifndef MINIMAL_NAME
#define MINIMAL_NAME "minimal"
#endif
#ifndef MINIMAL_BIAS /* the _b variant adds a bias so tests see who ran */
#define MINIMAL_BIAS 0.0f
#endif
#ifndef MINIMAL_MAX_FACTOR /* the _b variant refuses large factors */
#define MINIMAL_MAX_FACTOR 1e30
#endif
#ifndef MINIMAL_ABI_MAJOR
#define MINIMAL_ABI_MAJOR AOTRUN_ABI_VERSION_MAJOR
#endif
#ifndef MINIMAL_ABI_MINOR
#define MINIMAL_ABI_MINOR AOTRUN_ABI_VERSION_MINOR
#endif

#define LABEL_SIZE 64
#define ERROR_SIZE 256

struct aotrun_method {
  float factor;
  int64_t offset;
  char label[LABEL_SIZE];
  char error[ERROR_SIZE]; /* last_error(method) */
  int32_t gpu_timing;     /* MINIMAL_GPU_TIMING only */
  int64_t calls;
  int32_t graphs;         /* MINIMAL_FAKE_CUDA only: enabled, */
  int64_t graph_calls;    /* and calls since */
};

#define MINIMAL_GRAPH_WARMUP 4 /* the CUDA backend's 3 + the capture */

/* last_error(NULL): failed init (and backend-wide calls), per thread. */
static _Thread_local char g_error[ERROR_SIZE];
/* Backend-wide option defaults (set them before creating handles). */
static int64_t g_offset;
#ifdef MINIMAL_LOG_LEVEL
static int g_log_debug; /* backend-wide option log_level is "debug" */
#endif
static char g_label[LABEL_SIZE] = MINIMAL_NAME;

/* Records an error for `m` (NULL: this thread) and returns the code. */
static aotrun_status fail(aotrun_method *m, aotrun_status code,
                          const char *msg, const char *what) {
  snprintf(m ? m->error : g_error, ERROR_SIZE, "%s%s", msg, what);
  return code;
}

static const char *get_name(void) { return MINIMAL_NAME; }

static int32_t is_available(char *reason, size_t reason_size) {
#ifdef MINIMAL_UNAVAILABLE /* a variant that can never run */
  snprintf(reason, reason_size, "no scaling hardware (test variant)");
  return 0;
#else
  if (reason_size > 0) reason[0] = '\0';
  return 1;
#endif
}

/* Parses "2.5" (surrounding whitespace allowed) into *out. */
static int parse_factor(const void *bytes, size_t size, float *out) {
  char text[64], *end;
  if (bytes == NULL || size == 0 || size >= sizeof text) return 0;
  memcpy(text, bytes, size);
  text[size] = '\0';
  double v = strtod(text, &end);
  while (*end == ' ' || *end == '\n') end++;
  if (end == text || *end != '\0') return 0;
  *out = (float)v;
  return 1;
}

/* The factor from the named data "factor.txt" of the host. */
static aotrun_status factor_from_host(const aotrun_host_api *host,
                                      float *out) {
  const void *data;
  size_t size;
  void *token;
  if (host == NULL || host->get_named_data == NULL)
    return fail(NULL, AOTRUN_ERR_INVALID_ARGUMENT,
                "processed bytes are not a factor and the host serves no "
                "named data", "");
  aotrun_status s =
      host->get_named_data(host->ctx, "factor.txt", &data, &size, &token);
  if (s != AOTRUN_OK)
    return fail(NULL, s, "processed bytes are not a factor and named data ",
                "'factor.txt' is not available");
  int ok = parse_factor(data, size, out);
  host->release_named_data(host->ctx, token); /* we copied what we need */
  return ok ? AOTRUN_OK
            : fail(NULL, AOTRUN_ERR_INVALID_ARGUMENT,
                   "named data 'factor.txt' is not a number", "");
}

#ifdef MINIMAL_BAD_INIT
/* The _bad_init variant breaks two init rules at once: it leaves a handle
 * in *out although it fails, and with a status no header knows. */
static struct aotrun_method *const g_bogus = (struct aotrun_method *)&g_offset;
#define MINIMAL_BAD_INIT_STATUS 42
#endif

static aotrun_status init(const aotrun_host_api *host, const void *processed,
                          size_t processed_size, const aotrun_key_value *specs,
                          size_t num_specs, aotrun_method **out) {
  (void)specs; /* a scale needs no compile spec */
  (void)num_specs;
  *out = NULL;
#ifdef MINIMAL_BAD_INIT
  (void)host;
  (void)processed;
  (void)processed_size;
  *out = g_bogus;
  return fail(NULL, MINIMAL_BAD_INIT_STATUS, "init fails on purpose in ",
              MINIMAL_NAME);
#endif
  float factor;
  if (!parse_factor(processed, processed_size, &factor)) {
    aotrun_status s = factor_from_host(host, &factor);
    if (s != AOTRUN_OK) return s;
  }
  if (factor > MINIMAL_MAX_FACTOR || factor < -MINIMAL_MAX_FACTOR)
    return fail(NULL, AOTRUN_ERR_NOT_SUPPORTED,
                "factor out of range for backend ", MINIMAL_NAME);
  aotrun_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return fail(NULL, AOTRUN_ERR_OUT_OF_MEMORY, "out of memory", "");
  m->factor = factor;
#ifdef MINIMAL_LOG_LEVEL
  if (g_log_debug && host != NULL && host->log != NULL)
    host->log(host->ctx, AOTRUN_LOG_DEBUG, "minimal: init, log level debug");
#endif
  m->offset = g_offset;
  memcpy(m->label, g_label, LABEL_SIZE);
  *out = m;
  return AOTRUN_OK;
}

/* A host-memory, float32, rank-1, contiguous tensor? (With
 * MINIMAL_FAKE_CUDA kDLCUDA too: its memory is host memory.) */
static int is_host_f32_vector(const DLTensor *t) {
#ifdef MINIMAL_FAKE_CUDA
  int device_ok = t->device.device_type == kDLCPU ||
                  t->device.device_type == kDLCUDA;
#else
  int device_ok = t->device.device_type == kDLCPU;
#endif
  return device_ok && t->dtype.code == kDLFloat &&
         t->dtype.bits == 32 && t->dtype.lanes == 1 && t->ndim == 1 &&
         t->shape != NULL &&
#if AOTRUN_ABI_VERSION_MINOR >= 1 /* the ABI's rule: NULL or row-major */
         aotrun_strides_are_row_major(t->ndim, t->shape, t->strides);
#else
         (t->strides == NULL || t->strides[0] == 1);
#endif
}

static aotrun_status execute(aotrun_method *m, const DLTensor *inputs,
                             size_t num_inputs, DLTensor *outputs,
                             size_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1)
    return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                "expected 1 input and 1 output", "");
  const DLTensor *x = &inputs[0];
  DLTensor *y = &outputs[0];
  if (!is_host_f32_vector(x))
    return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                "input 0 (x) must be a contiguous float32 vector in host "
                "memory", "");
  if (!is_host_f32_vector(y) || y->shape[0] < x->shape[0])
    return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                "output 0 (y) must be a float32 host vector at least as long "
                "as x", "");
  const float *in = (const float *)((const char *)x->data + x->byte_offset);
  float *o = (float *)((char *)y->data + y->byte_offset);
  for (int64_t i = 0; i < x->shape[0]; i++)
    o[i] = in[i] * m->factor + (float)m->offset + MINIMAL_BIAS;
  y->shape[0] = x->shape[0]; /* the dynamic dim's actual size */
  m->calls++;
  m->graph_calls += m->graphs;
  return AOTRUN_OK;
}

#if AOTRUN_ABI_VERSION_MINOR >= 1 || defined(MINIMAL_BAD_INIT)
static void unload_event(int event);
#endif
#define MINIMAL_EVENT_DEINIT 1
#define MINIMAL_EVENT_BOGUS_DESTROY 2

static void destroy(aotrun_method *m) {
#ifdef MINIMAL_BAD_INIT
  if (m == g_bogus) { /* the handle a failed init left: never ours to free */
    unload_event(MINIMAL_EVENT_BOGUS_DESTROY);
    return;
  }
#endif
  free(m);
}

static aotrun_status set_option(aotrun_method *m, const aotrun_option *opt) {
  int64_t *offset = m ? &m->offset : &g_offset;
  char *label = m ? m->label : g_label;
#ifdef MINIMAL_LOG_LEVEL
  if (m == NULL && strcmp(opt->key, "log_level") == 0) {
    if (opt->type != AOTRUN_OPTION_STRING || opt->string_value == NULL)
      return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                  "option 'log_level' is STRING", "");
    g_log_debug = strcasecmp(opt->string_value, "debug") == 0;
    return AOTRUN_OK;
  }
#endif
  if (strcmp(opt->key, "offset") == 0) {
    if (opt->type != AOTRUN_OPTION_INT)
      return fail(m, AOTRUN_ERR_INVALID_ARGUMENT, "option 'offset' is INT",
                  "");
    *offset = opt->int_value;
  } else if (strcmp(opt->key, "label") == 0) {
    if (opt->type != AOTRUN_OPTION_STRING || opt->string_value == NULL)
      return fail(m, AOTRUN_ERR_INVALID_ARGUMENT, "option 'label' is STRING",
                  "");
    snprintf(label, LABEL_SIZE, "%s", opt->string_value); /* we copy it */
#ifdef MINIMAL_GPU_TIMING
  } else if (m != NULL && strcmp(opt->key, "gpu_timing") == 0) {
    if (opt->type != AOTRUN_OPTION_BOOL)
      return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                  "option 'gpu_timing' is BOOL", "");
    m->gpu_timing = opt->bool_value;
#endif
#ifdef MINIMAL_FAKE_CUDA
  } else if (m != NULL &&
             strcmp(opt->key, "enable_cuda_graph_for_method") == 0) {
    if (opt->type != AOTRUN_OPTION_STRING || opt->string_value == NULL)
      return fail(m, AOTRUN_ERR_INVALID_ARGUMENT,
                  "option 'enable_cuda_graph_for_method' is STRING", "");
    m->graphs = strcmp(opt->string_value, "forward") == 0;
    m->graph_calls = 0;
#endif
  } else {
    return fail(m, AOTRUN_ERR_NOT_FOUND, "unknown option ", opt->key);
  }
  return AOTRUN_OK;
}

static aotrun_status get_option(aotrun_method *m, const char *key,
                                aotrun_option *out) {
  memset(out, 0, sizeof *out);
  if (strcmp(key, "offset") == 0) {
    out->key = "offset";
    out->type = AOTRUN_OPTION_INT;
    out->int_value = m ? m->offset : g_offset;
  } else if (strcmp(key, "label") == 0) {
    out->key = "label";
    out->type = AOTRUN_OPTION_STRING;
    out->string_value = m ? m->label : g_label; /* ours until next set */
#ifdef MINIMAL_GPU_TIMING
  } else if (m != NULL && strcmp(key, "last_gpu_time_ns") == 0) {
    out->key = "last_gpu_time_ns";
    out->type = AOTRUN_OPTION_INT;
    out->int_value = !m->gpu_timing || m->calls == 0 || m->calls % 4 == 0
                         ? -1
                         : 2000 + 100 * (m->calls % 5);
#endif
#ifdef MINIMAL_FAKE_CUDA
  } else if (m != NULL && strcmp(key, "cuda_graph_phase") == 0) {
    out->key = "cuda_graph_phase";
    out->type = AOTRUN_OPTION_STRING;
    int replay = m->graph_calls >= MINIMAL_GRAPH_WARMUP;
#ifdef MINIMAL_NO_REPLAY
    replay = 0;
#endif
    out->string_value = !m->graphs ? "Disabled" : replay ? "Replay" : "Warmup";
#endif
  } else {
    return fail(m, AOTRUN_ERR_NOT_FOUND, "unknown option ", key);
  }
  return AOTRUN_OK;
}

static aotrun_status get_num_io(const aotrun_method *m, int32_t kind,
                                size_t *count) {
  (void)m;
  (void)kind;
  *count = 1; /* one input, one output */
  return AOTRUN_OK;
}

static aotrun_status get_io_info(const aotrun_method *m, int32_t kind,
                                 size_t index, aotrun_io_info *out) {
  if (index != 0)
    return fail((aotrun_method *)m, AOTRUN_ERR_NOT_FOUND,
                "io index out of range (one input, one output)", "");
  /* Fill only what the caller's struct holds (it may be an older one) and,
   * from 1.1 on, report that size: min(caller's, ours). */
  aotrun_io_info info = {.struct_size = out->struct_size, .ndim = 1};
  info.name = kind == AOTRUN_IO_INPUT ? "x" : "y";
  info.dtype = (DLDataType){kDLFloat, 32, 1};
  info.shape[0] = AOTRUN_DYNAMIC_DIM;
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
#if AOTRUN_ABI_VERSION_MINOR >= 1
  info.struct_size = (uint32_t)n;
#endif
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

static const char *last_error(const aotrun_method *m) {
  return m ? m->error : g_error;
}

#if AOTRUN_ABI_VERSION_MINOR >= 1
/* The extension "minimal.stats.v1". Its layout is also declared for hosts
 * in testing/plugins/minimal_ext.h (this file stays a one-file plugin that
 * needs only aotrun_plugin.h); the tests check that both agree. */
#define MINIMAL_EXT_STATS_V1 "minimal.stats.v1"
typedef struct minimal_stats_v1 {
  uint32_t struct_size;
  int64_t (*call_count)(const aotrun_method *method);
  const char *(*backend)(void);
} minimal_stats_v1;

static int64_t stats_call_count(const aotrun_method *m) {
  return m ? m->calls : -1;
}

static const minimal_stats_v1 kStats = {
    .struct_size = sizeof(minimal_stats_v1),
    .call_count = stats_call_count,
    .backend = get_name,
};

/* The extension "minimal.unload.v1" (minimal_ext.h): a test host sees
 * deinit and a destroy of the bogus handle through a hook it sets. */
#define MINIMAL_EXT_UNLOAD_V1 "minimal.unload.v1"
typedef struct minimal_unload_v1 {
  uint32_t struct_size;
  void (*set_hook)(void (*hook)(void *ctx, int event), void *ctx);
} minimal_unload_v1;

static void (*g_hook)(void *ctx, int event);
static void *g_hook_ctx;

static void set_hook(void (*hook)(void *ctx, int event), void *ctx) {
  g_hook = hook;
  g_hook_ctx = ctx;
}

static const minimal_unload_v1 kUnload = {
    .struct_size = sizeof(minimal_unload_v1),
    .set_hook = set_hook,
};

/* 1.1: two extensions. Variants that fake a 1.0 table keep the pointer set
 * but leave it outside struct_size: a host that reads it anyway is caught
 * by the tests (it would find the extension). */
static void *get_extension(const char *name) {
  if (name != NULL && strcmp(name, MINIMAL_EXT_STATS_V1) == 0)
    return (void *)&kStats;
  if (name != NULL && strcmp(name, MINIMAL_EXT_UNLOAD_V1) == 0)
    return (void *)&kUnload;
  return NULL;
}

/* 1.1: nothing process-wide to free; tells the test host it ran. The
 * variants with a 1.0 struct_size keep it outside: never called. */
static void deinit(const aotrun_backend_api *self) {
  (void)self;
  unload_event(MINIMAL_EVENT_DEINIT);
}

static void unload_event(int event) {
  if (g_hook != NULL) g_hook(g_hook_ctx, event);
}
#elif defined(MINIMAL_BAD_INIT)
static void unload_event(int event) { (void)event; }
#endif

#ifdef MINIMAL_EXTRA_MEMBER
/* A member appended by a newer minor that this host may not know. */
static const char *get_build_info(void) { return "minimal, newer minor"; }
#endif

#ifndef MINIMAL_STRUCT_SIZE /* variants that fake an older/smaller table */
#define MINIMAL_STRUCT_SIZE sizeof kTable /* the whole table */
#endif
#ifndef MINIMAL_IO_INFO /* a variant leaves this required member NULL */
#define MINIMAL_IO_INFO get_io_info
#endif

/* The table: v1.0 members, then (newer minor) the appended ones. */
static const struct {
  aotrun_backend_api api;
#ifdef MINIMAL_EXTRA_MEMBER
  const char *(*get_build_info)(void);
#endif
} kTable = {
    .api =
        {
            .abi_version =
                AOTRUN_MAKE_VERSION(MINIMAL_ABI_MAJOR, MINIMAL_ABI_MINOR),
            .struct_size = (uint32_t)(MINIMAL_STRUCT_SIZE),
            .get_name = get_name,
            .is_available = is_available,
            .init = init,
            .execute = execute,
            .destroy = destroy,
            .set_option = set_option,
            .get_option = get_option,
            .get_num_io = get_num_io,
            .get_io_info = MINIMAL_IO_INFO,
            .last_error = last_error,
#if AOTRUN_ABI_VERSION_MINOR >= 1
            .get_extension = get_extension,
            .deinit = deinit,
#endif
        },
#ifdef MINIMAL_EXTRA_MEMBER
    .get_build_info = get_build_info,
#endif
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  *out = NULL;
#ifndef MINIMAL_SKIP_VERSION_CHECK /* the _major2 variant trusts the host */
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != MINIMAL_ABI_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
#else
  (void)host_abi_version;
#endif
  *out = &kTable.api;
  return AOTRUN_OK;
}
