/*
 * st_file_write.c: writing named CPU tensors as one .safetensors file (see
 * st_file.h). The JSON header is built with cJSON so names are escaped
 * correctly; integers are written as exact decimal text. Tensors are laid
 * out in the order given, without gaps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aot_loader/safetensors.h"
#include "plugin_api/host_error.h"
#include "plugin_api/host_file.h"
#include "plugin_api/st_file.h"

/* Checks tensor i and computes its byte size without overflow. */
static aotrun_status tensor_bytes(const char *path, const char *name,
                                  const DLTensor *t, size_t *out) {
  if (aotrun_st_dtype_name(t->dtype) == NULL)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "writing %s: tensor '%s' has dtype %s (code %u, "
                            "%u bits, %u lanes), which safetensors cannot "
                            "hold",
                            path, name, aotrun_dtype_name(t->dtype),
                            t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (t->ndim < 0 || t->ndim > AOTRUN_MAX_DIMS ||
      (t->ndim > 0 && t->shape == NULL))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: tensor '%s' has bad rank %d", path,
                            name, (int)t->ndim);
  if (t->device.device_type != kDLCPU)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: tensor '%s' is not in CPU memory "
                            "(device type %d)",
                            path, name, (int)t->device.device_type);
  size_t n = aotrun_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->ndim; d++) {
    int64_t v = t->shape[d];
    if (v < 0)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "writing %s: tensor '%s' dim %d is negative "
                              "(%lld)",
                              path, name, (int)d, (long long)v);
    if (__builtin_mul_overflow(n, (uint64_t)v, &n))
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "writing %s: tensor '%s' overflows the address "
                              "space (dim %d is %lld)",
                              path, name, (int)d, (long long)v);
  }
  if (n != 0 && t->data == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: tensor '%s' has NULL data for %zu "
                            "bytes",
                            path, name, n);
  *out = n;
  return AOTRUN_OK;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names must be non-empty, unique and not the metadata key. */
static aotrun_status check_names(const char *path, size_t count,
                                 const char *const *names) {
  for (size_t i = 0; i < count; i++)
    if (names[i] == NULL || names[i][0] == '\0' ||
        strcmp(names[i], "__metadata__") == 0)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "writing %s: tensor %zu has the name '%s', "
                              "which safetensors cannot use",
                              path, i, names[i] ? names[i] : "(null)");
  if (count < 2) return AOTRUN_OK;
  const char **sorted = malloc(count * sizeof *sorted);
  if (sorted == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "writing %s: out of memory", path);
  memcpy(sorted, names, count * sizeof *sorted);
  qsort(sorted, count, sizeof *sorted, by_name);
  aotrun_status s = AOTRUN_OK;
  for (size_t i = 1; i < count && s == AOTRUN_OK; i++)
    if (strcmp(sorted[i - 1], sorted[i]) == 0)
      s = aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                           "writing %s: two tensors are named '%s'", path,
                           sorted[i]);
  free(sorted);
  return s;
}

/* An exact unsigned integer (cJSON numbers are doubles). */
static int add_uint(cJSON *array, uint64_t v) {
  char text[24];
  snprintf(text, sizeof text, "%llu", (unsigned long long)v);
  cJSON *item = cJSON_CreateRaw(text);
  return item != NULL && cJSON_AddItemToArray(array, item);
}

/* {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}. */
static cJSON *entry_json(const DLTensor *t, uint64_t begin, uint64_t end) {
  cJSON *e = cJSON_CreateObject();
  int ok = e != NULL && cJSON_AddStringToObject(
                            e, "dtype", aotrun_st_dtype_name(t->dtype)) != NULL;
  cJSON *shape = ok ? cJSON_AddArrayToObject(e, "shape") : NULL;
  ok = ok && shape != NULL;
  for (int32_t d = 0; ok && d < t->ndim; d++)
    ok = add_uint(shape, (uint64_t)t->shape[d]);
  cJSON *offsets = ok ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
  ok = ok && offsets != NULL && add_uint(offsets, begin) &&
       add_uint(offsets, end);
  if (!ok) {
    cJSON_Delete(e);
    return NULL;
  }
  return e;
}

/* The header text padded with spaces so the data starts 8-aligned. */
static aotrun_status make_header(const char *path, size_t count,
                                 const char *const *names,
                                 const DLTensor *tensors, const size_t *sizes,
                                 char **text, size_t *len) {
  cJSON *root = cJSON_CreateObject();
  uint64_t offset = 0;
  int ok = root != NULL;
  for (size_t i = 0; ok && i < count; i++) {
    cJSON *e = entry_json(&tensors[i], offset, offset + sizes[i]);
    ok = e != NULL && cJSON_AddItemToObject(root, names[i], e);
    if (e != NULL && !ok) cJSON_Delete(e);
    offset += sizes[i];
  }
  char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (json == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "writing %s: out of memory for the header", path);
  size_t n = strlen(json), padded = (n + 7) / 8 * 8;
  if (padded > AOTRUN_SAFETENSORS_MAX_HEADER) {
    free(json);
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing %s: the header would be %zu bytes, "
                            "above the limit of %llu",
                            path, padded,
                            (unsigned long long)AOTRUN_SAFETENSORS_MAX_HEADER);
  }
  char *p = realloc(json, padded ? padded : 1);
  if (p == NULL) {
    free(json);
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "writing %s: out of memory for the header", path);
  }
  memset(p + n, ' ', padded - n);
  *text = p;
  *len = padded;
  return AOTRUN_OK;
}

static aotrun_status put(const char *path, FILE *f, const void *p, size_t n) {
  if (n != 0 && fwrite(p, 1, n, f) != n)
    return aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "error writing %s: %s",
                            path, strerror(errno));
  return AOTRUN_OK;
}

/* Length prefix, header, then every tensor's bytes. */
static aotrun_status write_file(const char *path, const char *header,
                                size_t hlen, size_t count,
                                const DLTensor *tensors, const size_t *sizes) {
  FILE *f = NULL;
  aotrun_status s = aotrun_host_file_create(path, &f);
  if (s != AOTRUN_OK) return s;
  uint8_t prefix[8];
  for (int i = 0; i < 8; i++) prefix[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
  s = put(path, f, prefix, sizeof prefix);
  if (s == AOTRUN_OK) s = put(path, f, header, hlen);
  for (size_t i = 0; s == AOTRUN_OK && i < count; i++)
    s = put(path, f, (const char *)tensors[i].data + tensors[i].byte_offset,
            sizes[i]);
  if (fclose(f) != 0 && s == AOTRUN_OK)
    s = aotrun_host_fail(AOTRUN_ERR_ACCESS_FAILED, "error writing %s: %s",
                         path, strerror(errno));
  if (s != AOTRUN_OK) unlink(path); /* leave nothing half-written behind */
  return s;
}

aotrun_status aotrun_st_file_write(const char *path, size_t count,
                                   const char *const *names,
                                   const DLTensor *tensors) {
  if (path == NULL || (count > 0 && (names == NULL || tensors == NULL)))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "writing a .safetensors file: NULL argument");
  aotrun_status s = check_names(path, count, names);
  size_t *sizes = calloc(count ? count : 1, sizeof *sizes);
  if (s == AOTRUN_OK && sizes == NULL)
    s = aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY, "writing %s: out of memory",
                         path);
  uint64_t total = 0;
  for (size_t i = 0; s == AOTRUN_OK && i < count; i++) {
    s = tensor_bytes(path, names[i], &tensors[i], &sizes[i]);
    /* Offsets are JSON integers: readers take them exactly up to 2^53. */
    if (s == AOTRUN_OK && (__builtin_add_overflow(total, sizes[i], &total) ||
                           total > ((uint64_t)1 << 53)))
      s = aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                           "writing %s: the tensors exceed 2^53 bytes in all "
                           "(at tensor '%s')",
                           path, names[i]);
  }
  char *header = NULL;
  size_t hlen = 0;
  if (s == AOTRUN_OK)
    s = make_header(path, count, names, tensors, sizes, &header, &hlen);
  if (s == AOTRUN_OK)
    s = write_file(path, header, hlen, count, tensors, sizes);
  free(header);
  free(sizes);
  return s;
}
