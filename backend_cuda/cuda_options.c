/* cuda_options.c: the CUDA backend's option table (see cuda_options.h). */
#include "backend_cuda/cuda_options.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "aot_loader/placement_setting.h"

/* Where a key may be set / read. */
#define WHERE_BACKEND 1
#define WHERE_METHOD 2
#define WHERE_BOTH (WHERE_BACKEND | WHERE_METHOD)

typedef struct option_desc {
  const char *key;
  int32_t type;
  int set_where;
  int get_where;
} option_desc;

static const option_desc kOptions[AOTRUN_CUDA_OPT_COUNT] = {
    [AOTRUN_CUDA_OPT_GRAPH_METHODS] = {"enable_cuda_graph_for_method",
                                       AOTRUN_OPTION_STRING, WHERE_BOTH,
                                       WHERE_BOTH},
    [AOTRUN_CUDA_OPT_SHARED_STREAM] = {"shared_stream", AOTRUN_OPTION_BOOL,
                                       WHERE_BOTH, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_SHARE_WEIGHTS] = {"share_weights", AOTRUN_OPTION_BOOL,
                                       WHERE_BACKEND, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_LOG_LEVEL] = {"log_level", AOTRUN_OPTION_STRING,
                                   WHERE_BOTH, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_RECAPTURE] = {"recapture", AOTRUN_OPTION_BOOL,
                                   WHERE_METHOD, 0},
    [AOTRUN_CUDA_OPT_GRAPH_PHASE] = {"cuda_graph_phase", AOTRUN_OPTION_STRING,
                                     0, WHERE_METHOD},
    [AOTRUN_CUDA_OPT_WEIGHT_COPIES] = {"weight_copies", AOTRUN_OPTION_INT, 0,
                                       WHERE_METHOD},
    [AOTRUN_CUDA_OPT_GPU_TIMING] = {"gpu_timing", AOTRUN_OPTION_BOOL,
                                    WHERE_METHOD, WHERE_METHOD},
    [AOTRUN_CUDA_OPT_LAST_GPU_TIME] = {"last_gpu_time_ns", AOTRUN_OPTION_INT,
                                       0, WHERE_METHOD},
    [AOTRUN_CUDA_OPT_GRAPH_SHAPES] = {"cuda_graph_shapes", AOTRUN_OPTION_INT,
                                      WHERE_BOTH, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_BYTES] = {"cuda_graph_bytes", AOTRUN_OPTION_STRING,
                                     0, WHERE_METHOD},
    [AOTRUN_CUDA_OPT_LIBRARY_TEMP_FILE] = {"library_temp_file",
                                           AOTRUN_OPTION_BOOL, WHERE_BACKEND,
                                           WHERE_BOTH},
    [AOTRUN_CUDA_OPT_LOAD_REPORT] = {"load_report", AOTRUN_OPTION_STRING, 0,
                                     WHERE_METHOD},
    [AOTRUN_CUDA_OPT_WARM_UP] = {"warm_up", AOTRUN_OPTION_BOOL, WHERE_BACKEND,
                                 WHERE_BOTH},
    [AOTRUN_CUDA_OPT_WARM_UP_RUN] = {"warm_up_run", AOTRUN_OPTION_BOOL,
                                     WHERE_BACKEND, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES] = {"cuda_graph_input_nodes",
                                           AOTRUN_OPTION_BOOL, WHERE_BOTH,
                                           WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES] = {"cuda_graph_output_nodes",
                                            AOTRUN_OPTION_BOOL, WHERE_BOTH,
                                            WHERE_BOTH},
    [AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT] = {"output_placement",
                                          AOTRUN_OPTION_BOOL, WHERE_BOTH,
                                          WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS] = {"cuda_graph_copy_kernels",
                                            AOTRUN_OPTION_BOOL, WHERE_BOTH,
                                            WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_CAPTURE_AT_INIT] = {"cuda_graph_capture_at_init",
                                               AOTRUN_OPTION_BOOL,
                                               WHERE_BACKEND, WHERE_BOTH},
    [AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG] = {"cuda_graph_done_flag",
                                         AOTRUN_OPTION_BOOL, WHERE_BOTH,
                                         WHERE_BOTH},
};

static const char *const kLevels[] = {"debug", "info", "warning", "error"};

void aotrun_cuda_options_default(aotrun_cuda_options *o) {
  memset(o, 0, sizeof *o);
  o->shared_stream = 0;
  o->share_weights = 1;
  o->log_level = AOTRUN_LOG_INFO;
  o->warm_up = 1;
  o->warm_up_run = 1;
  /* Replay's input copies as memcpy nodes of the graph: 3-9 us less per
   * call on four of the five benchmark models, the GPU-bound fifth within
   * noise (H100, 2026-12-06, docs/benchmarks.md). */
  o->graph_input_nodes = 1;
  /* Its output copies as nodes too: 1.5-4.2 us less per replay on three
   * models (H100); 34 of the GPU suite's 36 cases match eager with it
   * (H200, 2026-12-07; docs/benchmarks.md, docs/gpu-results.md). */
  o->graph_output_nodes = 1;
  o->output_placement = -1;
  /* A graph method's capture at init: its first call a replay, no call
   * paying the capture (docs/cuda-graphs.md); -1 on and not asked for, so
   * a graph it cannot capture there is said at debug, not info. */
  o->graph_capture_at_init = -1;
}

const char *aotrun_cuda_option_key(aotrun_cuda_option_id id) {
  return id < AOTRUN_CUDA_OPT_COUNT ? kOptions[id].key : "?";
}

int32_t aotrun_cuda_option_type(aotrun_cuda_option_id id) {
  return id < AOTRUN_CUDA_OPT_COUNT ? kOptions[id].type : 0;
}

const char *aotrun_cuda_option_type_name(int32_t type) {
  switch (type) {
    case AOTRUN_OPTION_BOOL: return "BOOL";
    case AOTRUN_OPTION_INT: return "INT";
    case AOTRUN_OPTION_STRING: return "STRING";
    default: return "an unknown type";
  }
}

static const char *where_text(int where) {
  switch (where) {
    case WHERE_BACKEND: return "backend-wide (method NULL)";
    case WHERE_METHOD: return "on a method handle";
    default: return "nowhere";
  }
}

/* Every key in table order, ", "-separated: the unknown-key message
 * lists them from the table, so no new option can be left out of it. */
static const char *key_list(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < AOTRUN_CUDA_OPT_COUNT && used < size; i++) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     kOptions[i].key);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

aotrun_status aotrun_cuda_option_find(const char *key, int32_t type,
                                      int check_type, int for_method,
                                      aotrun_cuda_option_id *id,
                                      aotrun_error *err) {
  if (key == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "option key is NULL");
  for (int i = 0; i < AOTRUN_CUDA_OPT_COUNT; i++) {
    const option_desc *d = &kOptions[i];
    if (strcmp(d->key, key) != 0) continue;
    int where = check_type ? d->set_where : d->get_where;
    int here = for_method ? WHERE_METHOD : WHERE_BACKEND;
    if (where == 0 && check_type)
      return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                              "option '%s' is read-only", key);
    if (!(where & here))
      return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                              "option '%s' can only be %s %s", key,
                              check_type ? "set" : "read",
                              where == 0 ? "nowhere" : where_text(where));
    if (check_type && type != d->type)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "option '%s' takes a %s, got a %s", key,
                              aotrun_cuda_option_type_name(d->type),
                              aotrun_cuda_option_type_name(type));
    *id = (aotrun_cuda_option_id)i;
    return AOTRUN_OK;
  }
  char keys[AOTRUN_ERROR_MESSAGE_SIZE];
  return aotrun_error_set(err, AOTRUN_ERR_NOT_FOUND,
                          "backend cuda has no option '%.64s' (options: %s)",
                          key, key_list(keys, sizeof keys));
}

/* ---- method lists ---- */

static int is_blank(char c) { return c == ' ' || c == '\t'; }

aotrun_status aotrun_cuda_method_list_normalize(const char *in, char *out,
                                                size_t out_size,
                                                aotrun_error *err) {
  if (in == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "option 'enable_cuda_graph_for_method': the "
                            "string is NULL");
  size_t used = 0;
  out[0] = '\0';
  const char *p = in;
  while (*p != '\0') {
    const char *end = strchr(p, ',');
    if (end == NULL) end = p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && is_blank(*a)) a++;
    while (b > a && is_blank(b[-1])) b--;
    for (const char *q = a; q < b; q++)
      if (is_blank(*q))
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "option 'enable_cuda_graph_for_method': "
                                "method name '%.*s' contains a space",
                                (int)(b - a), a);
    size_t n = (size_t)(b - a);
    if (n > 0) {
      if (used + n + 2 > out_size)
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "option 'enable_cuda_graph_for_method': the "
                                "list is longer than %zu bytes",
                                out_size - 1);
      if (used > 0) out[used++] = ',';
      memcpy(out + used, a, n);
      used += n;
      out[used] = '\0';
    }
    p = *end == ',' ? end + 1 : end;
  }
  return AOTRUN_OK;
}

int aotrun_cuda_method_list_contains(const char *list, const char *method) {
  size_t n = strlen(method);
  if (n == 0) return 0;
  for (const char *p = list; *p != '\0';) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, method, n) == 0) return 1;
    if (end == NULL) break;
    p = end + 1;
  }
  return 0;
}

/* ---- store / read ---- */

static aotrun_status parse_level(const char *text, int32_t *level,
                                 aotrun_error *err) {
  for (int32_t i = 0; text != NULL && i < 4; i++)
    if (strcasecmp(text, kLevels[i]) == 0) {
      *level = i;
      return AOTRUN_OK;
    }
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "option 'log_level': '%s' is not debug, info, "
                          "warning or error",
                          text != NULL ? text : "(null)");
}

aotrun_status aotrun_cuda_options_store(aotrun_cuda_options *o,
                                        aotrun_cuda_option_id id,
                                        const aotrun_option *opt,
                                        aotrun_error *err) {
  switch (id) {
    case AOTRUN_CUDA_OPT_GRAPH_METHODS: {
      char list[AOTRUN_CUDA_METHOD_LIST_MAX];
      aotrun_status st = aotrun_cuda_method_list_normalize(
          opt->string_value, list, sizeof list, err);
      if (st == AOTRUN_OK) memcpy(o->graph_methods, list, sizeof list);
      return st;
    }
    case AOTRUN_CUDA_OPT_SHARED_STREAM:
      o->shared_stream = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_SHARE_WEIGHTS:
      o->share_weights = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_LOG_LEVEL:
      return parse_level(opt->string_value, &o->log_level, err);
    case AOTRUN_CUDA_OPT_LIBRARY_TEMP_FILE:
      o->library_temp_file = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_WARM_UP:
      o->warm_up = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_WARM_UP_RUN:
      o->warm_up_run = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES:
      o->graph_input_nodes = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES:
      o->graph_output_nodes = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT:
      o->output_placement = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS:
      o->graph_copy_kernels = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_CAPTURE_AT_INIT:
      o->graph_capture_at_init = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG:
      o->graph_done_flag = opt->bool_value != 0;
      return AOTRUN_OK;
    case AOTRUN_CUDA_OPT_GRAPH_SHAPES:
      if (opt->int_value < 0 || opt->int_value > AOTRUN_CUDA_MAX_GRAPH_SHAPES)
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "option 'cuda_graph_shapes' is %lld, must be "
                                "0 (one graph, other shapes refused) to %d",
                                (long long)opt->int_value,
                                AOTRUN_CUDA_MAX_GRAPH_SHAPES);
      o->graph_shapes = (int32_t)opt->int_value;
      return AOTRUN_OK;
    default:
      return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                              "option '%s' holds no value",
                              aotrun_cuda_option_key(id));
  }
}

void aotrun_cuda_options_read(const aotrun_cuda_options *o,
                              aotrun_cuda_option_id id, aotrun_option *out) {
  out->key = aotrun_cuda_option_key(id);
  out->type = aotrun_cuda_option_type(id);
  out->bool_value = 0;
  out->int_value = 0;
  out->string_value = NULL;
  switch (id) {
    case AOTRUN_CUDA_OPT_GRAPH_METHODS:
      out->string_value = o->graph_methods;
      break;
    case AOTRUN_CUDA_OPT_SHARED_STREAM:
      out->bool_value = o->shared_stream;
      break;
    case AOTRUN_CUDA_OPT_SHARE_WEIGHTS:
      out->bool_value = o->share_weights;
      break;
    case AOTRUN_CUDA_OPT_LIBRARY_TEMP_FILE:
      out->bool_value = o->library_temp_file;
      break;
    case AOTRUN_CUDA_OPT_WARM_UP:
      out->bool_value = o->warm_up;
      break;
    case AOTRUN_CUDA_OPT_WARM_UP_RUN:
      out->bool_value = o->warm_up_run;
      break;
    case AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES:
      out->bool_value = o->graph_input_nodes;
      break;
    case AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES:
      out->bool_value = o->graph_output_nodes;
      break;
    case AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS:
      out->bool_value = o->graph_copy_kernels;
      break;
    case AOTRUN_CUDA_OPT_GRAPH_CAPTURE_AT_INIT:
      out->bool_value = o->graph_capture_at_init != 0;
      break;
    case AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG:
      out->bool_value = o->graph_done_flag;
      break;
    case AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT:
      out->bool_value = o->output_placement >= 0
                            ? o->output_placement
                            : aotrun_output_placement_wanted();
      break;
    case AOTRUN_CUDA_OPT_LOG_LEVEL:
      out->string_value =
          kLevels[o->log_level >= 0 && o->log_level < 4 ? o->log_level : 1];
      break;
    case AOTRUN_CUDA_OPT_GRAPH_SHAPES:
      out->int_value = o->graph_shapes;
      break;
    default:
      break;
  }
}
