/*
 * cli_search.c: where the CLI finds plugins: --plugin, $AOTRUN_PLUGIN_PATH
 * and the binary's own directory, de-duplicated by real path.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_api/cli.h"

/* The shim is loaded by the CUDA backend itself; it has no entry symbol. */
#define SHIM_LIBRARY "libaotrun_shim.so"

typedef struct candidates {
  char *paths[256]; /* as the user wrote them: messages show these */
  char *keys[256];  /* real paths, to load each file once */
  int explicit_[256]; /* from --plugin: failures are fatal */
  size_t count;
} candidates;

const char *cli_binary_dir(void) {
  static char dir[PATH_MAX];
  if (dir[0] != '\0') return dir;
  ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  if (n <= 0) return dir[0] = '\0', dir;
  dir[n] = '\0';
  char *slash = strrchr(dir, '/');
  if (slash != NULL) *slash = '\0';
  return dir;
}

static int is_plugin_name(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "libaotrun_", 10) == 0 && n > 13 &&
         strcmp(name + n - 3, ".so") == 0 && strcmp(name, SHIM_LIBRARY) != 0;
}

static void add(candidates *c, const char *path, int is_explicit) {
  char real[PATH_MAX];
  const char *key = realpath(path, real) != NULL ? real : path;
  for (size_t i = 0; i < c->count; i++)
    if (strcmp(c->keys[i], key) == 0) return; /* already listed */
  if (c->count == sizeof c->paths / sizeof c->paths[0]) return;
  c->paths[c->count] = strdup(path);
  c->keys[c->count] = strdup(key);
  if (c->paths[c->count] == NULL || c->keys[c->count] == NULL) {
    free(c->paths[c->count]);
    free(c->keys[c->count]);
    return;
  }
  c->explicit_[c->count++] = is_explicit;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the directory's libaotrun_*.so files, sorted for a stable order. */
static void add_dir(candidates *c, const char *dir, int is_explicit) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  char *names[256];
  size_t n = 0;
  for (struct dirent *e; n < 256 && (e = readdir(d)) != NULL;) {
    if (!is_plugin_name(e->d_name)) continue;
    names[n] = strdup(e->d_name);
    if (names[n] != NULL) n++;
  }
  closedir(d);
  qsort(names, n, sizeof names[0], by_name);
  for (size_t i = 0; i < n; i++) {
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (len >= 0 && (size_t)len < sizeof path)
      add(c, path, is_explicit); /* a truncated path names another file */
    else
      cli_fail(CLI_EXIT_OK, "warning: skipping %s/%s: path too long", dir,
               names[i]);
    free(names[i]);
  }
}

static void add_entry(candidates *c, const char *entry, int is_explicit) {
  struct stat st;
  if (entry[0] == '\0') return;
  if (stat(entry, &st) == 0 && S_ISDIR(st.st_mode))
    add_dir(c, entry, is_explicit);
  else
    add(c, entry, is_explicit); /* a missing file fails at load, loudly */
}

static void collect(const cli_options *opts, candidates *c) {
  for (size_t i = 0; i < opts->num_plugins; i++)
    add_entry(c, opts->plugins[i], 1);
  const char *env = getenv("AOTRUN_PLUGIN_PATH");
  if (env != NULL) {
    char *copy = strdup(env), *save = NULL;
    for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok != NULL;
         tok = strtok_r(NULL, ":", &save))
      add_entry(c, tok, 0);
    free(copy);
  }
  if (cli_binary_dir()[0] != '\0') add_dir(c, cli_binary_dir(), 0);
}

int cli_load_plugins(const cli_options *opts, int report,
                     aotrun_registry **out, size_t *failures) {
  candidates c = {.count = 0};
  collect(opts, &c);
  if (failures != NULL) *failures = 0;
  int rc = CLI_EXIT_OK;
  if (aotrun_registry_create(out) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PLUGIN, "%s", aotrun_host_last_error());
  for (size_t i = 0; *out != NULL && i < c.count; i++) {
    if (rc != CLI_EXIT_OK && !report) break;
    if (aotrun_registry_load(*out, c.paths[i], NULL) == AOTRUN_OK) continue;
    if (failures != NULL) (*failures)++;
    if (report)
      printf("not loaded: %s\n", aotrun_host_last_error());
    else if (c.explicit_[i])
      rc = cli_fail(CLI_EXIT_PLUGIN, "%s", aotrun_host_last_error());
    else
      fprintf(stderr, "aotrun: warning: skipping %s\n",
              aotrun_host_last_error());
    if (report && c.explicit_[i]) rc = CLI_EXIT_PLUGIN;
  }
  for (size_t i = 0; i < c.count; i++) {
    free(c.paths[i]);
    free(c.keys[i]);
  }
  if (rc != CLI_EXIT_OK && !report) {
    aotrun_registry_destroy(*out);
    *out = NULL;
  }
  return rc;
}
