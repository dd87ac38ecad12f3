/*
 * json_read.h: exact reading of JSON from borrowed (possibly mmapped, not
 * NUL-terminated) bytes with cJSON, shared by the manifest and safetensors
 * parsers.
 */
#ifndef AOTRUN_JSON_READ_H
#define AOTRUN_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Largest integer a JSON number (a double in cJSON) holds exactly: larger
 * values are refused rather than silently rounded. */
#define AOTRUN_JSON_MAX_EXACT_INT 9007199254740992LL /* 2^53 */

/* Parses exactly `size` bytes as one JSON value; only whitespace may follow
 * it. Returns NULL on failure with a reason in why ("not valid JSON (error at
 * byte 17)"). The caller frees the result with cJSON_Delete. */
cJSON *aotrun_json_parse(const void *bytes, size_t size, char *why,
                         size_t why_size);

typedef enum aotrun_json_int_result {
  AOTRUN_JSON_INT_OK = 0,
  AOTRUN_JSON_INT_NOT_NUMBER,   /* a string, array, ... */
  AOTRUN_JSON_INT_NOT_INTEGER,  /* 1.5 */
  AOTRUN_JSON_INT_TOO_LARGE,    /* |value| > 2^53 */
} aotrun_json_int_result;

/* Reads an exact integer from a number item. */
aotrun_json_int_result aotrun_json_int(const cJSON *item, int64_t *out);

/* "string", "number 1.5", "array", ... describing item, written into buf
 * (returned). For messages that show what was found. */
const char *aotrun_json_describe(const cJSON *item, char *buf, size_t size);

#endif /* AOTRUN_JSON_READ_H */
