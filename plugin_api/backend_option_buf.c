/*
 * backend_option_buf.c: reading a backend-wide option into the caller's
 * buffer (aotrun_backend_get_option_buf), so the string stays the caller's
 * however other threads use the backend.
 */
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

static const char *plugin_message(const aotrun_backend *b) {
  const char *why =
      AOTRUN_BACKEND_CAN(b, last_error) ? b->api->last_error(NULL) : "";
  return why != NULL ? why : "";
}

/* A 1.0 plugin's get_option(NULL, ...) string, copied at once. The
 * plugin's pointer may be overwritten by another thread's call: that is
 * the plugin's 1.0 contract, which this cannot improve on. */
static aotrun_status copy_string(const aotrun_backend *b, const char *key,
                                 aotrun_option *out, char *buf,
                                 size_t buf_size) {
  if (out->type != AOTRUN_OPTION_STRING) return AOTRUN_OK;
  const char *v = out->string_value != NULL ? out->string_value : "";
  size_t n = strlen(v);
  if (n + 1 > buf_size)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s': option '%s' is %zu bytes with its "
                            "terminator, the buffer %zu",
                            b->name, key, n + 1, buf_size);
  memmove(buf, v, n + 1);
  out->string_value = buf;
  return AOTRUN_OK;
}

aotrun_status aotrun_backend_get_option_buf(const aotrun_backend *b,
                                            const char *key,
                                            aotrun_option *out, char *buf,
                                            size_t buf_size) {
  if (b == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_get_option_buf: NULL backend");
  if (key == NULL || out == NULL || buf == NULL || buf_size == 0)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s': get_option key, out or buffer is "
                            "NULL or empty",
                            b->name);
  buf[0] = '\0';
  int ex = AOTRUN_BACKEND_CAN(b, get_backend_option);
  if (!ex && !AOTRUN_BACKEND_CAN(b, get_option))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no get_option", b->name);
  memset(out, 0, sizeof *out);
  aotrun_status s = ex ? b->api->get_backend_option(b->api, key, out, buf,
                                                    buf_size)
                       : b->api->get_option(NULL, key, out);
  if (s != AOTRUN_OK)
    return aotrun_host_fail(aotrun_host_known_status(s),
                            "backend '%s': get_option '%s' failed: %s",
                            b->name, key, plugin_message(b));
  if (ex) {
    buf[buf_size - 1] = '\0'; /* never trust the plugin's terminator */
    if (out->type == AOTRUN_OPTION_STRING) out->string_value = buf;
    return AOTRUN_OK;
  }
  return copy_string(b, key, out, buf, buf_size);
}
