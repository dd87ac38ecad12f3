/*
 * program_constants.c: a method's "constants" list in the manifest (FQN
 * weight metadata: name, fqn, type, dtype, device, sizes, strides,
 * storage_offset, nbytes; docs/program-format.md), parsed strictly: every
 * error names the constant, its FQN, the method and both values, and a
 * view that does not fit its bytes is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/dims_text.h"
#include "aot_loader/json_read.h"
#include "aot_loader/name_set.h"
#include "aot_loader/program_parse.h"
#include "aot_loader/scalar_type.h"

#define METADATA_PREFIX "malformed FQN weight metadata: "
#define fail aotrun_manifest_fail

typedef aotrun_manifest_ctx parse_ctx;

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
  aotrun_status s = aotrun_manifest_string(ctx, json, "type", 1, &name);
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
  aotrun_status s = aotrun_manifest_string(ctx, json, "device", 1, &name);
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
  aotrun_status s = aotrun_manifest_array(ctx, json, key, &list);
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
    s = aotrun_manifest_int(ctx, item, label, 0, &dims[i]);
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
  aotrun_dims_text(c->sizes, c->ndim, sizes, sizeof sizes);
  aotrun_dims_text(c->strides, c->ndim, strides, sizeof strides);
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
  if ((s = aotrun_manifest_field_int(ctx, json, "storage_offset", 0,
                                     &c->storage_offset)) != AOTRUN_OK)
    return s;
  if ((s = aotrun_manifest_field_int(ctx, json, "nbytes", 0, &value)) !=
      AOTRUN_OK)
    return s;
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
  aotrun_status s = aotrun_manifest_string(ctx, json, "name", 1, &name);
  if (s != AOTRUN_OK) return s;
  snprintf(ctx->where, sizeof ctx->where, "constant '%s'", name);
  if ((s = aotrun_manifest_string(ctx, json, "fqn", 1, &fqn)) != AOTRUN_OK)
    return s;
  snprintf(ctx->where, sizeof ctx->where, "constant '%s' (fqn '%s')", name,
           fqn);
  c->name = aotrun_manifest_strdup(name);
  c->fqn = aotrun_manifest_strdup(fqn);
  if (c->name == NULL || c->fqn == NULL)
    return aotrun_manifest_out_of_memory(ctx);
  if ((s = read_constant_type(ctx, json, &c->type)) != AOTRUN_OK) return s;
  if ((s = aotrun_manifest_dtype(ctx, json, &c->dtype)) != AOTRUN_OK) return s;
  if ((s = read_device(ctx, json, &c->device_type)) != AOTRUN_OK) return s;
  return parse_constant_layout(ctx, json, c);
}

aotrun_status aotrun_program_parse_constants(parse_ctx *ctx,
                                             const cJSON *method,
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
  aotrun_status s = aotrun_manifest_count(ctx, list, "constants",
                                          AOTRUN_PROGRAM_MAX_CONSTANTS, &n);
  if (s != AOTRUN_OK) return s;
  m->constants = calloc(n ? n : 1, sizeof *m->constants);
  if (m->constants == NULL) return aotrun_manifest_out_of_memory(ctx);
  m->num_constants = n;
  aotrun_name_set names;
  if (aotrun_name_set_init(&names, n) != 0)
    return aotrun_manifest_out_of_memory(ctx);
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
