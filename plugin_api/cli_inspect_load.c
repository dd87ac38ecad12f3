/*
 * cli_inspect_load.c: `aotrun inspect --load PROGRAM`: loads the method
 * with a backend (as `run` would, without running it) and prints the
 * backend's load report, the read-only method option load_report (one
 * JSON object; docs/loading.md), one "key value" line per field.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plugin_api/cli.h"

/* Times ("..._ns") in milliseconds under the name without "_ns", the rest
 * as they come; strings escaped, an empty one or null as "-". */
static void print_field(const cJSON *item) {
  size_t n = strlen(item->string);
  int is_time = n > 3 && strcmp(item->string + n - 3, "_ns") == 0;
  printf("    %.*s ", (int)(is_time ? n - 3 : n), item->string);
  if (cJSON_IsString(item)) {
    cli_put_escaped(stdout, item->valuestring[0] ? item->valuestring : "-");
  } else if (cJSON_IsNull(item)) {
    printf("-");
  } else if (cJSON_IsNumber(item) && is_time) {
    printf("%.3f ms", item->valuedouble / 1e6);
  } else if (cJSON_IsNumber(item)) {
    printf("%.0f", item->valuedouble);
  }
  printf("\n");
}

static int print_report(const cli_session *s, const char *json) {
  cJSON *report = cJSON_Parse(json);
  if (!cJSON_IsObject(report)) {
    cJSON_Delete(report);
    return cli_fail(CLI_EXIT_EXECUTE, "backend %s returned a load report "
                    "that is not a JSON object",
                    aotrun_backend_name(s->backend));
  }
  printf("  load (backend %s, method ", aotrun_backend_name(s->backend));
  cli_put_escaped(stdout, s->method->name);
  printf(")\n");
  const cJSON *item;
  cJSON_ArrayForEach(item, report) print_field(item);
  cJSON_Delete(report);
  return CLI_EXIT_OK;
}

int cli_inspect_load(const cli_options *opts) {
  cli_session s;
  int rc = cli_session_open(opts, &s);
  if (rc != CLI_EXIT_OK) return rc;
  aotrun_option out;
  memset(&out, 0, sizeof out);
  aotrun_status st =
      aotrun_host_method_get_option(s.handle, "load_report", &out);
  if (st == AOTRUN_ERR_NOT_FOUND || st == AOTRUN_ERR_NOT_SUPPORTED) {
    printf("  load (backend %s): no load report (%s)\n",
           aotrun_backend_name(s.backend), aotrun_host_last_error());
  } else if (st != AOTRUN_OK) {
    rc = cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  } else if (out.type != AOTRUN_OPTION_STRING || out.string_value == NULL) {
    rc = cli_fail(CLI_EXIT_EXECUTE, "backend %s: option load_report is not "
                  "a string", aotrun_backend_name(s.backend));
  } else {
    rc = print_report(&s, out.string_value);
  }
  cli_session_close(&s);
  return rc;
}
