/*
 * cli_outputs.c: writing `aotrun run` outputs. --output FILE: one file in
 * the format its extension names (FILE.safetensors: every output keyed by
 * its manifest name, in output order; FILE.npy: the one output of a
 * single-output method). --output-dir D: one D/out<i>.npy per output (the
 * default), or with --output-format safetensors one D/outputs.safetensors
 * (D/call<k>/... when --calls > 1). Files are never written through a
 * symbolic link, and a failed write leaves nothing behind (host_file.c,
 * st_file_write.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin_api/cli.h"
#include "plugin_api/st_file.h"

static int make_dir(const char *dir) {
  if (mkdir(dir, 0777) != 0) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
      return cli_fail(CLI_EXIT_EXECUTE, "cannot create output directory %s",
                      dir);
  }
  return CLI_EXIT_OK;
}

/* D, or D/call<k> when calls > 1; created. */
static int call_dir(const char *base, long call, long calls, char *dir,
                    size_t size) {
  int rc = make_dir(base);
  if (rc != CLI_EXIT_OK) return rc;
  int n = calls > 1 ? snprintf(dir, size, "%s/call%ld", base, call)
                    : snprintf(dir, size, "%s", base);
  if (n < 0 || (size_t)n >= size)
    return cli_fail(CLI_EXIT_USAGE, "output directory name too long: %s",
                    base);
  return calls > 1 ? make_dir(dir) : CLI_EXIT_OK;
}

static int write_one_npy(const char *path, const DLTensor *o) {
  if (aotrun_npy_write(path, o->dtype, o->ndim, o->shape, o->data) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  return CLI_EXIT_OK;
}

static int write_npy(const char *dir, const cli_tensors *t) {
  for (size_t i = 0; i < t->num_outputs; i++) {
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/out%zu.npy", dir, i);
    if (n < 0 || (size_t)n >= sizeof path)
      return cli_fail(CLI_EXIT_USAGE, "output path too long: %s/out%zu.npy",
                      dir, i);
    int rc = write_one_npy(path, &t->outputs[i]);
    if (rc != CLI_EXIT_OK) return rc;
  }
  return CLI_EXIT_OK;
}

/* Output i's key: its declared name, or its index when the name is
 * missing or taken by an earlier output. */
static void output_key(const cli_session *s, size_t i, const char **keys,
                       char (*index_text)[24]) {
  aotrun_io_info info = {.struct_size = sizeof info};
  const char *name = NULL;
  if (aotrun_host_method_io_info(s->handle, AOTRUN_IO_OUTPUT, i, &info) ==
      AOTRUN_OK)
    name = info.name;
  if ((name == NULL || name[0] == '\0') && i < s->method->num_outputs)
    name = s->method->outputs[i].name;
  for (size_t k = 0; name != NULL && k < i; k++)
    if (strcmp(keys[k], name) == 0) name = NULL;
  if (name == NULL || name[0] == '\0' || strcmp(name, "__metadata__") == 0) {
    snprintf(index_text[i], sizeof index_text[i], "%zu", i);
    name = index_text[i];
  }
  keys[i] = name;
}

static int write_safetensors_file(const cli_session *s, const char *path,
                                  const cli_tensors *t) {
  const char *keys[CLI_MAX_LIST];
  char index_text[CLI_MAX_LIST][24];
  for (size_t i = 0; i < t->num_outputs && i < CLI_MAX_LIST; i++)
    output_key(s, i, keys, index_text);
  if (aotrun_st_file_write(path, t->num_outputs, keys, t->outputs) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  return CLI_EXIT_OK;
}

static int write_safetensors(const cli_session *s, const char *dir,
                             const cli_tensors *t) {
  char path[4200];
  int n = snprintf(path, sizeof path, "%s/outputs.safetensors", dir);
  if (n < 0 || (size_t)n >= sizeof path)
    return cli_fail(CLI_EXIT_USAGE,
                    "output path too long: %s/outputs.safetensors", dir);
  return write_safetensors_file(s, path, t);
}

int cli_write_outputs(const cli_session *s, const cli_options *opts,
                      long call, const cli_tensors *t) {
  if (opts->output_file != NULL)
    return cli_is_safetensors_path(opts->output_file)
               ? write_safetensors_file(s, opts->output_file, t)
               : write_one_npy(opts->output_file, &t->outputs[0]);
  char dir[4096];
  int rc = call_dir(opts->output_dir, call, opts->calls, dir, sizeof dir);
  if (rc != CLI_EXIT_OK) return rc;
  return opts->output_safetensors ? write_safetensors(s, dir, t)
                                  : write_npy(dir, t);
}

/* Where the outputs go as .npy files, how to ask for safetensors instead. */
static const char *safetensors_hint(const cli_options *opts) {
  return opts->output_file != NULL
             ? "name a .safetensors file in --output"
             : "use --output-format safetensors";
}

int cli_check_output_format(const cli_session *s, const cli_options *opts) {
  int npy_file = opts->output_file != NULL &&
                 !cli_is_safetensors_path(opts->output_file);
  int npy_dir = opts->output_dir != NULL && !opts->output_safetensors;
  if (!npy_file && !npy_dir) return CLI_EXIT_OK;
  size_t n = 0;
  if (aotrun_host_method_num_io(s->handle, AOTRUN_IO_OUTPUT, &n) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  if (npy_file && n != 1)
    return cli_fail(CLI_EXIT_USAGE,
                    "--output %s: a .npy file holds one output, method %s "
                    "has %zu: name a .safetensors file or use --output-dir",
                    opts->output_file, opts->method, n);
  for (size_t i = 0; i < n; i++) {
    aotrun_io_info info = {.struct_size = sizeof info};
    if (aotrun_host_method_io_info(s->handle, AOTRUN_IO_OUTPUT, i, &info) !=
        AOTRUN_OK)
      return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
    if (aotrun_npy_descr(info.dtype) == NULL)
      return cli_fail(CLI_EXIT_USAGE,
                      "output %zu (%s) is %s, which .npy cannot hold: %s", i,
                      info.name != NULL ? info.name : "?",
                      aotrun_dtype_name(info.dtype), safetensors_hint(opts));
  }
  return CLI_EXIT_OK;
}
