/* host_logger.c: "[aotrun LEVEL] message" lines on stderr. */
#include <stdio.h>
#include <strings.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/host_error.h"

static const char *const kLevelNames[] = {"DEBUG", "INFO", "WARNING",
                                          "ERROR"};

const char *aotrun_log_level_name(int32_t level) {
  if (level < AOTRUN_LOG_DEBUG || level > AOTRUN_LOG_ERROR) return "ERROR";
  return kLevelNames[level];
}

void aotrun_log_stderr(int32_t threshold, int32_t level, const char *message) {
  if (level < threshold) return;
  /* One fprintf per line: stdio locks the stream, so lines never mix. */
  fprintf(stderr, "[aotrun %s] %s\n", aotrun_log_level_name(level),
          message != NULL ? message : "(null)");
}

aotrun_status aotrun_log_level_parse(const char *text, int32_t *level) {
  if (level == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_log_level_parse: NULL level");
  for (int32_t i = AOTRUN_LOG_DEBUG; text != NULL && i <= AOTRUN_LOG_ERROR;
       i++) {
    if (strcasecmp(text, kLevelNames[i]) == 0) {
      *level = i;
      return AOTRUN_OK;
    }
  }
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "unknown log level '%s' (use debug, info, warning "
                          "or error)",
                          text != NULL ? text : "(null)");
}
