/*
 * cli_session.c: opening a program for run/bench/demo: the named-data
 * service, the manifest, the backend choice (cli_backend_choice.c) and the
 * method handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_api/cli.h"

#define MANIFEST_KEY "manifest.json"

/* The host's status and reason (in why; "" when both open) for the first
 * file the method needs (its library, the weights file when it has
 * constants) that it cannot open. A backend can only say it got no data;
 * the host knows the file is missing, a directory, a device or outside the
 * program. */
static aotrun_status named_data_problem(const aotrun_host_api *host,
                                        const manifest_info *info,
                                        const manifest_method *m, char *why,
                                        size_t size) {
  const char *keys[2] = {m->library,
                         m->num_constants > 0 ? info->weights : NULL};
  why[0] = '\0';
  for (int i = 0; i < 2; i++) {
    const void *data;
    size_t n;
    void *token;
    if (keys[i] == NULL) continue;
    aotrun_status st =
        host->get_named_data(host->ctx, keys[i], &data, &n, &token);
    if (st != AOTRUN_OK) {
      snprintf(why, size, "%s", aotrun_host_last_error());
      return st;
    }
    host->release_named_data(host->ctx, token);
  }
  return AOTRUN_OK;
}

/* Before any backend is asked: a file of the method that exists but cannot
 * be used (a directory, a device, a link out of the program) fails every
 * backend, so it is a program error with the host's reason. A missing file
 * is left to the backends (one may not need it). */
static int unusable_file(const aotrun_host_api *host, const cli_session *s) {
  char why[1024];
  aotrun_status st =
      named_data_problem(host, &s->manifest, s->method, why, sizeof why);
  if (st == AOTRUN_OK || st == AOTRUN_ERR_NOT_FOUND) return CLI_EXIT_OK;
  return cli_fail(CLI_EXIT_PROGRAM, "method %s: %s", s->method->name, why);
}

/* Prints a failed init: the backend's message, and the host's reason when
 * a file of the method cannot be opened. */
static int init_failed(const aotrun_host_api *host, const cli_session *s,
                       aotrun_status st) {
  char msg[1024], why[1024];
  snprintf(msg, sizeof msg, "%s", aotrun_host_last_error());
  named_data_problem(host, &s->manifest, s->method, why, sizeof why);
  if (why[0] == '\0') return cli_fail(cli_exit_for_status(st), "%s", msg);
  return cli_fail(cli_exit_for_status(st), "%s; %s", msg, why);
}

/* $AOTRUN_LOG_LEVEL reaches the backend too: a backend filters its own
 * messages by its option log_level (the CUDA backend's default is info),
 * so its debug lines would otherwise never reach the host's log. A backend
 * without the option stays as it is; --option log_level=... (applied
 * after) still wins. */
static void forward_log_level(const aotrun_backend *backend, int32_t level) {
  aotrun_option opt = {0};
  opt.key = "log_level";
  opt.type = AOTRUN_OPTION_STRING;
  opt.string_value = aotrun_log_level_name(level);
  (void)aotrun_backend_set_option(backend, &opt);
}

/* Reads the manifest through the named-data service (the same bytes the
 * backend gets as processed bytes) and opens the method on `backend`;
 * forward: the log level came from $AOTRUN_LOG_LEVEL. */
static int open_method(const cli_options *opts, cli_session *s,
                       int32_t log_level, int forward) {
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
  if (rc == CLI_EXIT_OK) rc = unusable_file(host, s);
  /* --device N is the compile spec "device" (the CUDA backend's). */
  char device[24];
  snprintf(device, sizeof device, "%ld", opts->device);
  aotrun_key_value specs[2] = {{"method", opts->method}, {"device", device}};
  size_t num_specs = opts->device >= 0 ? 2 : 1;
  if (rc == CLI_EXIT_OK) {
    cli_backend_query q = {host,  data,      size,     opts->method,
                           specs, num_specs, log_level};
    rc = cli_choose_backend(opts, s, &q);
  }
  if (rc == CLI_EXIT_OK && forward) forward_log_level(s->backend, log_level);
  if (rc == CLI_EXIT_OK) rc = cli_apply_options(opts, s->backend);
  if (rc == CLI_EXIT_OK) {
    aotrun_status st = aotrun_host_method_open(
        s->registry, aotrun_backend_name(s->backend), host, data, size, specs,
        num_specs, &s->handle);
    if (st != AOTRUN_OK) rc = init_failed(host, s, st);
  }
  host->release_named_data(host->ctx, token); /* the method copied it */
  return rc;
}

int cli_session_open(const cli_options *opts, cli_session *s) {
  memset(s, 0, sizeof *s);
  int rc = cli_load_plugins(opts, 0, &s->registry, NULL);
  if (rc == CLI_EXIT_OK) rc = cli_require_backend(opts, s);
  if (rc == CLI_EXIT_OK &&
      aotrun_program_dir_open(opts->program, &s->dir) != AOTRUN_OK)
    rc = cli_fail(CLI_EXIT_PROGRAM, "%s", aotrun_host_last_error());
  if (rc == CLI_EXIT_OK) {
    int32_t level = AOTRUN_LOG_WARNING;
    const char *env = getenv("AOTRUN_LOG_LEVEL");
    if (env != NULL && aotrun_log_level_parse(env, &level) != AOTRUN_OK)
      fprintf(stderr, "aotrun: warning: %s\n", aotrun_host_last_error());
    aotrun_program_dir_set_log_level(s->dir, level);
    rc = open_method(opts, s, level, env != NULL);
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
