/*
 * aotrun_error.c: status code + message helpers (see aotrun_error.h).
 *
 * Messages are formatted into a local buffer first, so a caller may pass
 * err->message itself as an argument (e.g. to re-wrap an error).
 */
#include "aot_loader/aotrun_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

aotrun_status aotrun_error_set(aotrun_error *err, aotrun_status code,
                               const char *fmt, ...) {
  if (err == NULL) return code;
  char buf[AOTRUN_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) buf[0] = '\0'; /* encoding error: keep the code, drop text */
  err->code = code;
  memcpy(err->message, buf, sizeof buf);
  return code;
}

aotrun_status aotrun_error_prefix(aotrun_error *err, const char *fmt, ...) {
  /* Without an error object there is no code to return; never report
   * success from a failure path. */
  if (err == NULL) return AOTRUN_ERR_INTERNAL;
  char prefix[AOTRUN_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n < 0) return err->code;
  /* prefix + old message, truncated to fit (the old text may overlap). */
  char buf[AOTRUN_ERROR_MESSAGE_SIZE];
  size_t plen = strlen(prefix);
  size_t mlen = strnlen(err->message, sizeof err->message);
  if (mlen > sizeof buf - 1 - plen) mlen = sizeof buf - 1 - plen;
  memcpy(buf, prefix, plen);
  memcpy(buf + plen, err->message, mlen);
  buf[plen + mlen] = '\0';
  memcpy(err->message, buf, sizeof buf);
  return err->code;
}

void aotrun_error_clear(aotrun_error *err) {
  if (err == NULL) return;
  err->code = AOTRUN_OK;
  err->message[0] = '\0';
}
