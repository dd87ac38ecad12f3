/*
 * program_fields.c: the manifest parser's field readers and its error
 * wording (program_parse.h), shared by program.c (top level, inputs and
 * outputs), program_constants.c (FQN weight metadata) and program_dims.c
 * (dynamic-dim ranges).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/json_read.h"
#include "aot_loader/program_parse.h"
#include "aot_loader/scalar_type.h"

typedef aotrun_manifest_ctx parse_ctx;

static aotrun_status failv(parse_ctx *ctx, aotrun_status code,
                           const char *fmt, va_list ap) {
  char msg[640];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return aotrun_error_set(ctx->err, code, "%s%s%s%s%s", ctx->prefix,
                          ctx->where, ctx->where[0] ? ": " : "", msg,
                          ctx->suffix);
}

aotrun_status aotrun_manifest_fail(parse_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  aotrun_status s = failv(ctx, AOTRUN_ERR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return s;
}

aotrun_status aotrun_manifest_out_of_memory(parse_ctx *ctx) {
  return aotrun_error_set(ctx->err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory while parsing the manifest");
}


/* Reads obj[key] as a string. Missing: error when required, else *out NULL. */
aotrun_status aotrun_manifest_string(parse_ctx *ctx, const cJSON *obj,
                                 const char *key, int required,
                                 const char **out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char found[96];
  *out = NULL;
  if (item == NULL) {
    if (!required) return AOTRUN_OK;
    return aotrun_manifest_fail(ctx, "missing field '%s'", key);
  }
  if (!cJSON_IsString(item) || item->valuestring == NULL)
    return aotrun_manifest_fail(
        ctx, "field '%s' must be a string, found %s", key,
        aotrun_json_describe(item, found, sizeof found));
  if (item->valuestring[0] == '\0')
    return aotrun_manifest_fail(ctx, "field '%s' is an empty string", key);
  *out = item->valuestring;
  return AOTRUN_OK;
}

/* Reads an exact integer >= min from item, called `label` in messages. */
aotrun_status aotrun_manifest_int(parse_ctx *ctx, const cJSON *item,
                                   const char *label, int64_t min,
                                   int64_t *out) {
  char found[96];
  switch (aotrun_json_int(item, out)) {
    case AOTRUN_JSON_INT_OK:
      break;
    case AOTRUN_JSON_INT_NOT_NUMBER:
      return aotrun_manifest_fail(
          ctx, "field '%s' must be an integer, found %s", label,
          aotrun_json_describe(item, found, sizeof found));
    case AOTRUN_JSON_INT_NOT_INTEGER:
      return aotrun_manifest_fail(ctx, "field '%s' is %.17g, not an integer",
                                  label, item->valuedouble);
    case AOTRUN_JSON_INT_TOO_LARGE:
      return aotrun_manifest_fail(ctx, "field '%s' is %.17g, larger than 2^53",
                                  label, item->valuedouble);
  }
  if (*out < min)
    return aotrun_manifest_fail(ctx,
                                "field '%s' is %lld, must be at least %lld",
                                label, (long long)*out, (long long)min);
  return AOTRUN_OK;
}

aotrun_status aotrun_manifest_field_int(parse_ctx *ctx, const cJSON *obj,
                              const char *key, int64_t min, int64_t *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (item == NULL) return aotrun_manifest_fail(ctx, "missing field '%s'", key);
  return aotrun_manifest_int(ctx, item, key, min, out);
}

/* Reads obj[key] as an array (required). */
aotrun_status aotrun_manifest_array(parse_ctx *ctx, const cJSON *obj,
                                const char *key, const cJSON **out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  char found[96];
  if (item == NULL) return aotrun_manifest_fail(ctx, "missing field '%s'", key);
  if (!cJSON_IsArray(item))
    return aotrun_manifest_fail(
        ctx, "field '%s' must be an array, found %s", key,
        aotrun_json_describe(item, found, sizeof found));
  *out = item;
  return AOTRUN_OK;
}

/* The item count of a list or object, refused above `limit` before
 * anything is allocated for it (see the limits in program.h). */
aotrun_status aotrun_manifest_count(parse_ctx *ctx, const cJSON *list,
                                 const char *key, size_t limit, size_t *n) {
  size_t count = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) count++;
  if (count > limit)
    return aotrun_manifest_fail(
        ctx, "field '%s' has %zu entries, at most %zu are supported", key,
        count, limit);
  *n = count;
  return AOTRUN_OK;
}

aotrun_status aotrun_manifest_dtype(parse_ctx *ctx, const cJSON *obj,
                                int32_t *out) {
  const char *name;
  aotrun_status s = aotrun_manifest_string(ctx, obj, "dtype", 1, &name);
  if (s != AOTRUN_OK) return s;
  const aotrun_scalar_type *t = aotrun_scalar_type_from_name(name);
  if (t == NULL)
    return aotrun_manifest_fail(
        ctx,
        "field 'dtype' is '%s', not a known dtype (float32, "
        "float64, int64, ...; see docs/program-format.md)",
        name);
  *out = t->code;
  return AOTRUN_OK;
}

char *aotrun_manifest_strdup(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}
