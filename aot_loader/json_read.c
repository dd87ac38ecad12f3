/* json_read.c: exact JSON reading helpers (see json_read.h). */
#include "aot_loader/json_read.h"

#include <math.h>
#include <stdio.h>

static int is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

cJSON *aotrun_json_parse(const void *bytes, size_t size, char *why,
                         size_t why_size) {
  const char *text = (const char *)bytes;
  if (text == NULL || size == 0) {
    snprintf(why, why_size, "empty (0 bytes), not JSON");
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, 0);
  if (root == NULL) {
    size_t at = (end != NULL && end >= text) ? (size_t)(end - text) : 0;
    snprintf(why, why_size, "not valid JSON (error at byte %zu of %zu)", at,
             size);
    return NULL;
  }
  /* cJSON stops after the first value: anything but whitespace after it is
   * a second value or garbage. */
  size_t at = (size_t)(end - text);
  while (at < size && is_json_space(text[at])) at++;
  if (at < size) {
    snprintf(why, why_size,
             "not valid JSON (unexpected data at byte %zu of %zu after the "
             "value)",
             at, size);
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

aotrun_json_int_result aotrun_json_int(const cJSON *item, int64_t *out) {
  if (!cJSON_IsNumber(item)) return AOTRUN_JSON_INT_NOT_NUMBER;
  double v = item->valuedouble;
  if (!isfinite(v) || v != floor(v)) return AOTRUN_JSON_INT_NOT_INTEGER;
  if (fabs(v) > (double)AOTRUN_JSON_MAX_EXACT_INT)
    return AOTRUN_JSON_INT_TOO_LARGE;
  *out = (int64_t)v;
  return AOTRUN_JSON_INT_OK;
}

const char *aotrun_json_describe(const cJSON *item, char *buf, size_t size) {
  if (item == NULL)
    snprintf(buf, size, "nothing");
  else if (cJSON_IsNumber(item))
    snprintf(buf, size, "number %.17g", item->valuedouble);
  else if (cJSON_IsString(item))
    snprintf(buf, size, "string '%.64s'", item->valuestring);
  else if (cJSON_IsBool(item))
    snprintf(buf, size, "%s", cJSON_IsTrue(item) ? "true" : "false");
  else if (cJSON_IsNull(item))
    snprintf(buf, size, "null");
  else if (cJSON_IsArray(item))
    snprintf(buf, size, "an array");
  else if (cJSON_IsObject(item))
    snprintf(buf, size, "an object");
  else
    snprintf(buf, size, "an invalid value");
  return buf;
}
