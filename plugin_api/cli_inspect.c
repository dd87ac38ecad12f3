/*
 * cli_inspect.c: `aotrun inspect PROGRAM [--json]`: what the manifest
 * declares (methods, inputs/outputs, dynamic-dim ranges, constants), the
 * weights several methods share, and the aoti_torch_* shim functions each
 * method's library imports, checked against the shim library's exports;
 * with --load, then the backend's load report (cli_inspect_load.c).
 *
 * Nothing of the program runs: the libraries' dynamic symbols are read from
 * their bytes (cli_elf.c), through the same named-data service as `run`
 * (files inside the program directory only, no blocking open).
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/cli.h"
#include "plugin_api/cli_elf.h"
#include "plugin_api/host_file.h"

#define SHIM_PREFIX "aoti_torch_"
#define SHIM_FILE "libaotrun_shim.so"
/* A shim library is tens of MiB (static cudart); refuse anything absurd. */
#define SHIM_MAX_BYTES ((size_t)4 << 30)

/* The shim library's exports, or why they are unknown. */
typedef struct shim_info {
  int known;
  char path[PATH_MAX];
  cli_name_list exports;
  char why[1024];
} shim_info;

/* One method's imports: from its library's bytes, else from the manifest's
 * aoti_torch_imports, else unknown (why). */
typedef struct method_imports {
  const char *source; /* "library", "manifest" or NULL (unknown) */
  cli_name_list names;
  char why[1024];
} method_imports;

/* ---- finding the shim ---- */

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads the exports of the shim at path (mmap: it is large). */
static void read_shim(const char *path, shim_info *shim) {
  snprintf(shim->path, sizeof shim->path, "%s", path);
  int fd = -1;
  struct stat st;
  if (aotrun_host_file_open_read(path, "shim library", 0, SHIM_MAX_BYTES,
                                 &fd, &st) != AOTRUN_OK) {
    snprintf(shim->why, sizeof shim->why, "%s", aotrun_host_last_error());
    return;
  }
  size_t size = (size_t)st.st_size;
  void *bytes = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (bytes == MAP_FAILED || bytes == NULL) {
    snprintf(shim->why, sizeof shim->why,
             "shim library %s: cannot map its %zu bytes", path, size);
    return;
  }
  char what[PATH_MAX + 32];
  snprintf(what, sizeof what, "shim library %s", path);
  if (cli_elf_symbols(bytes, size, what, CLI_ELF_EXPORTS, SHIM_PREFIX,
                      &shim->exports) == AOTRUN_OK)
    shim->known = 1;
  else
    snprintf(shim->why, sizeof shim->why, "%s", aotrun_host_last_error());
  munmap(bytes, size);
}

/* The shim a plugin entry (a directory, or a file: its directory) would
 * find next to it, as the CUDA plugin's RUNPATH $ORIGIN does; 1 if there. */
static int shim_beside(const char *entry, char *path, size_t size) {
  struct stat st;
  if (entry[0] == '\0' || stat(entry, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) {
    snprintf(path, size, "%s/%s", entry, SHIM_FILE);
  } else {
    const char *slash = strrchr(entry, '/');
    int n = slash != NULL ? (int)(slash - entry) : 1;
    snprintf(path, size, "%.*s/%s", n, slash != NULL ? entry : ".",
             SHIM_FILE);
  }
  return is_file(path);
}

/* $AOTRUN_SHIM_LIB, else libaotrun_shim.so beside a --plugin, else in a
 * $AOTRUN_PLUGIN_PATH entry's directory, else next to the aotrun binary
 * (the installed layout). */
static void find_shim(const cli_options *opts, shim_info *shim) {
  memset(shim, 0, sizeof *shim);
  const char *env = getenv("AOTRUN_SHIM_LIB");
  if (env != NULL && env[0] != '\0') {
    read_shim(env, shim);
    return;
  }
  char path[PATH_MAX + sizeof SHIM_FILE + 1];
  for (size_t i = 0; i < opts->num_plugins; i++)
    if (shim_beside(opts->plugins[i], path, sizeof path)) {
      read_shim(path, shim);
      return;
    }
  const char *plugin_path = getenv("AOTRUN_PLUGIN_PATH");
  char *copy = plugin_path != NULL ? strdup(plugin_path) : NULL;
  char *save = NULL;
  for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok != NULL;
       tok = strtok_r(NULL, ":", &save))
    if (shim_beside(tok, path, sizeof path)) {
      free(copy);
      read_shim(path, shim);
      return;
    }
  free(copy);
  if (cli_binary_dir()[0] != '\0' &&
      shim_beside(cli_binary_dir(), path, sizeof path)) {
    read_shim(path, shim);
    return;
  }
  snprintf(shim->why, sizeof shim->why,
           "no %s found (set $AOTRUN_SHIM_LIB, or put it beside a --plugin, "
           "in a $AOTRUN_PLUGIN_PATH directory or next to the aotrun binary)",
           SHIM_FILE);
}

/* ---- one method's imports ---- */

static void imports_from_manifest(const manifest_method *me,
                                  method_imports *mi) {
  mi->names.names = calloc(me->num_imports + 1, sizeof *mi->names.names);
  if (mi->names.names == NULL) return;
  for (size_t i = 0; i < me->num_imports; i++) {
    mi->names.names[mi->names.count] = strdup(me->imports[i]);
    if (mi->names.names[mi->names.count] != NULL) mi->names.count++;
  }
  mi->source = "manifest";
}

static void read_imports(const aotrun_host_api *host,
                         const manifest_method *me, method_imports *mi) {
  memset(mi, 0, sizeof *mi);
  const void *data;
  size_t size;
  void *token = NULL;
  char what[512];
  snprintf(what, sizeof what, "library %s", me->library);
  if (host->get_named_data(host->ctx, me->library, &data, &size, &token) !=
      AOTRUN_OK) {
    snprintf(mi->why, sizeof mi->why, "%s", aotrun_host_last_error());
  } else {
    if (cli_elf_symbols(data, size, what, CLI_ELF_IMPORTS, SHIM_PREFIX,
                        &mi->names) == AOTRUN_OK)
      mi->source = "library";
    else
      snprintf(mi->why, sizeof mi->why, "%s", aotrun_host_last_error());
    host->release_named_data(host->ctx, token);
  }
  if (mi->source == NULL && me->has_imports) imports_from_manifest(me, mi);
}

/* ---- weights shared between methods ---- */

typedef struct fqn_use {
  const char *fqn;
  size_t method;
  int64_t nbytes;
} fqn_use;

static int compare_use(const void *a, const void *b) {
  const fqn_use *x = a, *y = b;
  int c = strcmp(x->fqn, y->fqn);
  if (c != 0) return c;
  return (x->method > y->method) - (x->method < y->method);
}

/* Every (fqn, method) pair once, sorted by FQN then method index. */
static fqn_use *collect_uses(const manifest_info *m, size_t *count) {
  size_t n = 0;
  for (size_t i = 0; i < m->num_methods; i++) n += m->methods[i].num_constants;
  fqn_use *u = calloc(n + 1, sizeof *u);
  if (u == NULL) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < m->num_methods; i++)
    for (size_t j = 0; j < m->methods[i].num_constants; j++)
      u[k++] = (fqn_use){m->methods[i].constants[j].fqn, i,
                         m->methods[i].constants[j].nbytes};
  qsort(u, k, sizeof *u, compare_use);
  size_t w = 0; /* drop a method's repeats of one FQN */
  for (size_t i = 0; i < k; i++)
    if (w == 0 || strcmp(u[i].fqn, u[w - 1].fqn) != 0 ||
        u[i].method != u[w - 1].method)
      u[w++] = u[i];
  *count = w;
  return u;
}

/* The run of uses starting at i with the same FQN: its length. */
static size_t run_length(const fqn_use *u, size_t n, size_t i) {
  size_t j = i + 1;
  while (j < n && strcmp(u[j].fqn, u[i].fqn) == 0) j++;
  return j - i;
}

/* ---- text output ---- */

static void print_dims(int32_t ndim, const manifest_dim *dims) {
  printf("[");
  for (int32_t d = 0; d < ndim; d++) {
    if (d) printf(", ");
    if (dims[d].symbol != NULL)
      cli_put_escaped(stdout, dims[d].symbol);
    else
      printf("%lld", (long long)dims[d].size);
  }
  printf("]");
}

/* Names come from the file: printed escaped. */
static void print_io(const char *kind, size_t i, const manifest_io *io) {
  printf("    %s %zu ", kind, i);
  cli_put_escaped(stdout, io->name);
  printf(": ");
  cli_put_escaped(stdout, io->dtype);
  printf(" ");
  print_dims(io->ndim, io->dims);
  printf("\n");
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
      printf(" in [%lld, inf]", (long long)me->symbols[k].min);
    else
      printf(" in [%lld, %lld]", (long long)me->symbols[k].min,
             (long long)me->symbols[k].max);
    if (me->symbols[k].hint >= 0)
      printf(", exported at %lld", (long long)me->symbols[k].hint);
    putchar('\n');
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

static void print_constants(const manifest_method *me) {
  long long total = 0;
  for (size_t k = 0; k < me->num_constants; k++)
    total += me->constants[k].nbytes;
  printf("    constants %zu, %lld bytes\n", me->num_constants, total);
  for (size_t k = 0; k < me->num_constants; k++) {
    const manifest_constant *c = &me->constants[k];
    printf("    constant ");
    cli_put_escaped(stdout, c->fqn);
    printf(": ");
    cli_put_escaped(stdout, c->dtype);
    printf(" [");
    for (int32_t d = 0; d < c->ndim; d++)
      printf("%s%lld", d ? ", " : "", (long long)c->sizes[d]);
    printf("] ");
    cli_put_escaped(stdout, c->device);
    printf(", %lld bytes\n", (long long)c->nbytes);
  }
}

static void print_imports(const method_imports *mi, const shim_info *shim) {
  if (mi->source == NULL) {
    printf("    shim imports unknown: ");
    cli_put_escaped(stdout, mi->why);
    printf("\n");
    return;
  }
  size_t missing = 0;
  for (size_t i = 0; shim->known && i < mi->names.count; i++)
    missing += !cli_name_list_has(&shim->exports, mi->names.names[i]);
  printf("    shim imports %zu (from the %s)", mi->names.count, mi->source);
  if (!shim->known)
    printf(", shim unknown\n");
  else if (missing == 0)
    printf(", all in the shim\n");
  else
    printf(", %zu not in the shim\n", missing);
  if (mi->why[0] != '\0') { /* the manifest's list: why not the library's */
    printf("      (library not read: ");
    cli_put_escaped(stdout, mi->why);
    printf(")\n");
  }
  for (size_t i = 0; i < mi->names.count; i++) {
    printf("      ");
    cli_put_escaped(stdout, mi->names.names[i]);
    if (shim->known && !cli_name_list_has(&shim->exports, mi->names.names[i]))
      printf(" (not in the shim)");
    printf("\n");
  }
}

static void print_shared(const manifest_info *m, const fqn_use *u, size_t n) {
  size_t shared = 0;
  for (size_t i = 0; i < n; i += run_length(u, n, i))
    shared += run_length(u, n, i) > 1;
  printf("  shared weights %zu\n", shared);
  for (size_t i = 0; i < n; i += run_length(u, n, i)) {
    size_t len = run_length(u, n, i);
    if (len < 2) continue;
    printf("    weight ");
    cli_put_escaped(stdout, u[i].fqn);
    printf(": %lld bytes, methods", (long long)u[i].nbytes);
    for (size_t k = i; k < i + len; k++) {
      printf(k == i ? " " : ", ");
      cli_put_escaped(stdout, m->methods[u[k].method].name);
    }
    printf("\n");
  }
}

static void print_text(const char *program, const manifest_info *m,
                       const shim_info *shim, const method_imports *mi,
                       const fqn_use *uses, size_t num_uses) {
  printf("program ");
  cli_put_escaped(stdout, program);
  printf("\n  format_version %lld\n", (long long)m->format_version);
  if (m->producer[0] != '\0') {
    printf("  producer ");
    cli_put_escaped(stdout, m->producer);
    printf("\n");
  }
  if (shim->known) {
    printf("  shim ");
    cli_put_escaped(stdout, shim->path);
    printf(" (%zu aoti_torch_* functions)\n", shim->exports.count);
  } else {
    printf("  shim unknown: ");
    cli_put_escaped(stdout, shim->why);
    printf("\n");
  }
  printf("  methods %zu\n", m->num_methods);
  for (size_t i = 0; i < m->num_methods; i++) {
    const manifest_method *me = &m->methods[i];
    printf("  method ");
    cli_put_escaped(stdout, me->name);
    printf(" (library ");
    cli_put_escaped(stdout, me->library);
    printf(")\n");
    for (size_t k = 0; k < me->num_inputs; k++)
      print_io("input", k, &me->inputs[k]);
    for (size_t k = 0; k < me->num_outputs; k++)
      print_io("output", k, &me->outputs[k]);
    print_ranges(me);
    print_constants(me);
    print_imports(&mi[i], shim);
  }
  print_shared(m, uses, num_uses);
}

/* ---- JSON output ---- */

static cJSON *json_dims(int32_t ndim, const manifest_dim *dims) {
  cJSON *a = cJSON_CreateArray();
  for (int32_t d = 0; a != NULL && d < ndim; d++)
    cJSON_AddItemToArray(a, dims[d].symbol != NULL
                                ? cJSON_CreateString(dims[d].symbol)
                                : cJSON_CreateNumber((double)dims[d].size));
  return a;
}

static cJSON *json_io_list(const manifest_io *io, size_t n, int with_exprs) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; a != NULL && k < n; k++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", io[k].name);
    cJSON_AddStringToObject(o, "dtype", io[k].dtype);
    cJSON_AddItemToObject(o, "shape", json_dims(io[k].ndim, io[k].dims));
    int any = 0;
    for (int32_t d = 0; with_exprs && d < io[k].ndim; d++)
      any |= io[k].dims[d].range_symbol != NULL;
    if (any) {
      cJSON *dims = cJSON_AddArrayToObject(o, "dims");
      for (int32_t d = 0; d < io[k].ndim; d++) {
        const manifest_dim *dim = &io[k].dims[d];
        if (dim->range_symbol == NULL) {
          cJSON_AddItemToArray(dims, cJSON_CreateNull());
          continue;
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "symbol", dim->range_symbol);
        cJSON_AddNumberToObject(e, "scale", (double)dim->scale);
        cJSON_AddNumberToObject(e, "offset", (double)dim->offset);
        cJSON_AddItemToArray(dims, e);
      }
    }
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *json_method(const manifest_method *me, const method_imports *mi,
                          const shim_info *shim) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", me->name);
  cJSON_AddStringToObject(o, "library", me->library);
  cJSON_AddItemToObject(o, "inputs",
                        json_io_list(me->inputs, me->num_inputs, 1));
  cJSON_AddItemToObject(o, "outputs",
                        json_io_list(me->outputs, me->num_outputs, 0));
  cJSON *symbols = cJSON_AddObjectToObject(o, "symbols");
  for (size_t k = 0; k < me->num_symbols; k++) {
    cJSON *r = cJSON_AddObjectToObject(symbols, me->symbols[k].name);
    cJSON_AddNumberToObject(r, "min", (double)me->symbols[k].min);
    if (me->symbols[k].max < 0)
      cJSON_AddNullToObject(r, "max");
    else
      cJSON_AddNumberToObject(r, "max", (double)me->symbols[k].max);
    if (me->symbols[k].hint >= 0)
      cJSON_AddNumberToObject(r, "hint", (double)me->symbols[k].hint);
  }
  cJSON *consts = cJSON_AddArrayToObject(o, "constants");
  double total = 0;
  for (size_t k = 0; k < me->num_constants; k++) {
    const manifest_constant *c = &me->constants[k];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "fqn", c->fqn);
    cJSON_AddStringToObject(e, "name", c->name);
    cJSON_AddStringToObject(e, "dtype", c->dtype);
    cJSON_AddStringToObject(e, "device", c->device);
    cJSON *shape = cJSON_AddArrayToObject(e, "shape");
    for (int32_t d = 0; d < c->ndim; d++)
      cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)c->sizes[d]));
    cJSON_AddNumberToObject(e, "nbytes", (double)c->nbytes);
    total += (double)c->nbytes;
    cJSON_AddItemToArray(consts, e);
  }
  cJSON_AddNumberToObject(o, "constant_bytes", total);
  cJSON *imp = cJSON_AddObjectToObject(o, "shim_imports");
  if (mi->source == NULL) {
    cJSON_AddNullToObject(imp, "source");
    cJSON_AddStringToObject(imp, "error", mi->why);
    return o;
  }
  cJSON_AddStringToObject(imp, "source", mi->source);
  cJSON *names = cJSON_AddArrayToObject(imp, "names");
  cJSON *missing = shim->known ? cJSON_AddArrayToObject(imp, "missing")
                               : (cJSON_AddNullToObject(imp, "missing"), NULL);
  for (size_t i = 0; i < mi->names.count; i++) {
    cJSON_AddItemToArray(names, cJSON_CreateString(mi->names.names[i]));
    if (missing != NULL &&
        !cli_name_list_has(&shim->exports, mi->names.names[i]))
      cJSON_AddItemToArray(missing, cJSON_CreateString(mi->names.names[i]));
  }
  return o;
}

static int print_json(const char *program, const manifest_info *m,
                      const shim_info *shim, const method_imports *mi,
                      const fqn_use *u, size_t n) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "program", program);
  cJSON_AddNumberToObject(root, "format_version", (double)m->format_version);
  cJSON_AddStringToObject(root, "producer", m->producer);
  cJSON *s = cJSON_AddObjectToObject(root, "shim");
  if (shim->known) {
    cJSON_AddStringToObject(s, "path", shim->path);
    cJSON_AddNumberToObject(s, "exports", (double)shim->exports.count);
  } else {
    cJSON_AddNullToObject(s, "path");
    cJSON_AddStringToObject(s, "error", shim->why);
  }
  cJSON *methods = cJSON_AddArrayToObject(root, "methods");
  for (size_t i = 0; i < m->num_methods; i++)
    cJSON_AddItemToArray(methods, json_method(&m->methods[i], &mi[i], shim));
  cJSON *shared = cJSON_AddArrayToObject(root, "shared_weights");
  for (size_t i = 0; i < n; i += run_length(u, n, i)) {
    size_t len = run_length(u, n, i);
    if (len < 2) continue;
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "fqn", u[i].fqn);
    cJSON_AddNumberToObject(w, "nbytes", (double)u[i].nbytes);
    cJSON *names = cJSON_AddArrayToObject(w, "methods");
    for (size_t k = i; k < i + len; k++)
      cJSON_AddItemToArray(names,
                           cJSON_CreateString(m->methods[u[k].method].name));
    cJSON_AddItemToArray(shared, w);
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (text == NULL)
    return cli_fail(CLI_EXIT_EXECUTE, "out of memory printing JSON");
  printf("%s\n", text);
  free(text);
  return CLI_EXIT_OK;
}

/* ---- the command ---- */

/* Parses PROGRAM/manifest.json through the named-data service of the open
 * directory (regular files inside the program directory only, no blocking
 * open; see "Files and trust" in docs/plugin-abi.md) and the loader's
 * validation. */
static int read_manifest(const aotrun_host_api *host, const char *path,
                         manifest_info *m) {
  const void *data;
  size_t size;
  void *token = NULL;
  int rc = CLI_EXIT_OK;
  if (host->get_named_data(host->ctx, "manifest.json", &data, &size,
                           &token) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  if (manifest_info_parse(path, data, size, m) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  /* manifest_info points into its own cJSON tree, not into data. */
  host->release_named_data(host->ctx, token);
  return rc;
}

static int inspect(const cli_options *o, const aotrun_host_api *host,
                   const char *path) {
  manifest_info m;
  int rc = read_manifest(host, path, &m);
  if (rc != CLI_EXIT_OK) return rc;
  shim_info shim;
  find_shim(o, &shim);
  method_imports *mi = calloc(m.num_methods, sizeof *mi);
  size_t num_uses = 0;
  fqn_use *uses = collect_uses(&m, &num_uses);
  if (mi == NULL || uses == NULL) {
    rc = cli_fail(CLI_EXIT_EXECUTE, "out of memory");
  } else {
    for (size_t i = 0; i < m.num_methods; i++)
      read_imports(host, &m.methods[i], &mi[i]);
    if (o->json)
      rc = print_json(o->program, &m, &shim, mi, uses, num_uses);
    else
      print_text(o->program, &m, &shim, mi, uses, num_uses);
  }
  for (size_t i = 0; mi != NULL && i < m.num_methods; i++)
    cli_name_list_free(&mi[i].names);
  free(mi);
  free(uses);
  cli_name_list_free(&shim.exports);
  manifest_info_free(&m);
  return rc;
}

int cli_inspect(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, CLI_INSPECT_OPTIONS, 1, &o);
  if (rc == CLI_EXIT_OK) rc = cli_check_inspect_options(&o);
  if (rc != CLI_EXIT_OK) return rc;
  char path[4200];
  int n = snprintf(path, sizeof path, "%s/manifest.json", o.program);
  if (n < 0 || (size_t)n >= sizeof path)
    return cli_fail(CLI_EXIT_PROGRAM, "program path too long (%zu bytes, "
                    "at most %zu)", strlen(o.program),
                    sizeof path - sizeof "/manifest.json");
  aotrun_program_dir *dir = NULL;
  if (aotrun_program_dir_open(o.program, &dir) != AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  rc = inspect(&o, aotrun_program_dir_host_api(dir), path);
  aotrun_program_dir_close(dir);
  if (rc != CLI_EXIT_OK) return rc;
  return o.load ? cli_inspect_load(&o) : CLI_EXIT_OK;
}
