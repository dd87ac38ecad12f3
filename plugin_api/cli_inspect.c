/* cli_inspect.c: `aotrun inspect PROGRAM`: what the manifest declares. */
#include <stdio.h>
#include <stdlib.h>

#include "plugin_api/cli.h"

static void print_io(const char *kind, size_t i, const manifest_io *io) {
  printf("    %s %zu %s: %s [", kind, i, io->name, io->dtype);
  for (int32_t d = 0; d < io->ndim; d++) {
    if (d) printf(", ");
    if (io->dims[d].symbol != NULL)
      printf("%s", io->dims[d].symbol);
    else
      printf("%lld", (long long)io->dims[d].size);
  }
  printf("]\n");
}

/* Reads PROGRAM/manifest.json (plain stdio: no plugin is involved). */
static int read_manifest(const char *path, char **buf, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return cli_fail(CLI_EXIT_PROGRAM, "cannot open %s", path);
  size_t cap = 1 << 16, n = 0, got;
  *buf = malloc(cap);
  while (*buf != NULL && (got = fread(*buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *p = realloc(*buf, cap *= 2);
      if (p == NULL) free(*buf);
      *buf = p;
    }
  }
  fclose(f);
  if (*buf == NULL) return cli_fail(CLI_EXIT_PROGRAM, "out of memory");
  *size = n;
  return CLI_EXIT_OK;
}

int cli_inspect(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, 0, 1, &o);
  if (rc != CLI_EXIT_OK) return rc;
  char path[4096], *buf = NULL;
  size_t size = 0;
  snprintf(path, sizeof path, "%s/manifest.json", o.program);
  rc = read_manifest(path, &buf, &size);
  if (rc != CLI_EXIT_OK) return rc;
  manifest_info m;
  aotrun_status s = manifest_info_parse(path, buf, size, &m);
  free(buf);
  if (s != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  printf("program %s\n", o.program);
  printf("  format_version %lld\n", (long long)m.format_version);
  if (m.producer[0] != '\0') printf("  producer %s\n", m.producer);
  printf("  methods %zu\n", m.num_methods);
  for (size_t i = 0; i < m.num_methods; i++) {
    const manifest_method *me = &m.methods[i];
    printf("  method %s (library %s)\n", me->name, me->library);
    for (size_t k = 0; k < me->num_inputs; k++)
      print_io("input", k, &me->inputs[k]);
    for (size_t k = 0; k < me->num_outputs; k++)
      print_io("output", k, &me->outputs[k]);
    printf("    constants %zu\n", me->num_constants);
  }
  manifest_info_free(&m);
  return CLI_EXIT_OK;
}
