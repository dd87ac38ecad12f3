/*
 * program_parse.h: the manifest parser's context and field readers
 * (program_fields.c), shared by program.c (the manifest's top level, inputs
 * and outputs), program_constants.c (FQN weight metadata) and
 * program_dims.c (dynamic-dim ranges). Internal to aot_loader:program.
 */
#ifndef AOTRUN_PROGRAM_PARSE_H
#define AOTRUN_PROGRAM_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "aot_loader/program.h"

/* Where in the manifest we are, for messages: "method 'forward': input 0
 * ('x')" for manifest errors, "constant 'w' (fqn 'l.w')" plus the suffix
 * " (method 'forward')" for FQN weight metadata errors. */
typedef struct aotrun_manifest_ctx {
  aotrun_error *err;
  const char *prefix;
  char where[320];
  char suffix[192];
} aotrun_manifest_ctx;

/* An InvalidArgument error: prefix, where, then the message. */
aotrun_status aotrun_manifest_fail(aotrun_manifest_ctx *ctx, const char *fmt,
                                   ...) __attribute__((format(printf, 2, 3)));
aotrun_status aotrun_manifest_out_of_memory(aotrun_manifest_ctx *ctx);
/* obj[key] as a non-empty string. Missing: an error when required, else
 * *out NULL. */
aotrun_status aotrun_manifest_string(aotrun_manifest_ctx *ctx,
                                     const cJSON *obj, const char *key,
                                     int required, const char **out);
/* obj[key] as an array (required). */
aotrun_status aotrun_manifest_array(aotrun_manifest_ctx *ctx,
                                    const cJSON *obj, const char *key,
                                    const cJSON **out);
/* obj[key] (required) as an exact integer >= min. */
aotrun_status aotrun_manifest_field_int(aotrun_manifest_ctx *ctx,
                                        const cJSON *obj, const char *key,
                                        int64_t min, int64_t *out);
/* obj["dtype"] as a dtype code (scalar_type.h). */
aotrun_status aotrun_manifest_dtype(aotrun_manifest_ctx *ctx,
                                    const cJSON *obj, int32_t *out);
/* An exact integer >= min from item, called `label` in messages. */
aotrun_status aotrun_manifest_int(aotrun_manifest_ctx *ctx, const cJSON *item,
                                  const char *label, int64_t min,
                                  int64_t *out);
/* The entry count of a list or object, refused above limit. */
aotrun_status aotrun_manifest_count(aotrun_manifest_ctx *ctx,
                                    const cJSON *list, const char *key,
                                    size_t limit, size_t *n);
char *aotrun_manifest_strdup(const char *s);

/* Parses the method's optional "constants" list into m->constants
 * (program_constants.c); json is the method's object. */
aotrun_status aotrun_program_parse_constants(aotrun_manifest_ctx *ctx,
                                             const cJSON *json,
                                             aotrun_program_method *m);

/* Parses the method's optional "symbols" and its inputs' optional "dims"
 * (program_dims.c); json is the method's object, m has its inputs. */
aotrun_status aotrun_program_parse_dims(aotrun_manifest_ctx *ctx,
                                        const cJSON *json,
                                        aotrun_program_method *m);

#endif /* AOTRUN_PROGRAM_PARSE_H */
