/* cli_inspect.c: `aotrun inspect PROGRAM`: what the manifest declares;
 * with --load, also the backend's load report (cli_inspect_load.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "plugin_api/cli.h"

/* Names come from the file: printed escaped. */
static void print_io(const char *kind, size_t i, const manifest_io *io) {
  printf("    %s %zu ", kind, i);
  cli_put_escaped(stdout, io->name);
  printf(": ");
  cli_put_escaped(stdout, io->dtype);
  printf(" [");
  for (int32_t d = 0; d < io->ndim; d++) {
    if (d) printf(", ");
    if (io->dims[d].symbol != NULL)
      cli_put_escaped(stdout, io->dims[d].symbol);
    else
      printf("%lld", (long long)io->dims[d].size);
  }
  printf("]\n");
}

/* "2*s0 + 1" as the manifest's shape strings write it. */
static void print_expr(const manifest_dim *dim) {
  if (dim->scale != 1) printf("%lld*", (long long)dim->scale);
  cli_put_escaped(stdout, dim->range_symbol);
  if (dim->offset != 0)
    printf(" %c %lld", dim->offset < 0 ? '-' : '+',
           (long long)(dim->offset < 0 ? -dim->offset : dim->offset));
}

/* Dynamic-dim ranges: each symbol's range, then each input dim that is an
 * expression of a symbol ("input 1 y dim 0 = 2*s0"). */
static void print_ranges(const manifest_method *me) {
  for (size_t k = 0; k < me->num_symbols; k++) {
    printf("    symbol ");
    cli_put_escaped(stdout, me->symbols[k].name);
    if (me->symbols[k].max < 0)
      printf(" in [%lld, inf]\n", (long long)me->symbols[k].min);
    else
      printf(" in [%lld, %lld]\n", (long long)me->symbols[k].min,
             (long long)me->symbols[k].max);
  }
  for (size_t k = 0; k < me->num_inputs; k++) {
    const manifest_io *io = &me->inputs[k];
    for (int32_t d = 0; d < io->ndim; d++) {
      const manifest_dim *dim = &io->dims[d];
      if (dim->range_symbol == NULL ||
          (dim->scale == 1 && dim->offset == 0))
        continue;
      printf("    input %zu ", k);
      cli_put_escaped(stdout, io->name);
      printf(" dim %d = ", (int)d);
      print_expr(dim);
      printf("\n");
    }
  }
}

/* Parses PROGRAM/manifest.json through the same named-data service as
 * `run` (regular files inside the program directory only, no blocking
 * open; see "Files and trust" in docs/plugin-abi.md) and the same
 * validation. */
static int read_manifest(const char *program, const char *path,
                         manifest_info *m) {
  aotrun_program_dir *dir = NULL;
  if (aotrun_program_dir_open(program, &dir) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  const aotrun_host_api *host = aotrun_program_dir_host_api(dir);
  const void *data;
  size_t size;
  void *token = NULL;
  int rc = CLI_EXIT_OK;
  if (host->get_named_data(host->ctx, "manifest.json", &data, &size,
                           &token) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  else if (manifest_info_parse(path, data, size, m) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  /* manifest_info points into its own cJSON tree, not into data; closing
   * the directory unmaps the manifest. */
  aotrun_program_dir_close(dir);
  return rc;
}

static void print_method(const manifest_method *me) {
  printf("  method ");
  cli_put_escaped(stdout, me->name);
  printf(" (library ");
  cli_put_escaped(stdout, me->library);
  printf(")\n");
  for (size_t k = 0; k < me->num_inputs; k++)
    print_io("input", k, &me->inputs[k]);
  for (size_t k = 0; k < me->num_outputs; k++)
    print_io("output", k, &me->outputs[k]);
  printf("    constants %zu\n", me->num_constants);
  print_ranges(me);
}

int cli_inspect(int argc, char **argv) {
  cli_options o;
  const unsigned load_opts =
      CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD | CLI_OPT_OPTION;
  int rc = cli_parse(argc, argv, 2, load_opts | CLI_OPT_LOAD, 1, &o);
  if (rc != CLI_EXIT_OK) return rc;
  if (!o.load && (o.num_plugins || o.backend || o.num_options ||
                  strcmp(o.method, "forward") != 0))
    return cli_fail(CLI_EXIT_USAGE, "inspect: --plugin, --backend, --method "
                    "and --option need --load");
  char path[4200];
  int n = snprintf(path, sizeof path, "%s/manifest.json", o.program);
  if (n < 0 || (size_t)n >= sizeof path)
    return cli_fail(CLI_EXIT_PROGRAM, "program path too long (%zu bytes, "
                    "at most %zu)", strlen(o.program),
                    sizeof path - sizeof "/manifest.json");
  manifest_info m;
  rc = read_manifest(o.program, path, &m);
  if (rc != CLI_EXIT_OK) return rc;
  printf("program ");
  cli_put_escaped(stdout, o.program);
  printf("\n  format_version %lld\n", (long long)m.format_version);
  if (m.producer[0] != '\0') {
    printf("  producer ");
    cli_put_escaped(stdout, m.producer);
    printf("\n");
  }
  printf("  methods %zu\n", m.num_methods);
  for (size_t i = 0; i < m.num_methods; i++) print_method(&m.methods[i]);
  manifest_info_free(&m);
  return o.load ? cli_inspect_load(&o) : CLI_EXIT_OK;
}
