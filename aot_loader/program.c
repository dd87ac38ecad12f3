/*
 * program.c: manifest.json -> aotrun_program, validating every field (see
 * docs/program-format.md). Every error names the field, the method/input/
 * constant and both values.
 */
#include "aot_loader/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/json_read.h"
#include "aot_loader/name_set.h"
#include "aot_loader/program_parse.h"
#include "aot_loader/scalar_type.h"

#define MANIFEST_PREFIX "malformed manifest: "

#define fail aotrun_manifest_fail

typedef aotrun_manifest_ctx parse_ctx;

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

/* ---- inputs and outputs ------------------------------------------------- */

static aotrun_status parse_shape_dim(parse_ctx *ctx, const cJSON *item,
                                     int32_t i, aotrun_program_io *io) {
  char label[32];
  snprintf(label, sizeof label, "shape[%d]", (int)i);
  if (cJSON_IsString(item)) {
    if (item->valuestring == NULL || item->valuestring[0] == '\0')
      return fail(ctx, "field '%s' is an empty symbol name", label);
    io->dims[i] = -1;
    io->symbols[i] = aotrun_manifest_strdup(item->valuestring);
    return io->symbols[i] ? AOTRUN_OK : aotrun_manifest_out_of_memory(ctx);
  }
  if (!cJSON_IsNumber(item)) {
    char found[96];
    return fail(ctx, "field '%s' must be an integer or a symbol name, found %s",
                label, aotrun_json_describe(item, found, sizeof found));
  }
  return aotrun_manifest_int(ctx, item, label, 0, &io->dims[i]);
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
  aotrun_status s = aotrun_manifest_string(ctx, json, "name", 1, &name);
  if (s != AOTRUN_OK) return s;
  size_t len = strlen(ctx->where);
  snprintf(ctx->where + len, sizeof ctx->where - len, " ('%s')", name);
  if ((io->name = aotrun_manifest_strdup(name)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  for (int d = 0; d < AOTRUN_PROGRAM_MAX_DIMS; d++)
    io->exprs[d] = (aotrun_dim_expr){-1, 1, 0}; /* no expression */
  if ((s = aotrun_manifest_dtype(ctx, json, &io->dtype)) != AOTRUN_OK) return s;
  if ((s = aotrun_manifest_array(ctx, json, "shape", &shape)) != AOTRUN_OK)
    return s;
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
  aotrun_status s = aotrun_manifest_array(ctx, method, key, &list);
  if (s != AOTRUN_OK) return s;
  size_t n = 0, i = 0;
  if ((s = aotrun_manifest_count(ctx, list, key, AOTRUN_PROGRAM_MAX_IO, &n)) !=
      AOTRUN_OK)
    return s;
  *out = calloc(n ? n : 1, sizeof **out);
  if (*out == NULL) return aotrun_manifest_out_of_memory(ctx);
  *count = n;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    s = parse_io(ctx, item, kind, i, &(*out)[i]);
    i++;
    if (s != AOTRUN_OK) return s;
  }
  return AOTRUN_OK;
}

/* ---- methods and the top level ------------------------------------------ */

static aotrun_status parse_method(parse_ctx *ctx, const cJSON *json,
                                  aotrun_program_method *m) {
  char found[96];
  const char *library;
  if (json->string == NULL || json->string[0] == '\0')
    return fail(ctx, "a method has an empty name");
  snprintf(ctx->where, sizeof ctx->where, "method '%s'", json->string);
  if ((m->name = aotrun_manifest_strdup(json->string)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  if (!cJSON_IsObject(json))
    return fail(ctx, "must be an object, found %s",
                aotrun_json_describe(json, found, sizeof found));
  aotrun_status s = aotrun_manifest_string(ctx, json, "library", 1, &library);
  if (s != AOTRUN_OK) return s;
  if ((s = check_plain_file_name(ctx, "library", library)) != AOTRUN_OK)
    return s;
  if ((m->library = aotrun_manifest_strdup(library)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  s = parse_io_list(ctx, json, "inputs", "input", &m->inputs, &m->num_inputs);
  if (s != AOTRUN_OK) return s;
  s = parse_io_list(ctx, json, "outputs", "output", &m->outputs,
                    &m->num_outputs);
  if (s != AOTRUN_OK) return s;
  if ((s = aotrun_program_parse_constants(ctx, json, m)) != AOTRUN_OK) return s;
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
  aotrun_status s = aotrun_manifest_count(ctx, methods, "methods",
                                          AOTRUN_PROGRAM_MAX_METHODS, &n);
  if (s != AOTRUN_OK) return s;
  if (n == 0) return fail(ctx, "field 'methods' has no method");
  if ((p->methods = calloc(n, sizeof *p->methods)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  p->num_methods = n;
  aotrun_name_set names;
  if (aotrun_name_set_init(&names, n) != 0)
    return aotrun_manifest_out_of_memory(ctx);
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
  aotrun_status s = aotrun_manifest_string(ctx, root, "format", 1, &format);
  if (s != AOTRUN_OK) return s;
  if (strcmp(format, "aotrun-program") != 0)
    return fail(ctx, "field 'format' is '%s', expected 'aotrun-program'",
                format);
  if ((s = aotrun_manifest_field_int(ctx, root, "format_version", 1,
                                     &version)) != AOTRUN_OK)
    return s;
  if (version > AOTRUN_PROGRAM_FORMAT_VERSION)
    return aotrun_error_set(ctx->err, AOTRUN_ERR_NOT_SUPPORTED,
                            MANIFEST_PREFIX "format_version %lld is newer "
                            "than this loader supports (%d)",
                            (long long)version, AOTRUN_PROGRAM_FORMAT_VERSION);
  p->format_version = (int32_t)version;
  if ((s = aotrun_manifest_string(ctx, root, "producer", 0, &producer)) !=
      AOTRUN_OK)
    return s;
  if (producer != NULL &&
      (p->producer = aotrun_manifest_strdup(producer)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  if ((s = aotrun_manifest_string(ctx, root, "weights", 0, &weights)) !=
      AOTRUN_OK)
    return s;
  if (weights != NULL) {
    if ((s = check_plain_file_name(ctx, "weights", weights)) != AOTRUN_OK)
      return s;
    if ((p->weights = aotrun_manifest_strdup(weights)) == NULL)
      return aotrun_manifest_out_of_memory(ctx);
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
    s = aotrun_manifest_out_of_memory(&ctx);
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
