/*
 * cli_backend_choice.c: which backend runs a program. With --backend NAME
 * that one, no fallback. Otherwise the first backend in load order that is
 * available and whose can_run (ABI 1.1) accepts the program and method; a
 * backend without can_run (ABI 1.0) is taken as able. The choice and why
 * each earlier backend was skipped are logged at info level
 * (AOTRUN_LOG_LEVEL=info).
 */
#include <stdio.h>

#include "plugin_api/cli.h"

/* Before the program is opened: the named backend exists and is available;
 * without --backend, some plugin is loaded and one is available. */
int cli_require_backend(const cli_options *opts, cli_session *s) {
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
  for (size_t i = 0; i < n; i++)
    if (aotrun_backend_is_available(aotrun_registry_at(s->registry, i),
                                    reason, sizeof reason))
      return CLI_EXIT_OK;
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

/* Why backend b cannot run the program, into why[]; 0 when it can. */
static int refuses(const aotrun_backend *b, const cli_backend_query *q,
                   char *why, size_t size) {
  if (!aotrun_backend_is_available(b, why, size)) {
    char copy[256];
    snprintf(copy, sizeof copy, "%s", why);
    snprintf(why, size, "not available: %s", copy);
    return 1;
  }
  const aotrun_backend_api *t = aotrun_backend_table(b);
  if (!AOTRUN_TABLE_CAN(t, can_run)) return 0; /* 1.0: it may */
  if (aotrun_backend_can_run(b, q->host, q->manifest, q->manifest_size,
                             q->specs, q->num_specs, why, size) == AOTRUN_OK)
    return 0;
  if (why[0] == '\0') snprintf(why, size, "%s", aotrun_host_last_error());
  return 1;
}

int cli_choose_backend(const cli_options *opts, cli_session *s,
                       const cli_backend_query *q) {
  if (s->backend != NULL) return CLI_EXIT_OK; /* --backend: no fallback */
  size_t n = aotrun_registry_count(s->registry);
  char why[1024], line[1400];
  for (size_t i = 0; i < n; i++) {
    const aotrun_backend *b = aotrun_registry_at(s->registry, i);
    if (!refuses(b, q, why, sizeof why)) {
      s->backend = b;
      snprintf(line, sizeof line,
               "using backend %s for %s method %s (the first in load order "
               "that can run it)",
               aotrun_backend_name(b), opts->program, q->method);
      aotrun_log_stderr(q->log_level, AOTRUN_LOG_INFO, line);
      return CLI_EXIT_OK;
    }
    snprintf(line, sizeof line, "backend %s skipped: %s",
             aotrun_backend_name(b), why);
    aotrun_log_stderr(q->log_level, AOTRUN_LOG_INFO, line);
  }
  cli_fail(CLI_EXIT_PLUGIN, "no backend can run %s method %s:",
           opts->program, q->method);
  for (size_t i = 0; i < n; i++) {
    const aotrun_backend *b = aotrun_registry_at(s->registry, i);
    refuses(b, q, why, sizeof why);
    fprintf(stderr, "  %s (%s): %s\n", aotrun_backend_name(b),
            aotrun_backend_path(b), why);
  }
  return CLI_EXIT_PLUGIN;
}
