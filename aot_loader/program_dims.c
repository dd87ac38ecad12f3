/*
 * program_dims.c: a method's dynamic-dim ranges in the manifest (the
 * optional "symbols" object and each input's optional "dims" list; see
 * docs/program-format.md, "Dynamic-dim ranges"), parsed strictly: every
 * error names the field, the method/input and the value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/json_read.h"
#include "aot_loader/name_set.h"
#include "aot_loader/program_parse.h"

#define fail aotrun_manifest_fail

/* ---- "symbols": {"s0": {"min": 1, "max": 1024, "hint": 4}, ...} ---- */

/* The optional "hint": the export example's value, inside the range. */
static aotrun_status parse_hint(aotrun_manifest_ctx *ctx, const cJSON *json,
                                aotrun_program_symbol *sym) {
  sym->hint = -1;
  const cJSON *hint = cJSON_GetObjectItemCaseSensitive(json, "hint");
  if (hint == NULL || cJSON_IsNull(hint)) return AOTRUN_OK;
  char label[160];
  snprintf(label, sizeof label, "symbols.%.100s.hint", sym->name);
  aotrun_status s = aotrun_manifest_int(ctx, hint, label, sym->min, &sym->hint);
  if (s == AOTRUN_OK && sym->hint > sym->max)
    return fail(ctx, "field '%s' is %lld, above the symbol's max %lld", label,
                (long long)sym->hint, (long long)sym->max);
  return s;
}

static aotrun_status parse_symbol(aotrun_manifest_ctx *ctx, const cJSON *json,
                                  aotrun_program_symbol *sym) {
  char found[96];
  if (json->string == NULL || json->string[0] == '\0')
    return fail(ctx, "field 'symbols' has an empty symbol name");
  if ((sym->name = aotrun_manifest_strdup(json->string)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  if (!cJSON_IsObject(json))
    return fail(ctx, "symbol '%s' must be an object, found %s", sym->name,
                aotrun_json_describe(json, found, sizeof found));
  char label[160];
  snprintf(label, sizeof label, "symbols.%.100s.min", sym->name);
  const cJSON *min = cJSON_GetObjectItemCaseSensitive(json, "min");
  if (min == NULL) return fail(ctx, "missing field '%s'", label);
  aotrun_status s = aotrun_manifest_int(ctx, min, label, 0, &sym->min);
  if (s != AOTRUN_OK) return s;
  sym->max = AOTRUN_PROGRAM_NO_MAX;
  const cJSON *max = cJSON_GetObjectItemCaseSensitive(json, "max");
  if (max != NULL && !cJSON_IsNull(max)) { /* absent or null: unbounded */
    snprintf(label, sizeof label, "symbols.%.100s.max", sym->name);
    s = aotrun_manifest_int(ctx, max, label, sym->min, &sym->max);
    if (s != AOTRUN_OK) return s;
  }
  return parse_hint(ctx, json, sym);
}

static aotrun_status parse_symbols(aotrun_manifest_ctx *ctx,
                                   const cJSON *list,
                                   aotrun_program_method *m) {
  char found[96];
  if (!cJSON_IsObject(list))
    return fail(ctx, "field 'symbols' must be an object, found %s",
                aotrun_json_describe(list, found, sizeof found));
  size_t n = 0, i = 0;
  aotrun_status s = aotrun_manifest_count(ctx, list, "symbols",
                                          AOTRUN_PROGRAM_MAX_SYMBOLS, &n);
  if (s != AOTRUN_OK) return s;
  if ((m->symbols = calloc(n ? n : 1, sizeof *m->symbols)) == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  m->num_symbols = n;
  aotrun_name_set names;
  if (aotrun_name_set_init(&names, n) != 0)
    return aotrun_manifest_out_of_memory(ctx);
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    s = parse_symbol(ctx, item, &m->symbols[i]);
    /* cJSON keeps duplicate keys; a symbol must have one range. */
    if (s == AOTRUN_OK &&
        aotrun_name_set_add(&names, m->symbols[i].name, i, NULL) == 0)
      s = fail(ctx, "symbol '%s' is defined twice in field 'symbols'",
               m->symbols[i].name);
    if (s != AOTRUN_OK) break;
    i++;
  }
  aotrun_name_set_free(&names);
  return s;
}

static int32_t find_symbol(const aotrun_program_method *m, const char *name) {
  for (size_t i = 0; i < m->num_symbols; i++)
    if (strcmp(m->symbols[i].name, name) == 0) return (int32_t)i;
  return -1;
}

/* ---- an input's "dims": [{"symbol": "s0", "scale": 2, "offset": 1}, null] */

/* The expression's sizes over the symbol's range must fit in int64 (the
 * check at execute computes scale * value + offset). */
static aotrun_status check_expr_bounds(aotrun_manifest_ctx *ctx,
                                       const aotrun_program_method *m,
                                       const aotrun_dim_expr *e,
                                       const char *label) {
  const aotrun_program_symbol *sym = &m->symbols[e->symbol];
  int64_t top = sym->max == AOTRUN_PROGRAM_NO_MAX ? sym->min : sym->max;
  int64_t v;
  if (__builtin_mul_overflow(e->scale, top, &v) ||
      __builtin_add_overflow(v, e->offset, &v))
    return fail(ctx, "field '%s': %lld*%s%+lld overflows a 64-bit size at "
                "%s = %lld", label, (long long)e->scale, sym->name,
                (long long)e->offset, sym->name, (long long)top);
  return AOTRUN_OK;
}

static aotrun_status parse_expr(aotrun_manifest_ctx *ctx,
                                const aotrun_program_method *m,
                                const cJSON *json, const char *label,
                                aotrun_dim_expr *e) {
  char found[96], key[96];
  if (!cJSON_IsObject(json))
    return fail(ctx, "field '%s' must be an object or null, found %s", label,
                aotrun_json_describe(json, found, sizeof found));
  const cJSON *sym = cJSON_GetObjectItemCaseSensitive(json, "symbol");
  if (!cJSON_IsString(sym) || sym->valuestring == NULL)
    return fail(ctx, "field '%s.symbol' must be a symbol name, found %s",
                label, aotrun_json_describe(sym, found, sizeof found));
  e->symbol = find_symbol(m, sym->valuestring);
  if (e->symbol < 0)
    return fail(ctx, "field '%s.symbol' is '%s', not a key of the method's "
                "'symbols'", label, sym->valuestring);
  const cJSON *scale = cJSON_GetObjectItemCaseSensitive(json, "scale");
  const cJSON *offset = cJSON_GetObjectItemCaseSensitive(json, "offset");
  e->scale = 1;
  e->offset = 0;
  aotrun_status s = AOTRUN_OK;
  snprintf(key, sizeof key, "%s.scale", label);
  if (scale != NULL) s = aotrun_manifest_int(ctx, scale, key, 1, &e->scale);
  snprintf(key, sizeof key, "%s.offset", label);
  if (s == AOTRUN_OK && offset != NULL)
    s = aotrun_manifest_int(ctx, offset, key, -AOTRUN_JSON_MAX_EXACT_INT,
                            &e->offset);
  if (s != AOTRUN_OK) return s;
  return check_expr_bounds(ctx, m, e, label);
}

static aotrun_status parse_input_dims(aotrun_manifest_ctx *ctx,
                                      const aotrun_program_method *m,
                                      const cJSON *json,
                                      aotrun_program_io *io) {
  char found[96], label[32];
  const cJSON *dims = cJSON_GetObjectItemCaseSensitive(json, "dims");
  if (dims == NULL) return AOTRUN_OK;
  if (!cJSON_IsArray(dims))
    return fail(ctx, "field 'dims' must be an array, found %s",
                aotrun_json_describe(dims, found, sizeof found));
  int n = cJSON_GetArraySize(dims);
  if (n != io->ndim)
    return fail(ctx, "field 'dims' has %d entries, field 'shape' %d", n,
                (int)io->ndim);
  int d = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, dims) {
    snprintf(label, sizeof label, "dims[%d]", d);
    if (!cJSON_IsNull(item)) {
      if (io->dims[d] >= 0)
        return fail(ctx, "field '%s' describes a static dim (shape[%d] is "
                    "%lld); only symbolic dims have expressions", label, d,
                    (long long)io->dims[d]);
      aotrun_status s = parse_expr(ctx, m, item, label, &io->exprs[d]);
      if (s != AOTRUN_OK) return s;
    }
    d++;
  }
  return AOTRUN_OK;
}

/* A shape string that is a declared symbol's name, without a "dims"
 * entry, is that symbol itself (scale 1, offset 0). */
static void implicit_exprs(const aotrun_program_method *m,
                           aotrun_program_io *io) {
  for (int32_t d = 0; d < io->ndim; d++) {
    if (io->symbols[d] == NULL || io->exprs[d].symbol >= 0) continue;
    io->exprs[d] = (aotrun_dim_expr){find_symbol(m, io->symbols[d]), 1, 0};
  }
}

aotrun_status aotrun_program_parse_dims(aotrun_manifest_ctx *ctx,
                                        const cJSON *json,
                                        aotrun_program_method *m) {
  const cJSON *symbols = cJSON_GetObjectItemCaseSensitive(json, "symbols");
  aotrun_status s = AOTRUN_OK;
  if (symbols != NULL && (s = parse_symbols(ctx, symbols, m)) != AOTRUN_OK)
    return s;
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(json, "inputs");
  size_t base = strlen(ctx->where), i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, inputs) {
    aotrun_program_io *io = &m->inputs[i];
    snprintf(ctx->where + base, sizeof ctx->where - base,
             ": input %zu ('%s')", i, io->name);
    if ((s = parse_input_dims(ctx, m, item, io)) != AOTRUN_OK) return s;
    implicit_exprs(m, io);
    i++;
  }
  ctx->where[base] = '\0';
  return AOTRUN_OK;
}

/* ---- formatting, for messages and `aotrun inspect` ---- */

const char *aotrun_dim_expr_format(const aotrun_program_method *m,
                                   const aotrun_dim_expr *e, char *buf,
                                   size_t size) {
  if (e->symbol < 0 || (size_t)e->symbol >= m->num_symbols) {
    snprintf(buf, size, "?");
    return buf;
  }
  const char *name = m->symbols[e->symbol].name;
  char scale[32] = "";
  if (e->scale != 1) snprintf(scale, sizeof scale, "%lld*", (long long)e->scale);
  if (e->offset == 0)
    snprintf(buf, size, "%s%s", scale, name);
  else
    /* -offset cannot overflow: offsets are at least -2^53. */
    snprintf(buf, size, "%s%s %c %lld", scale, name, e->offset < 0 ? '-' : '+',
             (long long)(e->offset < 0 ? -e->offset : e->offset));
  return buf;
}
