/*
 * fuzz_cli.c: libFuzzer target for the aotrun command line's option layer
 * (plugin_api/cli_options.c): cli_parse with the options of each
 * subcommand (run, bench, inspect, demo, plugins), inspect's rules for
 * combining them, and --option KEY=VALUE typing (cli_apply_options, into a
 * fake backend that checks what it is given). Nothing on this path may
 * exit the process (libFuzzer reports an exit as a finding), read past an
 * argument, or accept what the subcommand cannot use. Not part of
 * `bazel test //...`; run with testing/fuzz/run_fuzz.sh cli.
 *
 * Input: one byte choosing the subcommand, then the arguments separated by
 * NUL bytes (each copied into an exact-size heap buffer).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"
#include "plugin_api/host_error.h"

#define MAX_ARGS 80

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
  const char *name;
  unsigned allowed;
  int positionals;
} kCommands[] = {
    {"run", CLI_RUN_OPTIONS, 1},         {"bench", CLI_BENCH_OPTIONS, 1},
    {"inspect", CLI_INSPECT_OPTIONS, 1}, {"demo", CLI_DEMO_OPTIONS, 0},
    {"plugins", CLI_PLUGINS_OPTIONS, 0},
};
#define NUM_COMMANDS (sizeof kCommands / sizeof kCommands[0])

/* The fake backend of cli_apply_options: checks the typed option. */
aotrun_status aotrun_backend_set_option(const aotrun_backend *backend,
                                        const aotrun_option *option) {
  if (backend == NULL || option == NULL || option->key == NULL) abort();
  size_t n = strlen(option->key);
  if (n == 0 || n >= 256 || strchr(option->key, '=') != NULL) abort();
  switch (option->type) {
    case AOTRUN_OPTION_BOOL:
      if (option->bool_value != 0 && option->bool_value != 1) abort();
      break;
    case AOTRUN_OPTION_INT: break;
    case AOTRUN_OPTION_STRING:
      if (option->string_value == NULL) abort();
      (void)strlen(option->string_value);
      break;
    default: abort();
  }
  /* Exercise the refusal path (its message is read back). */
  if (option->key[0] == 'x')
    return aotrun_host_fail(AOTRUN_ERR_NOT_FOUND, "no option '%s'",
                            option->key);
  return AOTRUN_OK;
}

/* 1 when p is one of the argument strings. */
static int is_arg(const char *p, char **argv, int argc) {
  for (int i = 2; i < argc; i++)
    if (p == argv[i]) return 1;
  return 0;
}

static void check_list(const char *const *list, size_t n, char **argv,
                       int argc) {
  if (n > CLI_MAX_LIST) abort();
  for (size_t i = 0; i < n; i++)
    if (!is_arg(list[i], argv, argc) || list[i][0] == '\0') abort();
}

/* What a successful parse promises the subcommand. */
static void check_parsed(const cli_options *o, unsigned allowed,
                         int positionals, char **argv, int argc) {
  if (positionals == 1 &&
      (o->program == NULL || !is_arg(o->program, argv, argc) ||
       o->program[0] == '\0'))
    abort();
  if (positionals == 0 && o->program != NULL) abort();
  check_list(o->plugins, o->num_plugins, argv, argc);
  check_list(o->inputs, o->num_inputs, argv, argc);
  check_list(o->options, o->num_options, argv, argc);
  for (size_t i = 0; i < o->num_options; i++)
    if (o->options[i][0] == '=' || strchr(o->options[i], '=') == NULL)
      abort();
  const char *single[] = {o->backend, o->output_dir};
  for (int i = 0; i < 2; i++)
    if (single[i] != NULL && (!is_arg(single[i], argv, argc) ||
                              single[i][0] == '\0'))
      abort();
  if (o->method == NULL || o->method[0] == '\0') abort();
  if (o->iterations < 1 || o->iterations > CLI_MAX_ITERATIONS ||
      o->warmup < 0 || o->warmup > CLI_MAX_WARMUP || o->calls < 1 ||
      o->calls > CLI_MAX_CALLS)
    abort();
  if (o->output_safetensors && o->output_dir == NULL) abort();
  if (o->device < -1 || o->device > INT32_MAX ||
      (o->device != -1 && !(allowed & CLI_OPT_DEVICE)))
    abort();
  /* Nothing the subcommand does not take. */
  if ((o->num_plugins && !(allowed & CLI_OPT_PLUGIN)) ||
      (o->num_inputs && !(allowed & CLI_OPT_INPUT)) ||
      (o->num_options && !(allowed & CLI_OPT_OPTION)) ||
      (o->backend && !(allowed & CLI_OPT_BACKEND)) ||
      (o->output_dir && !(allowed & CLI_OPT_OUTPUT_DIR)) ||
      (o->device_io && !(allowed & CLI_OPT_DEVICE_IO)) ||
      (o->json && !(allowed & CLI_OPT_JSON)) ||
      (o->no_gpu_time && !(allowed & CLI_OPT_NO_GPU_TIME)) ||
      (o->load && !(allowed & CLI_OPT_LOAD)) ||
      (o->calls != 1 && !(allowed & CLI_OPT_CALLS)) ||
      (o->iterations != 100 && !(allowed & CLI_OPT_ITERATIONS)) ||
      (o->warmup != 10 && !(allowed & CLI_OPT_WARMUP)) ||
      (strcmp(o->method, "forward") != 0 && !(allowed & CLI_OPT_METHOD)))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t c = data[0] % NUM_COMMANDS;
  char *argv[MAX_ARGS + 3];
  int argc = 0;
  argv[argc++] = "aotrun";
  argv[argc++] = (char *)kCommands[c].name;
  size_t at = 1;
  while (at < size && argc < MAX_ARGS + 2) {
    const uint8_t *end = memchr(data + at, '\0', size - at);
    size_t n = end != NULL ? (size_t)(end - (data + at)) : size - at;
    char *arg = malloc(n + 1);
    if (arg == NULL) abort();
    memcpy(arg, data + at, n);
    arg[n] = '\0';
    argv[argc++] = arg;
    at += n + 1;
  }
  argv[argc] = NULL;
  cli_options o;
  int rc = cli_parse(argc, argv, 2, kCommands[c].allowed,
                     kCommands[c].positionals, &o);
  if (rc == CLI_EXIT_OK && strcmp(kCommands[c].name, "inspect") == 0)
    rc = cli_check_inspect_options(&o);
  if (rc != CLI_EXIT_OK && rc != CLI_EXIT_USAGE) abort();
  if (rc == CLI_EXIT_OK) {
    check_parsed(&o, kCommands[c].allowed, kCommands[c].positionals, argv,
                 argc);
    static const int kFakeBackend;
    rc = cli_apply_options(&o, (const aotrun_backend *)&kFakeBackend);
    if (rc != CLI_EXIT_OK && rc != CLI_EXIT_USAGE) abort();
  }
  for (int i = 2; i < argc; i++) free(argv[i]);
  return 0;
}
