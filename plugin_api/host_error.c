/* host_error.c: thread-local last error of the host library. */
#include "plugin_api/host_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Thread-local so concurrent hosts never see each other's messages. */
static _Thread_local char g_last_error[AOTRUN_HOST_ERROR_SIZE];

const char *aotrun_host_last_error(void) { return g_last_error; }

aotrun_status aotrun_host_fail(aotrun_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
  va_end(ap);
  return code;
}

aotrun_status aotrun_host_known_status(aotrun_status status) {
  if (status >= AOTRUN_OK && status <= AOTRUN_ERR_OUTPUT_TOO_SMALL)
    return status;
  return AOTRUN_ERR_INTERNAL;
}

const char *aotrun_host_status_text(aotrun_status status, char *buf,
                                    size_t size) {
  const char *text = aotrun_status_string(status);
  if (strcmp(text, "unknown status") != 0) return text;
  snprintf(buf, size, "unknown status %d", (int)status);
  return buf;
}
