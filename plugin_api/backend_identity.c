/*
 * backend_identity.c: what a backend says about itself and its devices
 * (ABI 1.1 get_info, get_device_count, get_device_info). A plugin without
 * the member (a 1.0 table, or NULL) is AOTRUN_ERR_NOT_SUPPORTED naming
 * the backend and the member.
 */
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"

static aotrun_status lacks(const aotrun_backend *b, const char *member) {
  return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                          "backend '%s' has no %s (its table is ABI %u.%u%s)",
                          b->name, member,
                          AOTRUN_VERSION_MAJOR(b->api->abi_version),
                          AOTRUN_VERSION_MINOR(b->api->abi_version),
                          AOTRUN_VERSION_MINOR(b->api->abi_version) >= 1
                              ? ", the member is NULL"
                              : "");
}

static aotrun_status failed(const aotrun_backend *b, const char *member,
                            aotrun_status s) {
  const char *why =
      AOTRUN_BACKEND_CAN(b, last_error) ? b->api->last_error(NULL) : "";
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': %s failed (%s): %s", b->name, member,
                          aotrun_status_string(s),
                          why != NULL && why[0] != '\0' ? why
                                                        : "(no message)");
}

/* The callee-filled rule: the plugin reports min(caller, own size), at
 * least its struct_size member, never more than the host's. */
static aotrun_status check_reported(const aotrun_backend *b,
                                    const char *member, uint32_t reported,
                                    size_t host_size) {
  if (reported >= sizeof(uint32_t) && reported <= host_size)
    return AOTRUN_OK;
  return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                          "backend '%s': %s reported struct_size %u, the "
                          "host's struct is %zu bytes",
                          b->name, member, (unsigned)reported, host_size);
}

aotrun_status aotrun_backend_get_info(const aotrun_backend *b,
                                      aotrun_backend_info *out) {
  if (b == NULL || out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_get_info: NULL backend or out");
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  if (!AOTRUN_BACKEND_CAN(b, get_info)) return lacks(b, "get_info");
  aotrun_status s = b->api->get_info(b->api, out);
  if (s != AOTRUN_OK) return failed(b, "get_info", s);
  s = check_reported(b, "get_info", out->struct_size, sizeof *out);
  /* NULL means unknown: give callers printable strings. */
  if (out->version == NULL) out->version = "";
  if (out->vendor == NULL) out->vendor = "";
  if (out->build == NULL) out->build = "";
  return s;
}

aotrun_status aotrun_backend_device_count(const aotrun_backend *b,
                                          int32_t *count) {
  if (b == NULL || count == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_device_count: NULL backend or "
                            "count");
  *count = 0;
  if (!AOTRUN_BACKEND_CAN(b, get_device_count))
    return lacks(b, "get_device_count");
  aotrun_status s = b->api->get_device_count(b->api, count);
  if (s != AOTRUN_OK) {
    *count = 0;
    return failed(b, "get_device_count", s);
  }
  if (*count < 0) {
    int32_t n = *count;
    *count = 0;
    return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                            "backend '%s': get_device_count returned %d",
                            b->name, (int)n);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_backend_device_info(const aotrun_backend *b,
                                         int32_t device,
                                         aotrun_device_info *out) {
  if (b == NULL || out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_device_info: NULL backend or "
                            "out");
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  if (!AOTRUN_BACKEND_CAN(b, get_device_info))
    return lacks(b, "get_device_info");
  aotrun_status s = b->api->get_device_info(b->api, device, out);
  out->name[sizeof out->name - 1] = '\0'; /* the plugin's terminator */
  if (s != AOTRUN_OK) return failed(b, "get_device_info", s);
  return check_reported(b, "get_device_info", out->struct_size, sizeof *out);
}

aotrun_status aotrun_backend_can_run(const aotrun_backend *b,
                                     const aotrun_host_api *host,
                                     const void *processed,
                                     size_t processed_size,
                                     const aotrun_key_value *specs,
                                     size_t num_specs, char *reason,
                                     size_t reason_size) {
  char local[8];
  if (reason == NULL || reason_size == 0) {
    reason = local;
    reason_size = sizeof local;
  }
  reason[0] = '\0';
  if (b == NULL || (processed == NULL && processed_size != 0) ||
      (specs == NULL && num_specs != 0))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_backend_can_run: NULL backend, processed "
                            "bytes or specs");
  if (!AOTRUN_BACKEND_CAN(b, can_run)) return lacks(b, "can_run");
  aotrun_status s = b->api->can_run(b->api, host, processed, processed_size,
                                    specs, num_specs, reason, reason_size);
  reason[reason_size - 1] = '\0';
  if (s == AOTRUN_OK) return AOTRUN_OK;
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s' cannot run the program (%s): %s",
                          b->name, aotrun_status_string(s),
                          reason[0] != '\0' ? reason : "(no reason)");
}
