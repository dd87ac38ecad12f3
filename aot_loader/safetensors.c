/*
 * safetensors.c: validating parser of a borrowed safetensors file (see
 * safetensors.h). Only the header's metadata is copied; data stays in place.
 */
#include "aot_loader/safetensors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aot_loader/json_read.h"
#include "aot_loader/scalar_type.h"

struct aotrun_safetensors {
  char *name;
  const uint8_t *data; /* start of the data region */
  uint64_t data_size;
  size_t num_entries;
  aotrun_safetensors_entry *entries; /* sorted by key */
};

static aotrun_status fail(aotrun_error *err, const char *file,
                          const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static aotrun_status fail(aotrun_error *err, const char *file,
                          const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          "malformed safetensors file '%s': %s", file, msg);
}

static aotrun_status out_of_memory(aotrun_error *err, const char *file) {
  return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory while parsing safetensors file '%s'",
                          file);
}

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

/* Reads an exact non-negative integer; describes the problem in why. */
static int read_uint(const cJSON *item, uint64_t *out, char *why,
                     size_t why_size) {
  int64_t v = 0;
  char found[96];
  switch (aotrun_json_int(item, &v)) {
    case AOTRUN_JSON_INT_OK:
      break;
    case AOTRUN_JSON_INT_NOT_NUMBER:
      snprintf(why, why_size, "must be an integer, found %s",
               aotrun_json_describe(item, found, sizeof found));
      return 0;
    case AOTRUN_JSON_INT_NOT_INTEGER:
      snprintf(why, why_size, "is %.17g, not an integer", item->valuedouble);
      return 0;
    case AOTRUN_JSON_INT_TOO_LARGE:
      snprintf(why, why_size, "is %.17g, larger than 2^53", item->valuedouble);
      return 0;
  }
  if (v < 0) {
    snprintf(why, why_size, "is %lld, must be non-negative", (long long)v);
    return 0;
  }
  *out = (uint64_t)v;
  return 1;
}

/* dtype and shape of one entry; computes its byte size without overflow. */
static aotrun_status parse_dtype_shape(aotrun_safetensors *st,
                                       const cJSON *json,
                                       aotrun_safetensors_entry *e,
                                       int64_t **shape, uint64_t *bytes,
                                       aotrun_error *err) {
  char found[96], why[160];
  const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(json, "dtype");
  const cJSON *dims = cJSON_GetObjectItemCaseSensitive(json, "shape");
  if (!cJSON_IsString(dtype))
    return fail(err, st->name, "entry '%s': 'dtype' must be a string, found %s",
                e->key, aotrun_json_describe(dtype, found, sizeof found));
  const aotrun_scalar_type *t =
      aotrun_scalar_type_from_safetensors_name(dtype->valuestring);
  if (t == NULL)
    return fail(err, st->name, "entry '%s': unknown dtype '%s'", e->key,
                dtype->valuestring);
  e->dtype = t->code;
  if (!cJSON_IsArray(dims))
    return fail(err, st->name, "entry '%s': 'shape' must be an array, found %s",
                e->key, aotrun_json_describe(dims, found, sizeof found));
  e->ndim = (size_t)cJSON_GetArraySize(dims);
  *shape = calloc(e->ndim ? e->ndim : 1, sizeof **shape);
  if (*shape == NULL) return out_of_memory(err, st->name);
  e->shape = *shape;
  uint64_t total = t->itemsize;
  for (size_t i = 0; i < e->ndim; i++) {
    uint64_t d = 0;
    if (!read_uint(cJSON_GetArrayItem(dims, (int)i), &d, why, sizeof why))
      return fail(err, st->name, "entry '%s': shape[%zu] %s", e->key, i, why);
    (*shape)[i] = (int64_t)d;
    if (__builtin_mul_overflow(total, d, &total))
      return fail(err, st->name, "entry '%s': shape's byte size overflows 64 "
                  "bits (dim %zu is %llu)", e->key, i, (unsigned long long)d);
  }
  *bytes = total;
  return AOTRUN_OK;
}

static aotrun_status parse_offsets(aotrun_safetensors *st, const cJSON *json,
                                   aotrun_safetensors_entry *e,
                                   aotrun_error *err) {
  char found[96], why[160];
  const cJSON *offs = cJSON_GetObjectItemCaseSensitive(json, "data_offsets");
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
    return fail(err, st->name, "entry '%s': 'data_offsets' must be an array "
                "of 2 integers, found %s", e->key,
                aotrun_json_describe(offs, found, sizeof found));
  if (!read_uint(cJSON_GetArrayItem(offs, 0), &e->begin, why, sizeof why))
    return fail(err, st->name, "entry '%s': data_offsets[0] %s", e->key, why);
  if (!read_uint(cJSON_GetArrayItem(offs, 1), &e->end, why, sizeof why))
    return fail(err, st->name, "entry '%s': data_offsets[1] %s", e->key, why);
  if (e->begin > e->end)
    return fail(err, st->name, "entry '%s': data_offsets begin %llu is after "
                "end %llu", e->key, (unsigned long long)e->begin,
                (unsigned long long)e->end);
  if (e->end > st->data_size)
    return fail(err, st->name, "entry '%s': data_offsets end %llu is past the "
                "end of the data region (%llu bytes)", e->key,
                (unsigned long long)e->end,
                (unsigned long long)st->data_size);
  e->nbytes = e->end - e->begin;
  e->data = st->data + e->begin;
  return AOTRUN_OK;
}

static aotrun_status parse_entry(aotrun_safetensors *st, const cJSON *json,
                                 aotrun_safetensors_entry *e,
                                 aotrun_error *err) {
  char found[96];
  int64_t *shape = NULL;
  uint64_t bytes = 0;
  if ((e->key = dup_string(json->string)) == NULL)
    return out_of_memory(err, st->name);
  if (!cJSON_IsObject(json))
    return fail(err, st->name, "entry '%s' must be an object, found %s",
                e->key, aotrun_json_describe(json, found, sizeof found));
  aotrun_status s = parse_dtype_shape(st, json, e, &shape, &bytes, err);
  if (s != AOTRUN_OK) return s;
  if ((s = parse_offsets(st, json, e, err)) != AOTRUN_OK) return s;
  if (e->nbytes != bytes) {
    char dt[48];
    return fail(err, st->name, "entry '%s': data_offsets span %llu bytes, "
                "but its shape needs %llu bytes of %s", e->key,
                (unsigned long long)e->nbytes, (unsigned long long)bytes,
                aotrun_scalar_type_describe(e->dtype, dt, sizeof dt));
  }
  return AOTRUN_OK;
}

/* __metadata__ is a string-to-string object (ignored otherwise). */
static aotrun_status check_metadata(aotrun_safetensors *st, const cJSON *json,
                                    aotrun_error *err) {
  char found[96];
  if (!cJSON_IsObject(json))
    return fail(err, st->name, "'__metadata__' must be an object, found %s",
                aotrun_json_describe(json, found, sizeof found));
  for (const cJSON *kv = json->child; kv != NULL; kv = kv->next) {
    if (!cJSON_IsString(kv))
      return fail(err, st->name, "'__metadata__' value '%s' must be a string, "
                  "found %s", kv->string,
                  aotrun_json_describe(kv, found, sizeof found));
  }
  return AOTRUN_OK;
}

static int by_begin(const void *a, const void *b) {
  typedef const aotrun_safetensors_entry *entry_ptr;
  entry_ptr x = *(const entry_ptr *)a, y = *(const entry_ptr *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->end < y->end ? -1 : (x->end > y->end);
}

static int by_key(const void *a, const void *b) {
  return strcmp(((const aotrun_safetensors_entry *)a)->key,
                ((const aotrun_safetensors_entry *)b)->key);
}

/* Sorts by begin and compares each non-empty entry with the furthest-reaching
 * one before it (zero-byte entries overlap nothing). */
static aotrun_status check_overlaps(aotrun_safetensors *st,
                                    aotrun_error *err) {
  size_t n = st->num_entries;
  if (n < 2) return AOTRUN_OK;
  const aotrun_safetensors_entry **order = malloc(n * sizeof *order);
  if (order == NULL) return out_of_memory(err, st->name);
  for (size_t i = 0; i < n; i++) order[i] = &st->entries[i];
  qsort(order, n, sizeof *order, by_begin);
  const aotrun_safetensors_entry *reach = order[0];
  aotrun_status s = AOTRUN_OK;
  for (size_t i = 1; i < n && s == AOTRUN_OK; i++) {
    const aotrun_safetensors_entry *e = order[i];
    if (e->nbytes > 0 && e->begin < reach->end) {
      s = fail(err, st->name, "entries '%s' [%llu, %llu) and '%s' [%llu, "
               "%llu) overlap", reach->key, (unsigned long long)reach->begin,
               (unsigned long long)reach->end, e->key,
               (unsigned long long)e->begin, (unsigned long long)e->end);
    }
    if (e->end > reach->end) reach = e;
  }
  free(order);
  return s;
}

static aotrun_status parse_entries(aotrun_safetensors *st, const cJSON *root,
                                   aotrun_error *err) {
  size_t n = 0;
  for (const cJSON *c = root->child; c != NULL; c = c->next)
    if (strcmp(c->string, "__metadata__") != 0) n++;
  st->entries = calloc(n ? n : 1, sizeof *st->entries);
  if (st->entries == NULL) return out_of_memory(err, st->name);
  for (const cJSON *c = root->child; c != NULL; c = c->next) {
    aotrun_status s;
    if (strcmp(c->string, "__metadata__") == 0) {
      s = check_metadata(st, c, err);
    } else {
      s = parse_entry(st, c, &st->entries[st->num_entries++], err);
    }
    if (s != AOTRUN_OK) return s;
  }
  qsort(st->entries, st->num_entries, sizeof *st->entries, by_key);
  for (size_t i = 1; i < st->num_entries; i++) {
    if (strcmp(st->entries[i - 1].key, st->entries[i].key) == 0)
      return fail(err, st->name, "entry '%s' appears twice",
                  st->entries[i].key);
  }
  return check_overlaps(st, err);
}

/* Reads the length prefix and parses the JSON header. */
static aotrun_status parse_header(aotrun_safetensors *st, const uint8_t *p,
                                  size_t size, cJSON **root,
                                  aotrun_error *err) {
  char why[128], found[96];
  if (size < 8)
    return fail(err, st->name, "the file is %zu bytes, shorter than the "
                "8-byte header length", size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | p[i]; /* little-endian */
  if (n > (uint64_t)size - 8)
    return fail(err, st->name, "header length %llu is past the end of the "
                "file (%zu bytes after the length)", (unsigned long long)n,
                size - 8);
  if (n > AOTRUN_SAFETENSORS_MAX_HEADER)
    return fail(err, st->name, "header length %llu is larger than the limit "
                "%llu", (unsigned long long)n,
                (unsigned long long)AOTRUN_SAFETENSORS_MAX_HEADER);
  *root = aotrun_json_parse(p + 8, (size_t)n, why, sizeof why);
  if (*root == NULL) return fail(err, st->name, "the header is %s", why);
  if (!cJSON_IsObject(*root))
    return fail(err, st->name, "the header must be a JSON object, found %s",
                aotrun_json_describe(*root, found, sizeof found));
  st->data = p + 8 + n;
  st->data_size = (uint64_t)size - 8 - n;
  return AOTRUN_OK;
}

aotrun_status aotrun_safetensors_parse(const void *bytes, size_t size,
                                       const char *name,
                                       aotrun_safetensors **out,
                                       aotrun_error *err) {
  *out = NULL;
  const char *label = name ? name : "(unnamed)";
  aotrun_safetensors *st = calloc(1, sizeof *st);
  if (st == NULL || (st->name = dup_string(label)) == NULL) {
    free(st);
    return out_of_memory(err, label);
  }
  cJSON *root = NULL;
  aotrun_status s;
  if (bytes == NULL && size > 0)
    s = fail(err, label, "no bytes (NULL data of %zu bytes)", size);
  else
    s = parse_header(st, bytes, size, &root, err);
  if (s == AOTRUN_OK) s = parse_entries(st, root, err);
  cJSON_Delete(root);
  if (s != AOTRUN_OK) {
    aotrun_safetensors_destroy(st);
    return s;
  }
  *out = st;
  return AOTRUN_OK;
}

void aotrun_safetensors_destroy(aotrun_safetensors *st) {
  if (st == NULL) return;
  for (size_t i = 0; i < st->num_entries; i++) {
    free((char *)st->entries[i].key);
    free((int64_t *)st->entries[i].shape);
  }
  free(st->entries);
  free(st->name);
  free(st);
}

const char *aotrun_safetensors_name(const aotrun_safetensors *st) {
  return st->name;
}

size_t aotrun_safetensors_num_entries(const aotrun_safetensors *st) {
  return st->num_entries;
}

const aotrun_safetensors_entry *aotrun_safetensors_entry_at(
    const aotrun_safetensors *st, size_t index) {
  return index < st->num_entries ? &st->entries[index] : NULL;
}

const aotrun_safetensors_entry *aotrun_safetensors_find(
    const aotrun_safetensors *st, const char *key) {
  if (key == NULL) return NULL;
  aotrun_safetensors_entry probe = {.key = key};
  return bsearch(&probe, st->entries, st->num_entries, sizeof *st->entries,
                 by_key);
}
