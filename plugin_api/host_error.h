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

#endif /* AOTRUN_HOST_ERROR_H */
