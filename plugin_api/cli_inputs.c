/*
 * cli_inputs.c: which --input file feeds which method input.
 *
 * Only .npy files (the original rule, unchanged): the i-th --input is input
 * i. With a .safetensors file among them (chosen by the file extension):
 *   1. every tensor of every .safetensors file names one input, by the
 *      input's manifest name or else by its index in decimal ("0", "1");
 *      a tensor naming no input, or an input given twice, is an error;
 *   2. the .npy files then fill the inputs still missing, lowest index
 *      first, in command-line order;
 *   3. an input still missing, or a .npy file left over, is an error.
 * Each input remembers where it came from, for the dtype/shape messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"
#include "plugin_api/st_file.h"


/* The inputs being filled: arrays and labels (NULL: not given yet). */
typedef struct input_slots {
  const cli_session *s;
  size_t n;
  const char *names[CLI_MAX_LIST]; /* declared names ("?" when absent) */
  aotrun_npy *arrays;
  char **labels;
} input_slots;

static char *label_of(const char *file, const char *tensor) {
  size_t n = strlen(file) + (tensor ? strlen(tensor) : 0) + 16;
  char *l = malloc(n);
  if (l == NULL) return NULL;
  if (tensor != NULL)
    snprintf(l, n, "%s tensor '%s'", file, tensor);
  else
    snprintf(l, n, "%s", file);
  return l;
}

/* A decimal index without sign or leading zeros, below n; else -1. */
static long index_of(const char *key, size_t n) {
  size_t len = strlen(key);
  if (len == 0 || len > 4 || (len > 1 && key[0] == '0')) return -1;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (key[i] < '0' || key[i] > '9') return -1;
    v = v * 10 + (key[i] - '0');
  }
  return (size_t)v < n ? v : -1;
}

/* Name first (a name that looks like a number still means the name). */
static long resolve(const input_slots *in, const char *key) {
  for (size_t i = 0; i < in->n; i++)
    if (strcmp(in->names[i], key) == 0) return (long)i;
  return index_of(key, in->n);
}

/* "x, mask" (shortened past the buffer) for the unknown-name message. */
static void list_names(const input_slots *in, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < in->n && used < size; i++) {
    int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     in->names[i]);
    if (w < 0 || (size_t)w >= size - used) {
      snprintf(buf + (size > 4 ? size - 4 : 0), size > 4 ? 4 : size, "...");
      return;
    }
    used += (size_t)w;
  }
}

static int take_tensor(input_slots *in, const char *file,
                       const aotrun_st_tensor *t) {
  long k = resolve(in, t->name);
  const char *method = in->s->method->name;
  if (k < 0) {
    char names[512], indices[48] = "no index";
    list_names(in, names, sizeof names);
    if (in->n == 1) snprintf(indices, sizeof indices, "index 0");
    if (in->n > 1) snprintf(indices, sizeof indices, "index 0..%zu", in->n - 1);
    return cli_fail(CLI_EXIT_PROGRAM,
                    "input %s: tensor '%s' is not an input of method '%s' "
                    "(its inputs: %s; or by %s)",
                    file, t->name, method, in->n ? names : "none", indices);
  }
  if (in->labels[k] != NULL)
    return cli_fail(CLI_EXIT_PROGRAM,
                    "input %ld (%s) of method '%s' is given twice: by %s and "
                    "by %s tensor '%s'",
                    k, in->names[k], method, in->labels[k], file, t->name);
  if (aotrun_st_tensor_copy(t, &in->arrays[k]) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "input %s: %s", file,
                    aotrun_host_last_error());
  if ((in->labels[k] = label_of(file, t->name)) == NULL)
    return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  return CLI_EXIT_OK;
}

static int take_safetensors(input_slots *in, const char *file) {
  aotrun_st_file f;
  if (aotrun_st_file_read(file, &f) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "input: %s", aotrun_host_last_error());
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < f.count; i++)
    rc = take_tensor(in, file, &f.tensors[i]);
  aotrun_st_file_free(&f);
  return rc;
}

static int take_npy(input_slots *in, const char *file) {
  size_t k = 0;
  while (k < in->n && in->labels[k] != NULL) k++;
  if (k == in->n)
    return cli_fail(CLI_EXIT_PROGRAM,
                    "input %s: every input of method '%s' is already given "
                    "(%zu input(s)); a .npy file fills a missing one",
                    file, in->s->method->name, in->n);
  if (aotrun_npy_read(file, &in->arrays[k]) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "input %zu: %s", k,
                    aotrun_host_last_error());
  if ((in->labels[k] = label_of(file, NULL)) == NULL)
    return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  return CLI_EXIT_OK;
}

static int check_complete(const input_slots *in) {
  for (size_t k = 0; k < in->n; k++)
    if (in->labels[k] == NULL)
      return cli_fail(CLI_EXIT_PROGRAM,
                      "input %zu (%s) of method '%s' is missing: no "
                      "safetensors tensor '%s' or '%zu', and no .npy file "
                      "left for it",
                      k, in->names[k], in->s->method->name, in->names[k], k);
  return CLI_EXIT_OK;
}

/* The declared input names, from the backend (or the manifest). */
static int load_names(input_slots *in) {
  if (aotrun_host_method_num_io(in->s->handle, AOTRUN_IO_INPUT, &in->n) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  if (in->n > CLI_MAX_LIST)
    return cli_fail(CLI_EXIT_EXECUTE, "method has %zu inputs (max %d)", in->n,
                    CLI_MAX_LIST);
  for (size_t i = 0; i < in->n; i++) {
    aotrun_io_info info = {.struct_size = sizeof info};
    if (aotrun_host_method_io_info(in->s->handle, AOTRUN_IO_INPUT, i, &info) !=
        AOTRUN_OK)
      return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
    const manifest_method *m = in->s->method;
    in->names[i] = info.name != NULL && info.name[0] ? info.name
                   : i < m->num_inputs               ? m->inputs[i].name
                                                     : "?";
  }
  return CLI_EXIT_OK;
}

/* Safetensors files first, then .npy files into the gaps. */
static int from_mixed(const cli_session *s, const cli_options *opts,
                      cli_tensors *t) {
  input_slots in = {.s = s};
  int rc = load_names(&in);
  size_t n = rc == CLI_EXIT_OK ? in.n : 0;
  in.arrays = calloc(n ? n : 1, sizeof *in.arrays);
  in.labels = calloc(n ? n : 1, sizeof *in.labels);
  if (rc == CLI_EXIT_OK && (in.arrays == NULL || in.labels == NULL))
    rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  for (size_t i = 0; rc == CLI_EXIT_OK && i < opts->num_inputs; i++)
    if (cli_is_safetensors_path(opts->inputs[i]))
      rc = take_safetensors(&in, opts->inputs[i]);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < opts->num_inputs; i++)
    if (!cli_is_safetensors_path(opts->inputs[i]))
      rc = take_npy(&in, opts->inputs[i]);
  if (rc == CLI_EXIT_OK) rc = check_complete(&in);
  if (rc == CLI_EXIT_OK)
    return cli_tensors_prepare(s, in.arrays, n, in.labels, t);
  memset(t, 0, sizeof *t); /* zeroed entries free cleanly */
  t->in_arrays = in.arrays;
  t->in_labels = in.labels;
  t->num_inputs = in.arrays != NULL && in.labels != NULL ? n : 0;
  return rc;
}

/* The original rule: the i-th file is input i. */
static int from_npy_files(const cli_session *s, const cli_options *opts,
                          cli_tensors *t) {
  size_t n = opts->num_inputs;
  aotrun_npy *arrays = calloc(n ? n : 1, sizeof *arrays);
  if (arrays == NULL) return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (aotrun_npy_read(opts->inputs[i], &arrays[i]) != AOTRUN_OK) {
      int rc = cli_fail(CLI_EXIT_PROGRAM, "input %zu: %s", i,
                        aotrun_host_last_error());
      memset(t, 0, sizeof *t);
      t->in_arrays = arrays;
      t->num_inputs = n; /* zeroed entries free cleanly */
      return rc;
    }
  }
  return cli_tensors_prepare(s, arrays, n, NULL, t);
}

int cli_tensors_from_files(const cli_session *s, const cli_options *opts,
                           cli_tensors *t) {
  for (size_t i = 0; i < opts->num_inputs; i++)
    if (cli_is_safetensors_path(opts->inputs[i]))
      return from_mixed(s, opts, t);
  return from_npy_files(s, opts, t);
}
