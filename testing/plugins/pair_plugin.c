/*
 * pair_plugin.c: a test library that offers two backends through the list
 * symbol (ABI 1.1): "pair_a" (y = 2x + offset) and "pair_b" (y = 3x +
 * offset). All state lives in each table's backend_data (its scale and
 * its backend options "offset" (INT) and "label" (STRING)); the code
 * reaches it only through `self`, so the two never share anything. The
 * only non-const file-scope object is the per-thread message of the last
 * failed backend-wide call (last_error(NULL)).
 *
 * Program ("processed" bytes): text starting with "pair" (any backend) or
 * "pair:NAME" (only backend NAME); the method takes one float32 [4] input
 * "x" and gives one float32 [4] output "y".
 *
 * Variants (-D): PAIR_NO_ENTRY (only the list symbol), PAIR_BAD_SECOND
 * (the second table is too small), PAIR_DUP_NAME (both named pair_a).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_plugin.h"

typedef struct pair_backend {
  const char *name;
  const char *build; /* get_info's build string */
  float scale;
  pthread_mutex_t mu; /* guards the options */
  int64_t offset;
  char label[64];
} pair_backend;

struct aotrun_method {
  const pair_backend *backend;
  float scale, offset;
  char err[256];
};

static _Thread_local char t_error[256];

static aotrun_status fail(char *msg, aotrun_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static aotrun_status fail(char *msg, aotrun_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof t_error, fmt, ap);
  va_end(ap);
  return s;
}

static pair_backend *data_of(const aotrun_backend_api *self) {
  return (pair_backend *)self->backend_data;
}

/* ---- context members ---- */

static int32_t pair_is_available_ex(const aotrun_backend_api *self,
                                    char *reason, size_t reason_size) {
  (void)self;
  if (reason != NULL && reason_size > 0) reason[0] = '\0';
  return 1;
}

/* NULL when `processed` (with `specs`) is a program of backend b, else
 * why not. The one device is "0" (spec "device"). */
static const char *refusal(const pair_backend *b, const void *processed,
                           size_t size, const aotrun_key_value *specs,
                           size_t num_specs, char *buf, size_t buf_size) {
  for (size_t i = 0; specs != NULL && i < num_specs; i++)
    if (specs[i].key != NULL && strcmp(specs[i].key, "device") == 0 &&
        (specs[i].value == NULL || strcmp(specs[i].value, "0") != 0)) {
      snprintf(buf, buf_size,
               "backend %s has only device 0 (compile spec device \"%s\")",
               b->name, specs[i].value != NULL ? specs[i].value : "(null)");
      return buf;
    }
  const char *p = processed;
  if (p == NULL || size < 4 || memcmp(p, "pair", 4) != 0) {
    snprintf(buf, buf_size,
             "backend %s runs only \"pair\" programs (%zu bytes given)",
             b->name, size);
    return buf;
  }
  if (size == 4 || p[4] != ':') return NULL;
  size_t n = strlen(b->name);
  if (size - 5 == n && memcmp(p + 5, b->name, n) == 0) return NULL;
  snprintf(buf, buf_size, "backend %s: the program is for backend %.*s",
           b->name, (int)(size - 5 < 64 ? size - 5 : 64), p + 5);
  return buf;
}

static aotrun_status pair_init_ex(const aotrun_backend_api *self,
                                  const aotrun_host_api *host,
                                  const void *processed, size_t size,
                                  const aotrun_key_value *specs, size_t n,
                                  aotrun_method **out) {
  (void)host;
  t_error[0] = '\0';
  if (out == NULL)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT, "init: out is NULL");
  *out = NULL;
  pair_backend *b = data_of(self);
  char why[192];
  if (refusal(b, processed, size, specs, n, why, sizeof why) != NULL)
    return fail(t_error, AOTRUN_ERR_NOT_SUPPORTED, "%s", why);
  aotrun_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return fail(t_error, AOTRUN_ERR_OUT_OF_MEMORY, "init: out of memory");
  m->backend = b;
  m->scale = b->scale;
  pthread_mutex_lock(&b->mu);
  m->offset = (float)b->offset;
  pthread_mutex_unlock(&b->mu);
  *out = m;
  return AOTRUN_OK;
}

static aotrun_status pair_set_backend_option(const aotrun_backend_api *self,
                                             const aotrun_option *o) {
  t_error[0] = '\0';
  pair_backend *b = data_of(self);
  if (o == NULL || o->key == NULL)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT, "option is NULL");
  int is_offset = strcmp(o->key, "offset") == 0;
  if (!is_offset && strcmp(o->key, "label") != 0)
    return fail(t_error, AOTRUN_ERR_NOT_FOUND, "backend %s has no option '%s'",
                b->name, o->key);
  int32_t want = is_offset ? AOTRUN_OPTION_INT : AOTRUN_OPTION_STRING;
  if (o->type != want || (!is_offset && o->string_value == NULL))
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT,
                "backend %s: option '%s' has the wrong type", b->name,
                o->key);
  if (!is_offset && strlen(o->string_value) >= sizeof b->label)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT,
                "backend %s: label is %zu bytes, at most %zu", b->name,
                strlen(o->string_value), sizeof b->label - 1);
  pthread_mutex_lock(&b->mu);
  if (is_offset)
    b->offset = o->int_value;
  else
    snprintf(b->label, sizeof b->label, "%s", o->string_value);
  pthread_mutex_unlock(&b->mu);
  return AOTRUN_OK;
}

static aotrun_status pair_get_backend_option(const aotrun_backend_api *self,
                                             const char *key,
                                             aotrun_option *out, char *buf,
                                             size_t buf_size) {
  t_error[0] = '\0';
  pair_backend *b = data_of(self);
  if (key == NULL || out == NULL)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT, "key or out is NULL");
  memset(out, 0, sizeof *out);
  aotrun_status s = AOTRUN_OK;
  pthread_mutex_lock(&b->mu);
  if (strcmp(key, "offset") == 0) {
    out->key = "offset";
    out->type = AOTRUN_OPTION_INT;
    out->int_value = b->offset;
  } else if (strcmp(key, "label") == 0) {
    out->key = "label";
    out->type = AOTRUN_OPTION_STRING;
    if (buf == NULL || strlen(b->label) + 1 > buf_size)
      s = fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT,
               "backend %s: label needs %zu bytes, the buffer has %zu",
               b->name, strlen(b->label) + 1, buf_size);
    else
      out->string_value = strcpy(buf, b->label);
  } else {
    s = fail(t_error, AOTRUN_ERR_NOT_FOUND, "backend %s has no option '%s'",
             b->name, key);
  }
  pthread_mutex_unlock(&b->mu);
  return s;
}

/* ---- identity and devices ---- */

static aotrun_status pair_get_info(const aotrun_backend_api *self,
                                   aotrun_backend_info *out) {
  if (out == NULL || out->struct_size < sizeof(uint32_t))
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT, "get_info: bad out");
  aotrun_backend_info info = {0};
  info.version = "1.1.0";
  info.vendor = "aotrun tests";
  info.build = data_of(self)->build;
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

static aotrun_status pair_get_device_count(const aotrun_backend_api *self,
                                           int32_t *count) {
  (void)self;
  if (count == NULL)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT, "count is NULL");
  *count = 1;
  return AOTRUN_OK;
}

static aotrun_status pair_get_device_info(const aotrun_backend_api *self,
                                          int32_t device,
                                          aotrun_device_info *out) {
  if (out == NULL || out->struct_size < sizeof(uint32_t))
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT,
                "get_device_info: bad out");
  if (device != 0)
    return fail(t_error, AOTRUN_ERR_INVALID_ARGUMENT,
                "backend %s: device %d does not exist (1 device)",
                data_of(self)->name, (int)device);
  aotrun_device_info info;
  memset(&info, 0, sizeof info);
  info.device_type = kDLCPU;
  info.total_memory = 1u << 20;
  info.free_memory = 1u << 19;
  snprintf(info.name, sizeof info.name, "%s device", data_of(self)->name);
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

static aotrun_status pair_can_run(const aotrun_backend_api *self,
                                  const aotrun_host_api *host,
                                  const void *processed, size_t size,
                                  const aotrun_key_value *specs, size_t n,
                                  char *reason, size_t reason_size) {
  (void)host;
  char why[192];
  if (refusal(data_of(self), processed, size, specs, n, why, sizeof why) ==
      NULL)
    return AOTRUN_OK;
  if (reason != NULL && reason_size > 0)
    snprintf(reason, reason_size, "%s", why);
  return fail(t_error, AOTRUN_ERR_NOT_SUPPORTED, "%s", why);
}

/* ---- method handles (1.0 members) ---- */

static aotrun_status pair_execute(aotrun_method *m, const DLTensor *in,
                                  size_t ni, DLTensor *out, size_t no) {
  if (m == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  if (ni != 1 || no != 1 || in == NULL || out == NULL ||
      in->ndim != 1 || out->ndim != 1 || in->shape[0] != 4 ||
      out->shape[0] != 4 || in->dtype.code != kDLFloat ||
      in->dtype.bits != 32 || out->dtype.code != kDLFloat ||
      out->dtype.bits != 32)
    return fail(m->err, AOTRUN_ERR_INVALID_ARGUMENT,
                "%s: expects one float32 [4] input and output",
                m->backend->name);
  const float *x = in->data;
  float *y = out->data;
  for (int i = 0; i < 4; i++) y[i] = x[i] * m->scale + m->offset;
  return AOTRUN_OK;
}

static void pair_destroy(aotrun_method *m) { free(m); }

static aotrun_status pair_set_option(aotrun_method *m,
                                     const aotrun_option *o) {
  if (m == NULL)
    return fail(t_error, AOTRUN_ERR_NOT_SUPPORTED,
                "use set_backend_option for backend-wide options");
  return fail(m->err, AOTRUN_ERR_NOT_FOUND, "no method option '%s'",
              o != NULL && o->key != NULL ? o->key : "(null)");
}

static aotrun_status pair_get_option(aotrun_method *m, const char *key,
                                     aotrun_option *out) {
  if (m == NULL)
    return fail(t_error, AOTRUN_ERR_NOT_SUPPORTED,
                "use get_backend_option for backend-wide options");
  if (key == NULL || out == NULL || strcmp(key, "offset") != 0)
    return fail(m->err, AOTRUN_ERR_NOT_FOUND, "no method option '%s'",
                key != NULL ? key : "(null)");
  memset(out, 0, sizeof *out);
  out->key = "offset";
  out->type = AOTRUN_OPTION_INT;
  out->int_value = (int64_t)m->offset;
  return AOTRUN_OK;
}

static aotrun_status pair_num_io(const aotrun_method *m, int32_t kind,
                                 size_t *count) {
  (void)kind;
  if (m == NULL || count == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *count = 1;
  return AOTRUN_OK;
}

static aotrun_status pair_io_info(const aotrun_method *m, int32_t kind,
                                  size_t index, aotrun_io_info *out) {
  if (m == NULL || out == NULL || index != 0)
    return AOTRUN_ERR_INVALID_ARGUMENT;
  aotrun_io_info info;
  memset(&info, 0, sizeof info);
  info.ndim = 1;
  info.name = kind == AOTRUN_IO_INPUT ? "x" : "y";
  info.dtype = (DLDataType){kDLFloat, 32, 1};
  info.shape[0] = 4;
  size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)n;
  memcpy(out, &info, n);
  return AOTRUN_OK;
}

static const char *pair_last_error(const aotrun_method *m) {
  return m != NULL ? m->err : t_error;
}

/* ---- the 1.0 members that have no `self`: each table its own ---- */

static pair_backend g_a = {"pair_a", "pair plugin, y = 2x + offset", 2.0f, PTHREAD_MUTEX_INITIALIZER, 0, ""};
#ifdef PAIR_DUP_NAME
static pair_backend g_b = {"pair_a", "pair plugin, y = 3x + offset", 3.0f, PTHREAD_MUTEX_INITIALIZER, 0, ""};
#else
static pair_backend g_b = {"pair_b", "pair plugin, y = 3x + offset", 3.0f, PTHREAD_MUTEX_INITIALIZER, 0, ""};
#endif

static const char *pair_a_name(void) { return g_a.name; }
static const char *pair_b_name(void) { return g_b.name; }
static int32_t pair_is_available(char *reason, size_t size) {
  return pair_is_available_ex(NULL, reason, size);
}

static const aotrun_backend_api kTableA;
/* The 1.0 init (for 1.0 hosts) of the first backend. */
static aotrun_status pair_init(const aotrun_host_api *host,
                               const void *processed, size_t size,
                               const aotrun_key_value *specs, size_t n,
                               aotrun_method **out) {
  return pair_init_ex(&kTableA, host, processed, size, specs, n, out);
}

#define PAIR_TABLE(name_fn, data, size)                                   \
  {                                                                       \
    .abi_version = AOTRUN_ABI_VERSION, .struct_size = (size),             \
    .get_name = name_fn, .is_available = pair_is_available,               \
    .init = pair_init, .execute = pair_execute, .destroy = pair_destroy,  \
    .set_option = pair_set_option, .get_option = pair_get_option,         \
    .get_num_io = pair_num_io, .get_io_info = pair_io_info,               \
    .last_error = pair_last_error,                                        \
    /* context, identity, devices, can_run (ABI 1.1) */                   \
    .backend_data = (data), .is_available_ex = pair_is_available_ex,      \
    .init_ex = pair_init_ex,                                              \
    .set_backend_option = pair_set_backend_option,                        \
    .get_backend_option = pair_get_backend_option,                        \
    .get_info = pair_get_info, .get_device_count = pair_get_device_count, \
    .get_device_info = pair_get_device_info, .can_run = pair_can_run,     \
  }

#ifdef PAIR_BAD_SECOND
#define PAIR_B_SIZE 16u
#else
#define PAIR_B_SIZE sizeof(aotrun_backend_api)
#endif

static const aotrun_backend_api kTableA =
    PAIR_TABLE(pair_a_name, &g_a, sizeof(aotrun_backend_api));
static const aotrun_backend_api kTableB =
    PAIR_TABLE(pair_b_name, &g_b, PAIR_B_SIZE);
static const aotrun_backend_api *const kTables[] = {&kTableA, &kTableB};

AOTRUN_PLUGIN_EXPORT aotrun_status aotrun_plugin_get_backends(
    uint32_t host_abi_version, const aotrun_backend_api *const **tables,
    size_t *count) {
  if (tables == NULL || count == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *tables = NULL;
  *count = 0;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *tables = kTables;
  *count = 2;
  return AOTRUN_OK;
}

#ifndef PAIR_NO_ENTRY
/* For 1.0 hosts: the first backend. */
AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kTableA;
  return AOTRUN_OK;
}
#endif
