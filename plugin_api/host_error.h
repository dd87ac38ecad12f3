/*
 * host_error.h: the host library's thread-local last error (private).
 */
#ifndef AOTRUN_HOST_ERROR_H
#define AOTRUN_HOST_ERROR_H

#include "plugin_api/aotrun_plugin.h"

#define AOTRUN_HOST_ERROR_SIZE 1024

/* Public in aotrun_host.h; repeated so this library needs no other header. */
const char *aotrun_host_last_error(void);

/* Records a printf-style message as this thread's last error and returns
 * code, so callers can `return aotrun_host_fail(...)`. */
aotrun_status aotrun_host_fail(aotrun_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Maps a plugin's status to a known code: unknown codes become INTERNAL
 * (the ABI says hosts treat them so). */
aotrun_status aotrun_host_known_status(aotrun_status status);

/* aotrun_status_string(status), or "unknown status N" for a code this
 * header does not know (a plugin's number is kept in the message), written
 * into buf when needed. Returns a string that lives as long as buf. */
#define AOTRUN_HOST_STATUS_TEXT_SIZE 48
const char *aotrun_host_status_text(aotrun_status status, char *buf,
                                    size_t size);

#endif /* AOTRUN_HOST_ERROR_H */
