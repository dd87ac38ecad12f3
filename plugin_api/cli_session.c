/*
 * cli_session.c: opening a program for run/bench/demo: the named-data
 * service, the manifest, the backend choice and the method handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_api/cli.h"

#define MANIFEST_KEY "manifest.json"

/* Reads the manifest through the named-data service (the same bytes the
 * backend gets as processed bytes) and opens the method on `backend`. */
static int open_method(const cli_options *opts, cli_session *s) {
  const aotrun_host_api *host = aotrun_program_dir_host_api(s->dir);
  const void *data;
  size_t size;
  void *token;
  if (host->get_named_data(host->ctx, MANIFEST_KEY, &data, &size, &token) !=
      AOTRUN_OK)
    return cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  char name[4200];
  int n = snprintf(name, sizeof name, "%s/%s", opts->program, MANIFEST_KEY);
  int rc = CLI_EXIT_OK;
  if (n < 0 || (size_t)n >= sizeof name)
    rc = cli_fail(CLI_EXIT_PROGRAM, "program path too long (%zu bytes)",
                  strlen(opts->program));
  else if (manifest_info_parse(name, data, size, &s->manifest) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  if (rc == CLI_EXIT_OK) {
    s->method = manifest_info_method(&s->manifest, opts->method);
    if (s->method == NULL)
      rc = cli_fail(CLI_EXIT_PROGRAM, "program %s has no method '%s'",
                    opts->program, opts->method);
  }
  if (rc == CLI_EXIT_OK) {
    aotrun_key_value spec = {"method", opts->method};
    aotrun_status st = aotrun_host_method_open(
        s->registry, aotrun_backend_name(s->backend), host, data, size, &spec,
        1, &s->handle);
    if (st != AOTRUN_OK)
      rc = cli_fail(cli_exit_for_status(st), "%s", aotrun_host_last_error());
  }
  host->release_named_data(host->ctx, token); /* the method copied it */
  return rc;
}

/* --backend NAME, else the first available backend in load order. */
static int pick_backend(const cli_options *opts, cli_session *s) {
  char reason[256];
  if (opts->backend != NULL) {
    if (aotrun_registry_find(s->registry, opts->backend, &s->backend) !=
        AOTRUN_OK)
      return cli_fail(CLI_EXIT_PLUGIN, "%s", aotrun_host_last_error());
    if (!aotrun_backend_is_available(s->backend, reason, sizeof reason))
      return cli_fail(CLI_EXIT_PLUGIN, "backend '%s' is not available: %s",
                      opts->backend, reason);
    return CLI_EXIT_OK;
  }
  size_t n = aotrun_registry_count(s->registry);
  for (size_t i = 0; i < n; i++) {
    const aotrun_backend *b = aotrun_registry_at(s->registry, i);
    if (aotrun_backend_is_available(b, reason, sizeof reason)) {
      s->backend = b;
      return CLI_EXIT_OK;
    }
  }
  if (n == 0)
    return cli_fail(CLI_EXIT_PLUGIN,
                    "no plugin found (use --plugin PATH, $AOTRUN_PLUGIN_PATH "
                    "or put libaotrun_*.so next to the aotrun binary)");
  cli_fail(CLI_EXIT_PLUGIN, "no available backend among %zu plugin(s):", n);
  for (size_t i = 0; i < n; i++) {
    const aotrun_backend *b = aotrun_registry_at(s->registry, i);
    aotrun_backend_is_available(b, reason, sizeof reason);
    fprintf(stderr, "  %s (%s): %s\n", aotrun_backend_name(b),
            aotrun_backend_path(b), reason);
  }
  return CLI_EXIT_PLUGIN;
}

int cli_session_open(const cli_options *opts, cli_session *s) {
  memset(s, 0, sizeof *s);
  int rc = cli_load_plugins(opts, 0, &s->registry, NULL);
  if (rc == CLI_EXIT_OK) rc = pick_backend(opts, s);
  if (rc == CLI_EXIT_OK) rc = cli_apply_options(opts, s->backend);
  if (rc == CLI_EXIT_OK &&
      aotrun_program_dir_open(opts->program, &s->dir) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  if (rc == CLI_EXIT_OK) {
    int32_t level = AOTRUN_LOG_WARNING;
    const char *env = getenv("AOTRUN_LOG_LEVEL");
    if (env != NULL && aotrun_log_level_parse(env, &level) != AOTRUN_OK)
      fprintf(stderr, "aotrun: warning: %s\n", aotrun_host_last_error());
    aotrun_program_dir_set_log_level(s->dir, level);
    rc = open_method(opts, s);
  }
  if (rc != CLI_EXIT_OK) cli_session_close(s);
  return rc;
}

void cli_session_close(cli_session *s) {
  aotrun_host_method_close(s->handle); /* before its backend and host */
  manifest_info_free(&s->manifest);
  aotrun_program_dir_close(s->dir);
  aotrun_registry_destroy(s->registry);
  memset(s, 0, sizeof *s);
}

int cli_job_open(int argc, char **argv, unsigned allowed, cli_job *job) {
  memset(job, 0, sizeof *job);
  int rc = cli_parse(argc, argv, 2, allowed, 1, &job->opts);
  if (rc != CLI_EXIT_OK) return rc;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = cli_session_open(&job->opts, &job->session);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  job->open_us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
                 (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
  if (rc != CLI_EXIT_OK) return rc;
  job->open = 1;
  return cli_tensors_from_files(&job->session, &job->opts, &job->tensors);
}

void cli_job_close(cli_job *job) {
  if (!job->open) return;
  cli_tensors_free(&job->tensors);
  cli_session_close(&job->session);
  job->open = 0;
}
