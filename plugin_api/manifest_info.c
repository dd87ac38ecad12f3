/* manifest_info.c: small cJSON reading of manifest.json for the CLI. */
#include "plugin_api/manifest_info.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/program.h"
#include "plugin_api/host_error.h"

static aotrun_status malformed(const char *name, const char *what,
                               const char *where) {
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "malformed manifest: %s: %s%s", name, what, where);
}

static const char *string_of(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int is_int(const cJSON *v) {
  return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
         fabs(v->valuedouble) < 9007199254740992.0; /* 2^53 */
}

static aotrun_status parse_io(const char *name, const cJSON *j,
                              manifest_io *io) {
  io->name = string_of(j, "name");
  io->dtype = string_of(j, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
  if (io->name == NULL || io->dtype == NULL || !cJSON_IsArray(shape))
    return malformed(name, "an input/output lacks name, dtype or shape", "");
  int n = cJSON_GetArraySize(shape);
  if (n > AOTRUN_MAX_DIMS)
    return malformed(name, "rank above 16 in ", io->name);
  io->ndim = n;
  for (int d = 0; d < n; d++) {
    const cJSON *v = cJSON_GetArrayItem(shape, d);
    if (cJSON_IsString(v) && v->valuestring[0] != '\0') {
      io->dims[d].size = AOTRUN_DYNAMIC_DIM;
      io->dims[d].symbol = v->valuestring;
    } else if (is_int(v) && v->valuedouble >= 0) {
      io->dims[d].size = (int64_t)v->valuedouble;
      io->dims[d].symbol = NULL;
    } else {
      return malformed(name, "a dim is neither a size nor a symbol in ",
                       io->name);
    }
  }
  return AOTRUN_OK;
}

/* An input's "dims" (the loader validated them): each entry's symbol,
 * scale and offset. */
static void read_dim_exprs(const cJSON *j, manifest_io *io) {
  const cJSON *dims = cJSON_GetObjectItemCaseSensitive(j, "dims");
  for (int d = 0; d < io->ndim; d++) {
    const cJSON *e = cJSON_IsArray(dims) ? cJSON_GetArrayItem(dims, d) : NULL;
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(e, "scale");
    const cJSON *offset = cJSON_GetObjectItemCaseSensitive(e, "offset");
    io->dims[d].range_symbol = cJSON_IsObject(e) ? string_of(e, "symbol")
                                                 : NULL;
    io->dims[d].scale = is_int(scale) ? (int64_t)scale->valuedouble : 1;
    io->dims[d].offset = is_int(offset) ? (int64_t)offset->valuedouble : 0;
  }
}

static aotrun_status parse_io_list(const char *name, const cJSON *m,
                                   const char *key, manifest_io **out,
                                   size_t *count) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, key);
  if (!cJSON_IsArray(list)) return malformed(name, "method lacks ", key);
  *count = (size_t)cJSON_GetArraySize(list);
  *out = calloc(*count ? *count : 1, sizeof **out);
  if (*out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "out of memory");
  size_t i = 0;
  for (const cJSON *e = list->child; e != NULL; e = e->next, i++) {
    aotrun_status s = parse_io(name, e, &(*out)[i]);
    if (s != AOTRUN_OK) return s;
    read_dim_exprs(e, &(*out)[i]);
  }
  return AOTRUN_OK;
}

/* "symbols": {"s0": {"min": 1, "max": 1024, "hint": 4}} (validated by the
 * loader). */
static aotrun_status parse_symbols(const cJSON *m, manifest_method *out) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "symbols");
  if (!cJSON_IsObject(list)) return AOTRUN_OK;
  out->num_symbols = (size_t)cJSON_GetArraySize(list);
  out->symbols = calloc(out->num_symbols + 1, sizeof *out->symbols);
  if (out->symbols == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "out of memory");
  size_t i = 0;
  for (const cJSON *e = list->child; e != NULL; e = e->next, i++) {
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(e, "min");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(e, "max");
    out->symbols[i].name = e->string ? e->string : "";
    out->symbols[i].min = is_int(min) ? (int64_t)min->valuedouble : 0;
    out->symbols[i].max = is_int(max) ? (int64_t)max->valuedouble : -1;
    const cJSON *hint = cJSON_GetObjectItemCaseSensitive(e, "hint");
    out->symbols[i].hint = is_int(hint) ? (int64_t)hint->valuedouble : -1;
  }
  return AOTRUN_OK;
}

/* "constants": the fields inspect shows (the loader checked them all). */
static aotrun_status parse_constants(const char *name, const cJSON *list,
                                     manifest_method *out) {
  out->constants = calloc(out->num_constants + 1, sizeof *out->constants);
  if (out->constants == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "out of memory");
  size_t i = 0;
  for (const cJSON *e = list ? list->child : NULL; e != NULL;
       e = e->next, i++) {
    manifest_constant *c = &out->constants[i];
    const char *internal = string_of(e, "name");
    const char *fqn = string_of(e, "fqn");
    const char *dtype = string_of(e, "dtype");
    const char *device = string_of(e, "device");
    c->name = internal ? internal : "";
    c->fqn = fqn ? fqn : c->name;
    c->dtype = dtype ? dtype : "";
    c->device = device ? device : "";
    const cJSON *nbytes = cJSON_GetObjectItemCaseSensitive(e, "nbytes");
    c->nbytes = is_int(nbytes) ? (int64_t)nbytes->valuedouble : 0;
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(e, "sizes");
    int n = cJSON_IsArray(sizes) ? cJSON_GetArraySize(sizes) : 0;
    if (n > AOTRUN_MAX_DIMS)
      return malformed(name, "rank above 16 in constant ", c->name);
    c->ndim = n;
    for (int d = 0; d < n; d++) {
      const cJSON *v = cJSON_GetArrayItem(sizes, d);
      c->sizes[d] = is_int(v) ? (int64_t)v->valuedouble : 0;
    }
  }
  return AOTRUN_OK;
}

/* "aoti_torch_imports" (optional, written by the exporter): a list of
 * strings; anything else is ignored (has_imports stays 0). */
static aotrun_status parse_imports(const cJSON *m, manifest_method *out) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "aoti_torch_imports");
  if (!cJSON_IsArray(list)) return AOTRUN_OK;
  size_t n = (size_t)cJSON_GetArraySize(list);
  out->imports = calloc(n + 1, sizeof *out->imports);
  if (out->imports == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "out of memory");
  for (const cJSON *e = list->child; e != NULL; e = e->next)
    if (cJSON_IsString(e)) out->imports[out->num_imports++] = e->valuestring;
  out->has_imports = 1;
  return AOTRUN_OK;
}

static aotrun_status parse_method(const char *name, const cJSON *m,
                                  manifest_method *out) {
  out->name = m->string;
  if (out->name == NULL || out->name[0] == '\0' || !cJSON_IsObject(m))
    return malformed(name, "a method has an empty name or is not an object",
                     "");
  out->library = string_of(m, "library");
  if (out->library == NULL)
    return malformed(name, "no library for method ", out->name);
  aotrun_status s = parse_io_list(name, m, "inputs", &out->inputs,
                                  &out->num_inputs);
  if (s == AOTRUN_OK)
    s = parse_io_list(name, m, "outputs", &out->outputs, &out->num_outputs);
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "constants");
  if (s == AOTRUN_OK && c != NULL && !cJSON_IsArray(c))
    s = malformed(name, "constants is not a list in method ", out->name);
  out->num_constants = c != NULL ? (size_t)cJSON_GetArraySize(c) : 0;
  if (s == AOTRUN_OK) s = parse_constants(name, c, out);
  if (s == AOTRUN_OK) s = parse_symbols(m, out);
  if (s == AOTRUN_OK) s = parse_imports(m, out);
  return s;
}

static aotrun_status parse_root(const char *name, const cJSON *root,
                                manifest_info *out) {
  const char *format = string_of(root, "format");
  if (format == NULL || strcmp(format, "aotrun-program") != 0)
    return malformed(name, "format is not \"aotrun-program\"", "");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "format_version");
  if (!is_int(v)) return malformed(name, "format_version is not an integer",
                                   "");
  out->format_version = (int64_t)v->valuedouble;
  if (out->format_version > AOTRUN_PROGRAM_FORMAT_VERSION ||
      out->format_version < 1)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: program format_version %lld is not "
                            "supported (this aotrun reads %d)",
                            name, (long long)out->format_version,
                            AOTRUN_PROGRAM_FORMAT_VERSION);
  const char *producer = string_of(root, "producer");
  out->producer = producer != NULL ? producer : "";
  out->weights = string_of(root, "weights");
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "methods");
  if (!cJSON_IsObject(methods) || methods->child == NULL)
    return malformed(name, "methods is not a non-empty object", "");
  out->num_methods = (size_t)cJSON_GetArraySize(methods);
  out->methods = calloc(out->num_methods, sizeof *out->methods);
  if (out->methods == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "out of memory");
  size_t i = 0;
  for (const cJSON *m = methods->child; m != NULL; m = m->next, i++) {
    aotrun_status s = parse_method(name, m, &out->methods[i]);
    if (s != AOTRUN_OK) return s;
  }
  return AOTRUN_OK;
}

/* The loader's full validation (aot_loader/program.h), so `inspect` and
 * `run` accept and refuse the same manifests, with the loader's detailed
 * message (field, entry, values). */
static aotrun_status validate(const char *name, const void *json,
                              size_t size) {
  aotrun_program *p = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status s = aotrun_program_parse(json, size, &p, &err);
  aotrun_program_destroy(p);
  if (s == AOTRUN_OK) return AOTRUN_OK;
  return aotrun_host_fail(s, "%s: %s", name, err.message);
}

aotrun_status manifest_info_parse(const char *name, const void *json,
                                  size_t size, manifest_info *out) {
  memset(out, 0, sizeof *out);
  aotrun_status v = validate(name, json, size);
  if (v != AOTRUN_OK) return v;
  cJSON *root = cJSON_ParseWithLength(json, size);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return malformed(name, "not a JSON object", "");
  }
  out->root = root;
  aotrun_status s = parse_root(name, root, out);
  if (s != AOTRUN_OK) manifest_info_free(out);
  return s;
}

void manifest_info_free(manifest_info *info) {
  if (info == NULL) return;
  for (size_t i = 0; info->methods != NULL && i < info->num_methods; i++) {
    free(info->methods[i].inputs);
    free(info->methods[i].outputs);
    free(info->methods[i].symbols);
    free(info->methods[i].constants);
    free(info->methods[i].imports);
  }
  free(info->methods);
  cJSON_Delete(info->root);
  memset(info, 0, sizeof *info);
}

const manifest_method *manifest_info_method(const manifest_info *info,
                                            const char *name) {
  for (size_t i = 0; i < info->num_methods; i++)
    if (strcmp(info->methods[i].name, name) == 0) return &info->methods[i];
  return NULL;
}
