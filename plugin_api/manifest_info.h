/*
 * manifest_info.h: the parts of a program's manifest.json the CLI shows and
 * uses to size outputs (format version, methods, their inputs/outputs with
 * symbolic dims, constants, the exporter's aoti_torch_imports list). The
 * loader's validation runs first (manifest_info_parse).
 */
#ifndef AOTRUN_MANIFEST_INFO_H
#define AOTRUN_MANIFEST_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

#define AOTRUN_PROGRAM_FORMAT_VERSION 1

typedef struct manifest_dim {
  int64_t size;       /* >= 0, or AOTRUN_DYNAMIC_DIM when symbolic */
  const char *symbol; /* e.g. "s0"; NULL for static dims */
  /* Inputs' "dims" entry: size = scale * range_symbol + offset (NULL when
   * the dim has none). */
  const char *range_symbol;
  int64_t scale, offset;
} manifest_dim;

/* One entry of a method's "symbols" (dynamic-dim ranges). */
typedef struct manifest_symbol {
  const char *name;
  int64_t min;
  int64_t max;  /* -1: no upper bound */
  int64_t hint; /* the export example's value; -1: none */
} manifest_symbol;

typedef struct manifest_io {
  const char *name;
  const char *dtype; /* torch name, e.g. "float32" */
  int32_t ndim;
  manifest_dim dims[AOTRUN_MAX_DIMS];
} manifest_io;

/* One entry of a method's "constants" (validated by the loader). */
typedef struct manifest_constant {
  const char *name; /* the library's internal name */
  const char *fqn;  /* key in weights.safetensors; shared across methods */
  const char *dtype;
  const char *device; /* "cuda" or "cpu" */
  int32_t ndim;
  int64_t sizes[AOTRUN_MAX_DIMS];
  int64_t nbytes;
} manifest_constant;

typedef struct manifest_method {
  const char *name;
  const char *library;
  size_t num_inputs, num_outputs, num_constants;
  manifest_io *inputs, *outputs;
  manifest_constant *constants; /* num_constants entries */
  size_t num_symbols;
  manifest_symbol *symbols;
  /* The exporter's "aoti_torch_imports" list (has_imports 0: absent). */
  int has_imports;
  size_t num_imports;
  const char **imports;
} manifest_method;

/* Strings point into the parsed JSON kept in `root`. */
typedef struct manifest_info {
  void *root; /* cJSON tree */
  int64_t format_version;
  const char *producer; /* "" when absent */
  const char *weights;  /* the weights file's key, NULL when absent */
  size_t num_methods;
  manifest_method *methods;
} manifest_info;

/* Parses and checks the manifest bytes; `name` (a path) is used in
 * "malformed manifest: ..." messages. *out is zeroed on failure. */
aotrun_status manifest_info_parse(const char *name, const void *json,
                                  size_t size, manifest_info *out);
void manifest_info_free(manifest_info *info);
/* The method called `name`, or NULL. */
const manifest_method *manifest_info_method(const manifest_info *info,
                                            const char *name);

#endif /* AOTRUN_MANIFEST_INFO_H */
