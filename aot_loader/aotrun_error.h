/*
 * aotrun_error.h: a status code plus a message that names the thing, used by
 * every internal library of aotrun (aot_loader, backend_cuda).
 */
#ifndef AOTRUN_ERROR_H
#define AOTRUN_ERROR_H

#include "plugin_api/aotrun_plugin.h"

#define AOTRUN_ERROR_MESSAGE_SIZE 1024

typedef struct aotrun_error {
  aotrun_status code;
  char message[AOTRUN_ERROR_MESSAGE_SIZE];
} aotrun_error;

/* Records code and a printf-style message in *err (err may be NULL) and
 * returns code, so callers can `return aotrun_error_set(err, ...)`. */
aotrun_status aotrun_error_set(aotrun_error *err, aotrun_status code,
                               const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with a printf-style context ("loading
 * forward.so: "), keeping the code. Returns err->code. */
aotrun_status aotrun_error_prefix(aotrun_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Resets *err to AOTRUN_OK and "". */
void aotrun_error_clear(aotrun_error *err);

#endif /* AOTRUN_ERROR_H */
