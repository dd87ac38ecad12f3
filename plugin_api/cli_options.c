/* cli_options.c: the option parser shared by every subcommand. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"

int cli_exit_for_status(aotrun_status s) {
  return (s == AOTRUN_ERR_INVALID_ARGUMENT || s == AOTRUN_ERR_NOT_FOUND)
             ? CLI_EXIT_PROGRAM
             : CLI_EXIT_EXECUTE;
}

static const struct {
  const char *name;
  unsigned flag;
} kOptions[] = {
    {"--plugin", CLI_OPT_PLUGIN},         {"--backend", CLI_OPT_BACKEND},
    {"--method", CLI_OPT_METHOD},         {"--input", CLI_OPT_INPUT},
    {"--output-dir", CLI_OPT_OUTPUT_DIR}, {"--iterations", CLI_OPT_ITERATIONS},
    {"--warmup", CLI_OPT_WARMUP},         {"--option", CLI_OPT_OPTION},
    {"--calls", CLI_OPT_CALLS},
    {"--output-format", CLI_OPT_OUTPUT_FORMAT},
    {"--device-io", CLI_OPT_DEVICE_IO},
    {"--json", CLI_OPT_JSON},
    {"--no-gpu-time", CLI_OPT_NO_GPU_TIME},
    {"--load", CLI_OPT_LOAD},
    {"--device", CLI_OPT_DEVICE},
    {"--output", CLI_OPT_OUTPUT},
};

/* Options that take no value. */
#define CLI_FLAGS \
  (CLI_OPT_DEVICE_IO | CLI_OPT_JSON | CLI_OPT_NO_GPU_TIME | CLI_OPT_LOAD)

/* A decimal count in [min, max]; the message names the option, the value
 * and the limit. */
static int parse_count(const char *opt, const char *text, long min, long max,
                       long *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || (errno != 0 && errno != ERANGE) ||
      (errno == 0 && v < min))
    return cli_fail(CLI_EXIT_USAGE, "%s needs an integer >= %ld, got '%s'",
                    opt, min, text);
  if (errno == ERANGE || v > max)
    return cli_fail(CLI_EXIT_USAGE, "%s %s is above the limit of %ld", opt,
                    text, max);
  *out = v;
  return CLI_EXIT_OK;
}

static int append(const char *opt, const char **list, size_t *n,
                  const char *value) {
  if (*n == CLI_MAX_LIST)
    return cli_fail(CLI_EXIT_USAGE, "too many %s options (max %d)", opt,
                    CLI_MAX_LIST);
  list[(*n)++] = value;
  return CLI_EXIT_OK;
}

/* Stores the value of one recognised option. */
static int store(cli_options *o, unsigned flag, const char *opt,
                 const char *v) {
  switch (flag) {
    case CLI_OPT_PLUGIN: return append(opt, o->plugins, &o->num_plugins, v);
    case CLI_OPT_INPUT: return append(opt, o->inputs, &o->num_inputs, v);
    case CLI_OPT_BACKEND: o->backend = v; return CLI_EXIT_OK;
    case CLI_OPT_METHOD: o->method = v; return CLI_EXIT_OK;
    case CLI_OPT_OUTPUT_DIR: o->output_dir = v; return CLI_EXIT_OK;
    case CLI_OPT_ITERATIONS:
      return parse_count(opt, v, 1, CLI_MAX_ITERATIONS, &o->iterations);
    case CLI_OPT_CALLS: return parse_count(opt, v, 1, CLI_MAX_CALLS, &o->calls);
    case CLI_OPT_DEVICE: /* the backend checks it against its devices */
      return parse_count(opt, v, 0, INT32_MAX, &o->device);
    case CLI_OPT_OUTPUT_FORMAT:
      if (strcmp(v, "npy") != 0 && strcmp(v, "safetensors") != 0)
        return cli_fail(CLI_EXIT_USAGE, "%s must be npy or safetensors, got "
                                        "'%s'",
                        opt, v);
      o->output_safetensors = v[0] == 's';
      o->output_format_given = 1;
      return CLI_EXIT_OK;
    case CLI_OPT_OUTPUT:
      if (!cli_is_safetensors_path(v) && !cli_is_npy_path(v))
        return cli_fail(CLI_EXIT_USAGE, "%s '%s': the file name must end in "
                                        ".safetensors or .npy (its format)",
                        opt, v);
      o->output_file = v;
      return CLI_EXIT_OK;
    case CLI_OPT_OPTION:
      if (strchr(v, '=') == NULL || v[0] == '=')
        return cli_fail(CLI_EXIT_USAGE, "%s needs KEY=VALUE, got '%s'", opt, v);
      return append(opt, o->options, &o->num_options, v);
    default: return parse_count(opt, v, 0, CLI_MAX_WARMUP, &o->warmup);
  }
}

/* --output FILE names its format by extension; --output-dir D writes one
 * file per output (or D/outputs.safetensors) and per call. */
static int check_output_choice(const char *cmd, const cli_options *o) {
  if (o->output_file != NULL && o->output_dir != NULL)
    return cli_fail(CLI_EXIT_USAGE, "%s: --output and --output-dir cannot be "
                                    "combined",
                    cmd);
  if (o->output_file != NULL && o->output_format_given)
    return cli_fail(CLI_EXIT_USAGE, "%s: --output %s takes its format from "
                                    "its extension; drop --output-format",
                    cmd, o->output_file);
  if (o->output_file != NULL && o->calls > 1)
    return cli_fail(CLI_EXIT_USAGE, "%s: --output %s holds one call's "
                                    "outputs; with --calls %ld use "
                                    "--output-dir D (D/call<k>/...)",
                    cmd, o->output_file, o->calls);
  if (o->output_safetensors && o->output_dir == NULL)
    return cli_fail(CLI_EXIT_USAGE, "%s: --output-format safetensors needs "
                                    "--output-dir",
                    cmd);
  return CLI_EXIT_OK;
}

int cli_parse(int argc, char **argv, int first, unsigned allowed,
              int positionals, cli_options *out) {
  memset(out, 0, sizeof *out);
  out->method = "forward";
  out->iterations = 100;
  out->warmup = 10;
  out->calls = 1;
  out->device = -1;
  const char *cmd = argv[first - 1];
  int seen_positional = 0;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == '\0') {
      if (seen_positional >= positionals)
        return cli_fail(CLI_EXIT_USAGE, "%s: unexpected argument '%s'", cmd,
                        a);
      if (a[0] == '\0')
        return cli_fail(CLI_EXIT_USAGE, "%s: the PROGRAM argument is empty",
                        cmd);
      out->program = a;
      seen_positional++;
      continue;
    }
    unsigned flag = 0;
    for (size_t k = 0; k < sizeof kOptions / sizeof kOptions[0]; k++)
      if (strcmp(a, kOptions[k].name) == 0) flag = kOptions[k].flag;
    if (flag == 0 || (flag & allowed) == 0)
      return cli_fail(CLI_EXIT_USAGE, "%s: unknown option '%s' (see aotrun "
                                      "--help)",
                      cmd, a);
    if (flag & CLI_FLAGS) {
      if (flag == CLI_OPT_DEVICE_IO) out->device_io = 1;
      if (flag == CLI_OPT_JSON) out->json = 1;
      if (flag == CLI_OPT_NO_GPU_TIME) out->no_gpu_time = 1;
      if (flag == CLI_OPT_LOAD) out->load = 1;
      continue;
    }
    if (i + 1 >= argc)
      return cli_fail(CLI_EXIT_USAGE, "%s: option %s needs a value", cmd, a);
    if (argv[i + 1][0] == '\0')
      return cli_fail(CLI_EXIT_USAGE, "%s: option %s has an empty value", cmd,
                      a);
    int rc = store(out, flag, a, argv[++i]);
    if (rc != CLI_EXIT_OK) return rc;
  }
  if (seen_positional < positionals)
    return cli_fail(CLI_EXIT_USAGE, "%s: missing PROGRAM argument", cmd);
  return check_output_choice(cmd, out);
}

int cli_check_inspect_options(const cli_options *o) {
  if (!o->load && (o->num_plugins || o->backend || o->num_options ||
                   strcmp(o->method, "forward") != 0))
    return cli_fail(CLI_EXIT_USAGE, "inspect: --plugin, --backend, --method "
                    "and --option need --load");
  if (o->load && o->json)
    return cli_fail(CLI_EXIT_USAGE, "inspect: --json and --load cannot be "
                    "combined (the load report is printed as text)");
  return CLI_EXIT_OK;
}

/* Types VALUE: true/false -> bool, a decimal integer -> int, else string. */
static void type_value(const char *v, aotrun_option *opt) {
  char *end;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
    opt->type = AOTRUN_OPTION_BOOL;
    opt->bool_value = v[0] == 't';
  } else if (*v != '\0' && *end == '\0' && errno == 0) {
    opt->type = AOTRUN_OPTION_INT;
    opt->int_value = n;
  } else {
    opt->type = AOTRUN_OPTION_STRING;
    opt->string_value = v;
  }
}

int cli_apply_options(const cli_options *opts, const aotrun_backend *backend) {
  for (size_t i = 0; i < opts->num_options; i++) {
    char key[256];
    const char *eq = strchr(opts->options[i], '=');
    size_t n = (size_t)(eq - opts->options[i]);
    if (n >= sizeof key)
      return cli_fail(CLI_EXIT_USAGE, "--option key too long: '%s'",
                      opts->options[i]);
    memcpy(key, opts->options[i], n);
    key[n] = '\0';
    aotrun_option opt = {0};
    opt.key = key;
    type_value(eq + 1, &opt);
    if (aotrun_backend_set_option(backend, &opt) != AOTRUN_OK)
      return cli_fail(CLI_EXIT_USAGE, "--option %s: %s", opts->options[i],
                      aotrun_host_last_error());
  }
  return CLI_EXIT_OK;
}
