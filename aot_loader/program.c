/*
 * program.c: manifest.json -> aotrun_program, validating every field (see
 * docs/program-format.md). Every error names the field, the method/input/
 * constant and both values.
 */
#include "aot_loader/program.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/json_read.h"
#include "aot_loader/name_set.h"
#include "aot_loader/program_parse.h"
#include "aot_loader/scalar_type.h"

#define MANIFEST_PREFIX "malformed manifest: "
#define METADATA_PREFIX "malformed FQN weight metadata: "

typedef aotrun_manifest_ctx parse_ctx;

static aotrun_status failv(parse_ctx *ctx, aotrun_status code,
                           const char *fmt, va_list ap) {
  char msg[640];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return aotrun_error_set(ctx->err, code, "%s%s%s%s%s", ctx->prefix,
                          ctx->where, ctx->where[0] ? ": " : "", msg,
                          ctx->suffix);
}

static aotrun_status fail(parse_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static aotrun_status fail(parse_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  aotrun_status s = failv(ctx, AOTRUN_ERR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return s;
}

static aotrun_status out_of_memory(parse_ctx *ctx) {
  return aotrun_error_set(ctx->err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory while parsing the manifest");
}

/* ---- field readers ------------------------------------------------------ */

/* Reads obj[key] as a string. Missing: error when required, else *out NULL. */
static aotrun_status read_string(parse_ctx *ctx, const cJSON *obj,
                                 const char *key, int required,
                                 const char **out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char found[96];
  *out = NULL;
  if (item == NULL) {
    if (!required) return AOTRUN_OK;
    return fail(ctx, "missing field '%s'", key);
  }
  if (!cJSON_IsString(item) || item->valuestring == NULL)
    return fail(ctx, "field '%s' must be a string, found %s", key,
                aotrun_json_describe(item, found, sizeof found));
  if (item->valuestring[0] == '\0')
    return fail(ctx, "field '%s' is an empty string", key);
  *out = item->valuestring;
  return AOTRUN_OK;
}

/* Reads an exact integer >= min from item, called `label` in messages. */
static aotrun_status read_int_item(parse_ctx *ctx, const cJSON *item,
                                   const char *label, int64_t min,
                                   int64_t *out) {
  char found[96];
  switch (aotrun_json_int(item, out)) {
    case AOTRUN_JSON_INT_OK:
      break;
    case AOTRUN_JSON_INT_NOT_NUMBER:
      return fail(ctx, "field '%s' must be an integer, found %s", label,
                  aotrun_json_describe(item, found, sizeof found));
    case AOTRUN_JSON_INT_NOT_INTEGER:
      return fail(ctx, "field '%s' is %.17g, not an integer", label,
                  item->valuedouble);
    case AOTRUN_JSON_INT_TOO_LARGE:
      return fail(ctx, "field '%s' is %.17g, larger than 2^53", label,
                  item->valuedouble);
  }
  if (*out < min)
    return fail(ctx, "field '%s' is %lld, must be at least %lld", label,
                (long long)*out, (long long)min);
  return AOTRUN_OK;
}

static aotrun_status read_int(parse_ctx *ctx, const cJSON *obj,
                              const char *key, int64_t min, int64_t *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (item == NULL) return fail(ctx, "missing field '%s'", key);
  return read_int_item(ctx, item, key, min, out);
}

/* Reads obj[key] as an array (required). */
static aotrun_status read_array(parse_ctx *ctx, const cJSON *obj,
                                const char *key, const cJSON **out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char found[96];
  if (item == NULL) return fail(ctx, "missing field '%s'", key);
  if (!cJSON_IsArray(item))
    return fail(ctx, "field '%s' must be an array, found %s", key,
                aotrun_json_describe(item, found, sizeof found));
  *out = item;
  return AOTRUN_OK;
}

/* The item count of a list or object, refused above `limit` before
 * anything is allocated for it (see the limits in program.h). */
static aotrun_status count_items(parse_ctx *ctx, const cJSON *list,
                                 const char *key, size_t limit, size_t *n) {
  size_t count = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) count++;
  if (count > limit)
    return fail(ctx, "field '%s' has %zu entries, at most %zu are supported",
                key, count, limit);
  *n = count;
  return AOTRUN_OK;
}

static aotrun_status read_dtype(parse_ctx *ctx, const cJSON *obj,
                                int32_t *out) {
  const char *name;
  aotrun_status s = read_string(ctx, obj, "dtype", 1, &name);
  if (s != AOTRUN_OK) return s;
  const aotrun_scalar_type *t = aotrun_scalar_type_from_name(name);
  if (t == NULL)
    return fail(ctx, "field 'dtype' is '%s', not a known dtype (float32, "
                "float64, int64, ...; see docs/program-format.md)", name);
  *out = t->code;
  return AOTRUN_OK;
}

/* Library and weights names are named-data keys relative to the program
 * directory: a path could escape it. */
static aotrun_status check_plain_file_name(parse_ctx *ctx, const char *key,
                                           const char *value) {
  if (strchr(value, '/') != NULL || strchr(value, '\\') != NULL ||
      strcmp(value, ".") == 0 || strcmp(value, "..") == 0)
    return fail(ctx, "field '%s' is '%s', must be a plain file name (no "
                "'/', not '.' or '..')", key, value);
  return AOTRUN_OK;
}

static char *dup_string(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* ---- the readers program_dims.c shares (program_parse.h) ---- */

aotrun_status aotrun_manifest_fail(parse_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  aotrun_status s = failv(ctx, AOTRUN_ERR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return s;
}

aotrun_status aotrun_manifest_out_of_memory(parse_ctx *ctx) {
  return out_of_memory(ctx);
}

aotrun_status aotrun_manifest_int(parse_ctx *ctx, const cJSON *item,
                                  const char *label, int64_t min,
                                  int64_t *out) {
  return read_int_item(ctx, item, label, min, out);
}

aotrun_status aotrun_manifest_count(parse_ctx *ctx, const cJSON *list,
                                    const char *key, size_t limit,
                                    size_t *n) {
  return count_items(ctx, list, key, limit, n);
}

char *aotrun_manifest_strdup(const char *s) { return dup_string(s); }

/* "[32, 16]" for messages (truncated with "..." when long). */
static const char *format_dims(const int64_t *dims, int32_t ndim, char *buf,
                               size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                             i ? ", " : "", (long long)dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

/* ---- inputs and outputs ------------------------------------------------- */

static aotrun_status parse_shape_dim(parse_ctx *ctx, const cJSON *item,
                                     int32_t i, aotrun_program_io *io) {
  char label[32];
  snprintf(label, sizeof label, "shape[%d]", (int)i);
  if (cJSON_IsString(item)) {
    if (item->valuestring == NULL || item->valuestring[0] == '\0')
      return fail(ctx, "field '%s' is an empty symbol name", label);
    io->dims[i] = -1;
    io->symbols[i] = dup_string(item->valuestring);
    return io->symbols[i] ? AOTRUN_OK : out_of_memory(ctx);
  }
  if (!cJSON_IsNumber(item)) {
    char found[96];
    return fail(ctx, "field '%s' must be an integer or a symbol name, found %s",
                label, aotrun_json_describe(item, found, sizeof found));
  }
  return read_int_item(ctx, item, label, 0, &io->dims[i]);
}

static aotrun_status parse_io(parse_ctx *ctx, const cJSON *json,
                              const char *kind, size_t index,
                              aotrun_program_io *io) {
  char found[96];
  const char *name;
  const cJSON *shape;
  size_t base = strlen(ctx->where);
  snprintf(ctx->where + base, sizeof ctx->where - base, "%s%s %zu",
           base ? ": " : "", kind, index);
  if (!cJSON_IsObject(json))
    return fail(ctx, "must be an object, found %s",
                aotrun_json_describe(json, found, sizeof found));
  aotrun_status s = read_string(ctx, json, "name", 1, &name);
  if (s != AOTRUN_OK) return s;
  size_t len = strlen(ctx->where);
  snprintf(ctx->where + len, sizeof ctx->where - len, " ('%s')", name);
  if ((io->name = dup_string(name)) == NULL) return out_of_memory(ctx);
  for (int d = 0; d < AOTRUN_PROGRAM_MAX_DIMS; d++)
    io->exprs[d] = (aotrun_dim_expr){-1, 1, 0}; /* no expression */
  if ((s = read_dtype(ctx, json, &io->dtype)) != AOTRUN_OK) return s;
  if ((s = read_array(ctx, json, "shape", &shape)) != AOTRUN_OK) return s;
  int n = cJSON_GetArraySize(shape);
  if (n > AOTRUN_PROGRAM_MAX_DIMS)
    return fail(ctx, "field 'shape' has %d dims, at most %d are supported", n,
                AOTRUN_PROGRAM_MAX_DIMS);
  io->ndim = n;
  int i = 0;
  const cJSON *dim;
  cJSON_ArrayForEach(dim, shape) {
    if ((s = parse_shape_dim(ctx, dim, i++, io)) != AOTRUN_OK) return s;
  }
  ctx->where[base] = '\0';
  return AOTRUN_OK;
}

static aotrun_status parse_io_list(parse_ctx *ctx, const cJSON *method,
                                   const char *key, const char *kind,
                                   aotrun_program_io **out, size_t *count) {
  const cJSON *list;
  aotrun_status s = read_array(ctx, method, key, &list);
  if (s != AOTRUN_OK) return s;
  size_t n = 0, i = 0;
  if ((s = count_items(ctx, list, key, AOTRUN_PROGRAM_MAX_IO, &n)) !=
      AOTRUN_OK)
    return s;
  *out = calloc(n ? n : 1, sizeof **out);
  if (*out == NULL) return out_of_memory(ctx);
  *count = n;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    s = parse_io(ctx, item, kind, i, &(*out)[i]);
    i++;
    if (s != AOTRUN_OK) return s;
  }
  return AOTRUN_OK;
}

/* ---- constants (FQN weight metadata) ------------------------------------ */

static aotrun_status read_constant_type(parse_ctx *ctx, const cJSON *json,
                                        int32_t *out) {
  static const struct {
    const char *name;
    int32_t code;
  } kTypes[] = {{"parameter", AOTRUN_CONSTANT_TYPE_PARAMETER},
                {"buffer", AOTRUN_CONSTANT_TYPE_BUFFER},
                {"tensor_constant", AOTRUN_CONSTANT_TYPE_TENSOR_CONSTANT},
                {"unknown", AOTRUN_CONSTANT_TYPE_UNKNOWN}};
  const char *name;
  aotrun_status s = read_string(ctx, json, "type", 1, &name);
  if (s != AOTRUN_OK) return s;
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++) {
    if (strcmp(kTypes[i].name, name) == 0) {
      *out = kTypes[i].code;
      return AOTRUN_OK;
    }
  }
  return fail(ctx, "field 'type' is '%s', expected 'parameter', 'buffer', "
              "'tensor_constant' or 'unknown'", name);
}

static aotrun_status read_device(parse_ctx *ctx, const cJSON *json,
                                 int32_t *out) {
  const char *name;
  aotrun_status s = read_string(ctx, json, "device", 1, &name);
  if (s != AOTRUN_OK) return s;
  if (strcmp(name, "cuda") == 0) {
    *out = AOTRUN_DEVICE_TYPE_CUDA;
  } else if (strcmp(name, "cpu") == 0) {
    *out = AOTRUN_DEVICE_TYPE_CPU;
  } else {
    return fail(ctx, "field 'device' is '%s', expected 'cuda' or 'cpu'",
                name);
  }
  return AOTRUN_OK;
}

/* Reads a list of non-negative integers (sizes, strides) of at most
 * AOTRUN_PROGRAM_MAX_DIMS items. */
static aotrun_status read_dims(parse_ctx *ctx, const cJSON *json,
                               const char *key, int64_t *dims,
                               int32_t *ndim) {
  const cJSON *list;
  aotrun_status s = read_array(ctx, json, key, &list);
  if (s != AOTRUN_OK) return s;
  int n = cJSON_GetArraySize(list);
  if (n > AOTRUN_PROGRAM_MAX_DIMS)
    return fail(ctx, "field '%s' has %d dims, at most %d are supported", key,
                n, AOTRUN_PROGRAM_MAX_DIMS);
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    char label[48];
    snprintf(label, sizeof label, "%s[%d]", key, i);
    s = read_int_item(ctx, item, label, 0, &dims[i]);
    if (s != AOTRUN_OK) return s;
    i++;
  }
  *ndim = n;
  return AOTRUN_OK;
}

/* Checks that the constant's strided view fits its storage:
 * (storage_offset + 1 + sum((size-1)*stride)) * itemsize <= nbytes, with 0
 * elements when any size is 0, computed without overflow. */
static aotrun_status check_view_fits(parse_ctx *ctx,
                                     const aotrun_program_constant *c,
                                     size_t itemsize) {
  char sizes[160], strides[160];
  uint64_t span = 1; /* elements from the first to the last, inclusive */
  int empty = 0, overflow = 0;
  for (int32_t i = 0; i < c->ndim; i++) {
    if (c->sizes[i] == 0) empty = 1;
  }
  for (int32_t i = 0; i < c->ndim && !empty; i++) {
    uint64_t step;
    overflow |= __builtin_mul_overflow((uint64_t)(c->sizes[i] - 1),
                                       (uint64_t)c->strides[i], &step);
    overflow |= __builtin_add_overflow(span, step, &span);
  }
  uint64_t need = 0;
  if (!empty) {
    uint64_t elements;
    overflow |= __builtin_add_overflow(span, (uint64_t)c->storage_offset,
                                       &elements);
    overflow |= __builtin_mul_overflow(elements, (uint64_t)itemsize, &need);
  }
  format_dims(c->sizes, c->ndim, sizes, sizeof sizes);
  format_dims(c->strides, c->ndim, strides, sizeof strides);
  if (overflow)
    return fail(ctx, "the view (sizes %s, strides %s, storage_offset %lld) "
                "overflows 64 bits", sizes, strides,
                (long long)c->storage_offset);
  if (need > c->nbytes)
    return fail(ctx, "the view (sizes %s, strides %s, storage_offset %lld) "
                "needs %llu bytes, nbytes is %llu", sizes, strides,
                (long long)c->storage_offset, (unsigned long long)need,
                (unsigned long long)c->nbytes);
  return AOTRUN_OK;
}

static aotrun_status parse_constant_layout(parse_ctx *ctx, const cJSON *json,
                                           aotrun_program_constant *c) {
  int32_t nstrides = 0;
  int64_t value;
  char dtype[48];
  aotrun_status s = read_dims(ctx, json, "sizes", c->sizes, &c->ndim);
  if (s != AOTRUN_OK) return s;
  if ((s = read_dims(ctx, json, "strides", c->strides, &nstrides)) !=
      AOTRUN_OK)
    return s;
  if (nstrides != c->ndim)
    return fail(ctx, "'strides' has %d entries, 'sizes' has %d", nstrides,
                c->ndim);
  if ((s = read_int(ctx, json, "storage_offset", 0, &c->storage_offset)) !=
      AOTRUN_OK)
    return s;
  if ((s = read_int(ctx, json, "nbytes", 0, &value)) != AOTRUN_OK) return s;
  c->nbytes = (uint64_t)value;
  size_t itemsize = aotrun_scalar_type_from_code(c->dtype)->itemsize;
  if (c->nbytes % itemsize != 0)
    return fail(ctx, "nbytes %llu is not a multiple of %s size %zu",
                (unsigned long long)c->nbytes,
                aotrun_scalar_type_describe(c->dtype, dtype, sizeof dtype),
                itemsize);
  return check_view_fits(ctx, c, itemsize);
}

static aotrun_status parse_constant(parse_ctx *ctx, const cJSON *json,
                                    size_t index, aotrun_program_constant *c) {
  char found[96];
  const char *name, *fqn;
  snprintf(ctx->where, sizeof ctx->where, "constant %zu", index);
  if (!cJSON_IsObject(json))
    return fail(ctx, "must be an object, found %s",
                aotrun_json_describe(json, found, sizeof found));
  aotrun_status s = read_string(ctx, json, "name", 1, &name);
  if (s != AOTRUN_OK) return s;
  snprintf(ctx->where, sizeof ctx->where, "constant '%s'", name);
  if ((s = read_string(ctx, json, "fqn", 1, &fqn)) != AOTRUN_OK) return s;
  snprintf(ctx->where, sizeof ctx->where, "constant '%s' (fqn '%s')", name,
           fqn);
  c->name = dup_string(name);
  c->fqn = dup_string(fqn);
  if (c->name == NULL || c->fqn == NULL) return out_of_memory(ctx);
  if ((s = read_constant_type(ctx, json, &c->type)) != AOTRUN_OK) return s;
  if ((s = read_dtype(ctx, json, &c->dtype)) != AOTRUN_OK) return s;
  if ((s = read_device(ctx, json, &c->device_type)) != AOTRUN_OK) return s;
  return parse_constant_layout(ctx, json, c);
}

static aotrun_status parse_constants(parse_ctx *ctx, const cJSON *method,
                                     aotrun_program_method *m) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(method, "constants");
  if (list == NULL) return AOTRUN_OK; /* a method without constants */
  parse_ctx cctx = {.err = ctx->err, .prefix = METADATA_PREFIX};
  snprintf(cctx.suffix, sizeof cctx.suffix, " (method '%s')", m->name);
  if (!cJSON_IsArray(list)) {
    char found[96];
    return fail(ctx, "field 'constants' must be an array, found %s",
                aotrun_json_describe(list, found, sizeof found));
  }
  size_t n = 0, i = 0;
  aotrun_status s =
      count_items(ctx, list, "constants", AOTRUN_PROGRAM_MAX_CONSTANTS, &n);
  if (s != AOTRUN_OK) return s;
  m->constants = calloc(n ? n : 1, sizeof *m->constants);
  if (m->constants == NULL) return out_of_memory(ctx);
  m->num_constants = n;
  aotrun_name_set names;
  if (aotrun_name_set_init(&names, n) != 0) return out_of_memory(ctx);
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    size_t first = 0;
    s = parse_constant(&cctx, item, i, &m->constants[i]);
    if (s == AOTRUN_OK &&
        aotrun_name_set_add(&names, m->constants[i].name, i, &first) == 0)
      s = fail(&cctx, "the name is used by constants %zu and %zu", first, i);
    if (s != AOTRUN_OK) break;
    i++;
  }
  aotrun_name_set_free(&names);
  return s;
}

/* ---- methods and the top level ------------------------------------------ */

static aotrun_status parse_method(parse_ctx *ctx, const cJSON *json,
                                  aotrun_program_method *m) {
  char found[96];
  const char *library;
  if (json->string == NULL || json->string[0] == '\0')
    return fail(ctx, "a method has an empty name");
  snprintf(ctx->where, sizeof ctx->where, "method '%s'", json->string);
  if ((m->name = dup_string(json->string)) == NULL) return out_of_memory(ctx);
  if (!cJSON_IsObject(json))
    return fail(ctx, "must be an object, found %s",
                aotrun_json_describe(json, found, sizeof found));
  aotrun_status s = read_string(ctx, json, "library", 1, &library);
  if (s != AOTRUN_OK) return s;
  if ((s = check_plain_file_name(ctx, "library", library)) != AOTRUN_OK)
    return s;
  if ((m->library = dup_string(library)) == NULL) return out_of_memory(ctx);
  s = parse_io_list(ctx, json, "inputs", "input", &m->inputs, &m->num_inputs);
  if (s != AOTRUN_OK) return s;
  s = parse_io_list(ctx, json, "outputs", "output", &m->outputs,
                    &m->num_outputs);
  if (s != AOTRUN_OK) return s;
  if ((s = parse_constants(ctx, json, m)) != AOTRUN_OK) return s;
  snprintf(ctx->where, sizeof ctx->where, "method '%s'", m->name);
  return aotrun_program_parse_dims(ctx, json, m);
}

static aotrun_status parse_methods(parse_ctx *ctx, const cJSON *root,
                                   aotrun_program *p) {
  char found[96];
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "methods");
  if (methods == NULL) return fail(ctx, "missing field 'methods'");
  if (!cJSON_IsObject(methods))
    return fail(ctx, "field 'methods' must be an object, found %s",
                aotrun_json_describe(methods, found, sizeof found));
  size_t n = 0, i = 0;
  aotrun_status s =
      count_items(ctx, methods, "methods", AOTRUN_PROGRAM_MAX_METHODS, &n);
  if (s != AOTRUN_OK) return s;
  if (n == 0) return fail(ctx, "field 'methods' has no method");
  if ((p->methods = calloc(n, sizeof *p->methods)) == NULL)
    return out_of_memory(ctx);
  p->num_methods = n;
  aotrun_name_set names;
  if (aotrun_name_set_init(&names, n) != 0) return out_of_memory(ctx);
  const cJSON *item;
  cJSON_ArrayForEach(item, methods) {
    s = parse_method(ctx, item, &p->methods[i]);
    if (s != AOTRUN_OK) break;
    ctx->where[0] = '\0';
    if (aotrun_name_set_add(&names, p->methods[i].name, i, NULL) == 0) {
      s = fail(ctx, "method '%s' is defined twice", p->methods[i].name);
      break;
    }
    i++;
  }
  aotrun_name_set_free(&names);
  return s;
}

static aotrun_status parse_header(parse_ctx *ctx, const cJSON *root,
                                  aotrun_program *p) {
  const char *format, *producer, *weights;
  int64_t version;
  aotrun_status s = read_string(ctx, root, "format", 1, &format);
  if (s != AOTRUN_OK) return s;
  if (strcmp(format, "aotrun-program") != 0)
    return fail(ctx, "field 'format' is '%s', expected 'aotrun-program'",
                format);
  if ((s = read_int(ctx, root, "format_version", 1, &version)) != AOTRUN_OK)
    return s;
  if (version > AOTRUN_PROGRAM_FORMAT_VERSION)
    return aotrun_error_set(ctx->err, AOTRUN_ERR_NOT_SUPPORTED,
                            MANIFEST_PREFIX "format_version %lld is newer "
                            "than this loader supports (%d)",
                            (long long)version, AOTRUN_PROGRAM_FORMAT_VERSION);
  p->format_version = (int32_t)version;
  if ((s = read_string(ctx, root, "producer", 0, &producer)) != AOTRUN_OK)
    return s;
  if (producer != NULL && (p->producer = dup_string(producer)) == NULL)
    return out_of_memory(ctx);
  if ((s = read_string(ctx, root, "weights", 0, &weights)) != AOTRUN_OK)
    return s;
  if (weights != NULL) {
    if ((s = check_plain_file_name(ctx, "weights", weights)) != AOTRUN_OK)
      return s;
    if ((p->weights = dup_string(weights)) == NULL) return out_of_memory(ctx);
  }
  return AOTRUN_OK;
}

/* Constants' bytes come from the weights file: it must be named. */
static aotrun_status check_weights_named(parse_ctx *ctx,
                                         const aotrun_program *p) {
  if (p->weights != NULL) return AOTRUN_OK;
  for (size_t i = 0; i < p->num_methods; i++) {
    if (p->methods[i].num_constants > 0)
      return fail(ctx, "field 'weights' is missing, but method '%s' has %zu "
                  "constants", p->methods[i].name,
                  p->methods[i].num_constants);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_program_parse(const void *bytes, size_t size,
                                   aotrun_program **out, aotrun_error *err) {
  parse_ctx ctx = {.err = err, .prefix = MANIFEST_PREFIX};
  char why[128];
  *out = NULL;
  if (size > AOTRUN_PROGRAM_MAX_BYTES)
    return fail(&ctx, "%zu bytes, larger than the limit of %u bytes", size,
                (unsigned)AOTRUN_PROGRAM_MAX_BYTES);
  cJSON *root = aotrun_json_parse(bytes, size, why, sizeof why);
  if (root == NULL) return fail(&ctx, "%s", why);
  aotrun_status s = AOTRUN_OK;
  aotrun_program *p = calloc(1, sizeof *p);
  if (p == NULL) {
    s = out_of_memory(&ctx);
  } else if (!cJSON_IsObject(root)) {
    char found[96];
    s = fail(&ctx, "the top level must be an object, found %s",
             aotrun_json_describe(root, found, sizeof found));
  } else if ((s = parse_header(&ctx, root, p)) == AOTRUN_OK &&
             (s = parse_methods(&ctx, root, p)) == AOTRUN_OK) {
    ctx.where[0] = '\0';
    s = check_weights_named(&ctx, p);
  }
  cJSON_Delete(root);
  if (s != AOTRUN_OK) {
    aotrun_program_destroy(p);
    return s;
  }
  *out = p;
  return AOTRUN_OK;
}

static void free_io(aotrun_program_io *list, size_t n) {
  if (list == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free(list[i].name);
    for (int d = 0; d < AOTRUN_PROGRAM_MAX_DIMS; d++) free(list[i].symbols[d]);
  }
  free(list);
}

void aotrun_program_destroy(aotrun_program *program) {
  if (program == NULL) return;
  for (size_t i = 0; i < program->num_methods; i++) {
    aotrun_program_method *m = &program->methods[i];
    free(m->name);
    free(m->library);
    free_io(m->inputs, m->num_inputs);
    free_io(m->outputs, m->num_outputs);
    for (size_t c = 0; c < m->num_constants; c++) {
      free(m->constants[c].name);
      free(m->constants[c].fqn);
    }
    free(m->constants);
    for (size_t k = 0; k < m->num_symbols; k++) free(m->symbols[k].name);
    free(m->symbols);
  }
  free(program->methods);
  free(program->producer);
  free(program->weights);
  free(program);
}

aotrun_status aotrun_program_find_method(const aotrun_program *program,
                                         const char *name,
                                         const aotrun_program_method **out,
                                         aotrun_error *err) {
  char list[640];
  size_t used = 0;
  *out = NULL;
  for (size_t i = 0; i < program->num_methods; i++) {
    if (name != NULL && strcmp(program->methods[i].name, name) == 0) {
      *out = &program->methods[i];
      return AOTRUN_OK;
    }
  }
  list[0] = '\0';
  for (size_t i = 0; i < program->num_methods && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'",
                             i ? ", " : "", program->methods[i].name);
  return aotrun_error_set(err, AOTRUN_ERR_NOT_FOUND,
                          "method '%s' not found in the program; available "
                          "methods: %s",
                          name ? name : "(null)", list);
}

const char *aotrun_program_constant_type_name(int32_t type) {
  switch (type) {
    case AOTRUN_CONSTANT_TYPE_PARAMETER: return "parameter";
    case AOTRUN_CONSTANT_TYPE_BUFFER: return "buffer";
    case AOTRUN_CONSTANT_TYPE_TENSOR_CONSTANT: return "tensor_constant";
    case AOTRUN_CONSTANT_TYPE_UNKNOWN: return "unknown";
    case 4: return "folded_constant";
    default: return "invalid constant type";
  }
}

const char *aotrun_program_device_type_name(int32_t device_type) {
  switch (device_type) {
    case AOTRUN_DEVICE_TYPE_CPU: return "cpu";
    case AOTRUN_DEVICE_TYPE_CUDA: return "cuda";
    default: return "unknown device";
  }
}
