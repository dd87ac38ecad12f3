/* backend_info.c: accessors and gated calls on one loaded backend. */
#include <stdio.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

/* Accessors of a NULL backend return NULL (0 for the version). */
const char *aotrun_backend_name(const aotrun_backend *b) {
  return b != NULL ? b->name : NULL;
}
const char *aotrun_backend_path(const aotrun_backend *b) {
  return b != NULL ? b->path : NULL;
}
uint32_t aotrun_backend_abi_version(const aotrun_backend *b) {
  return b != NULL ? b->api->abi_version : 0;
}
const aotrun_backend_api *aotrun_backend_table(const aotrun_backend *b) {
  return b != NULL ? b->api : NULL;
}

int aotrun_backend_is_available(const aotrun_backend *b, char *reason,
                                size_t reason_size) {
  char local[8];
  if (reason == NULL || reason_size == 0) {
    reason = local;
    reason_size = sizeof local;
  }
  reason[0] = '\0';
  if (b == NULL) {
    snprintf(reason, reason_size, "no backend (NULL)");
    return 0;
  }
  if (!AOTRUN_BACKEND_CAN(b, is_available)) {
    snprintf(reason, reason_size, "plugin has no is_available member");
    return 0;
  }
  int32_t ok = AOTRUN_BACKEND_CAN(b, is_available_ex)
                   ? b->api->is_available_ex(b->api, reason, reason_size)
                   : b->api->is_available(reason, reason_size);
  reason[reason_size - 1] = '\0'; /* never trust the plugin's terminator */
  return ok ? 1 : 0;
}

aotrun_status aotrun_backend_set_option(const aotrun_backend *b,
                                        const aotrun_option *option) {
  if (b == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_set_option: NULL backend");
  if (option == NULL || option->key == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s': option or its key is NULL",
                            b->name);
  int ex = AOTRUN_BACKEND_CAN(b, set_backend_option);
  if (!ex && !AOTRUN_BACKEND_CAN(b, set_option))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no set_option", b->name);
  aotrun_status s = ex ? b->api->set_backend_option(b->api, option)
                       : b->api->set_option(NULL, option);
  if (s == AOTRUN_OK) return s;
  const char *why = AOTRUN_BACKEND_CAN(b, last_error)
                        ? b->api->last_error(NULL) : "";
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': set_option '%s' failed: %s", b->name,
                          option->key, why != NULL ? why : "");
}

aotrun_status aotrun_backend_get_option(const aotrun_backend *b,
                                        const char *key, aotrun_option *out) {
  if (b == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_get_option: NULL backend");
  if (key == NULL || out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s': get_option key or out is NULL",
                            b->name);
  if (!AOTRUN_BACKEND_CAN(b, get_option))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no get_option", b->name);
  aotrun_status s = b->api->get_option(NULL, key, out);
  if (s == AOTRUN_OK) return s;
  const char *why = AOTRUN_BACKEND_CAN(b, last_error)
                        ? b->api->last_error(NULL) : "";
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': get_option '%s' failed: %s", b->name,
                          key, why != NULL ? why : "");
}

void *aotrun_backend_get_extension(const aotrun_backend *b, const char *name) {
  if (b == NULL || name == NULL || !AOTRUN_BACKEND_CAN(b, get_extension))
    return NULL;
  return b->api->get_extension(name);
}
