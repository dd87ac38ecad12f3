/* cli_file_kind.c: which tensor file format a path names, by its extension
 * (any case): --input reads .safetensors or else .npy; --output writes the
 * format its extension names. */
#include <string.h>
#include <strings.h>

#include "plugin_api/cli.h"

static int has_extension(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && strcasecmp(path + n - e, ext) == 0;
}

int cli_is_safetensors_path(const char *path) {
  return has_extension(path, ".safetensors");
}

int cli_is_npy_path(const char *path) { return has_extension(path, ".npy"); }
