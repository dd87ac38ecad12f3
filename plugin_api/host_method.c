/*
 * host_method.c: a method handle that remembers its processed bytes and
 * specs, so the host can move it to another backend between calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"
#include "plugin_api/host_error.h"
#include "plugin_api/host_method_internal.h"

/* The plugin's message for a failed call (NULL method: a failed init). */
static const char *plugin_error(const aotrun_backend *b,
                                const aotrun_method *m) {
  if (!AOTRUN_BACKEND_CAN(b, last_error)) return "(no last_error)";
  const char *msg = b->api->last_error(m);
  return (msg != NULL && msg[0] != '\0') ? msg : "(no message)";
}

aotrun_status aotrun_hm_call_failed(const aotrun_backend *b,
                                   const aotrun_method *m, const char *what,
                                   aotrun_status s) {
  char unknown[48] = "";
  if (aotrun_host_known_status(s) != s)
    snprintf(unknown, sizeof unknown, " %d", (int)s);
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': %s failed (%s%s): %s", b->name, what,
                          aotrun_status_string(s), unknown,
                          plugin_error(b, m));
}

static aotrun_status copy_inputs(aotrun_host_method *m, const void *processed,
                                 size_t size, const aotrun_key_value *specs,
                                 size_t n) {
  m->processed = malloc(size ? size : 1);
  m->specs = calloc(n ? n : 1, sizeof *m->specs);
  if (m->processed == NULL || m->specs == NULL) goto oom;
  if (size) memcpy(m->processed, processed, size);
  m->processed_size = size;
  for (size_t i = 0; i < n; i++, m->num_specs++) {
    if (specs[i].key == NULL || specs[i].value == NULL)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "compile spec %zu has a NULL key or value", i);
    m->specs[i].key = strdup(specs[i].key);
    m->specs[i].value = strdup(specs[i].value);
    if (m->specs[i].key == NULL || m->specs[i].value == NULL) {
      m->num_specs++; /* so close frees the partial pair */
      goto oom;
    }
  }
  return AOTRUN_OK;
oom:
  return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                          "out of memory copying the method's inputs");
}

/* Creates a handle for m's bytes on backend b. */
static aotrun_status init_on(const aotrun_host_method *m,
                             const aotrun_backend *b, aotrun_method **out) {
  *out = NULL;
  int ex = AOTRUN_BACKEND_CAN(b, init_ex);
  if (!ex && !AOTRUN_BACKEND_CAN(b, init))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no init", b->name);
  /* 1.1: the context form, so a library of several backends knows which. */
  aotrun_status s =
      ex ? b->api->init_ex(b->api, m->host, m->processed, m->processed_size,
                           m->specs, m->num_specs, out)
         : b->api->init(m->host, m->processed, m->processed_size, m->specs,
                        m->num_specs, out);
  if (s != AOTRUN_OK) {
    /* A failed init owns nothing the host could release: whatever it left
     * in *out (the ABI says NULL) is never passed to destroy. */
    *out = NULL;
    return aotrun_hm_call_failed(b, NULL, "init", s);
  }
  if (*out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                            "backend '%s': init returned OK but no handle",
                            b->name);
  aotrun_host_backend_opened(b);
  return AOTRUN_OK;
}

/* Destroys handle h of backend b and drops b's count of open methods. */
static void destroy_on(const aotrun_backend *b, aotrun_method *h) {
  if (h == NULL) return;
  if (AOTRUN_BACKEND_CAN(b, destroy)) b->api->destroy(h);
  aotrun_host_backend_closed(b);
}

aotrun_status aotrun_host_method_open(const aotrun_registry *registry,
                                      const char *backend_name,
                                      const aotrun_host_api *host,
                                      const void *processed,
                                      size_t processed_size,
                                      const aotrun_key_value *specs,
                                      size_t num_specs,
                                      aotrun_host_method **out) {
  if (out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_host_method_open: NULL out");
  *out = NULL;
  if (host == NULL || (processed == NULL && processed_size != 0) ||
      (specs == NULL && num_specs != 0))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_host_method_open: NULL host services, "
                            "processed bytes or specs");
  const aotrun_backend *b = NULL;
  aotrun_status s = aotrun_registry_find(registry, backend_name, &b);
  if (s != AOTRUN_OK) return s;
  aotrun_host_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory opening a method on '%s'",
                            backend_name);
  m->registry = registry;
  m->host = host;
  s = copy_inputs(m, processed, processed_size, specs, num_specs);
  if (s == AOTRUN_OK) s = init_on(m, b, &m->handle);
  if (s != AOTRUN_OK) {
    aotrun_host_method_close(m);
    return s;
  }
  m->backend = b;
  aotrun_hm_io_learn(&m->io, b, m->handle);
  *out = m;
  return AOTRUN_OK;
}

void aotrun_host_method_close(aotrun_host_method *m) {
  if (m == NULL) return;
  destroy_on(m->backend, m->handle);
  aotrun_hm_io_free(&m->io);
  for (size_t i = 0; i < m->num_specs; i++) {
    free((char *)m->specs[i].key);
    free((char *)m->specs[i].value);
  }
  free(m->specs);
  free(m->processed);
  free(m);
}

/* The name get_io_info gives tensor `index` of `kind`, or "?" (only on the
 * error path: the checks below need no plugin call when they pass). */
const char *aotrun_hm_io_name(const aotrun_host_method *m, int32_t kind,
                              size_t index, aotrun_io_info *info) {
  memset(info, 0, sizeof *info);
  info->struct_size = sizeof *info;
  if (!AOTRUN_BACKEND_CAN(m->backend, get_io_info) ||
      m->backend->api->get_io_info(m->handle, kind, index, info) !=
          AOTRUN_OK ||
      info->name == NULL)
    return "?";
  return info->name;
}

aotrun_status aotrun_host_method_execute(aotrun_host_method *m,
                                         const DLTensor *inputs,
                                         size_t num_inputs, DLTensor *outputs,
                                         size_t num_outputs) {
  if (m == NULL || (inputs == NULL && num_inputs) ||
      (outputs == NULL && num_outputs))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute: NULL method, inputs or outputs");
  if (!AOTRUN_BACKEND_CAN(m->backend, execute))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no execute", m->backend->name);
  /* The counts first: the checks below read every tensor the caller says
   * it passes, so a count above the method's must be refused before. */
  aotrun_status s = aotrun_hm_check_count(m, AOTRUN_IO_INPUT, num_inputs);
  if (s == AOTRUN_OK)
    s = aotrun_hm_check_count(m, AOTRUN_IO_OUTPUT, num_outputs);
  if (s != AOTRUN_OK) return s;
  s = aotrun_hm_check_tensors(m, AOTRUN_IO_INPUT, inputs, num_inputs, 0);
  if (s == AOTRUN_OK)
    s = aotrun_hm_check_tensors(m, AOTRUN_IO_OUTPUT, outputs, num_outputs, 0);
  if (s != AOTRUN_OK) return s;
  s = m->backend->api->execute(m->handle, inputs, num_inputs,
                                             outputs, num_outputs);
  return s == AOTRUN_OK
             ? s
             : aotrun_hm_call_failed(m->backend, m->handle, "execute", s);
}

const char *aotrun_hm_kind_name(int32_t kind) {
  return kind == AOTRUN_IO_INPUT ? "input" : "output";
}

static aotrun_status check_kind(const aotrun_host_method *m, int32_t kind) {
  if (m == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT, "NULL host method");
  if (kind != AOTRUN_IO_INPUT && kind != AOTRUN_IO_OUTPUT)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "io kind %d is neither AOTRUN_IO_INPUT (0) nor "
                            "AOTRUN_IO_OUTPUT (1)",
                            (int)kind);
  return AOTRUN_OK;
}

aotrun_status aotrun_host_method_num_io(const aotrun_host_method *m,
                                        int32_t kind, size_t *count) {
  aotrun_status s = check_kind(m, kind);
  if (s != AOTRUN_OK) return s;
  if (count == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_host_method_num_io: NULL count");
  *count = 0;
  if (!AOTRUN_BACKEND_CAN(m->backend, get_num_io))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no get_num_io",
                            m->backend->name);
  s = m->backend->api->get_num_io(m->handle, kind, count);
  return s == AOTRUN_OK ? s
                        : aotrun_hm_call_failed(m->backend, m->handle,
                                                "get_num_io", s);
}

aotrun_status aotrun_host_method_io_info(const aotrun_host_method *m,
                                         int32_t kind, size_t index,
                                         aotrun_io_info *out) {
  aotrun_status s = check_kind(m, kind);
  if (s != AOTRUN_OK) return s;
  if (out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "aotrun_host_method_io_info: NULL out");
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  if (!AOTRUN_BACKEND_CAN(m->backend, get_io_info))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no get_io_info",
                            m->backend->name);
  s = m->backend->api->get_io_info(m->handle, kind, index, out);
  if (s != AOTRUN_OK) {
    char code[AOTRUN_HOST_STATUS_TEXT_SIZE];
    aotrun_host_fail(aotrun_host_known_status(s),
                     "backend '%s': get_io_info of %s %zu failed (%s): %s",
                     m->backend->name, aotrun_hm_kind_name(kind), index,
                     aotrun_host_status_text(s, code, sizeof code),
                     plugin_error(m->backend, m->handle));
    return aotrun_host_known_status(s);
  }
  /* 1.1 plugins report min(our size, theirs); 1.0 plugins leave ours. */
  if (out->struct_size > sizeof *out ||
      out->struct_size < AOTRUN_IO_INFO_SIZE_1_0)
    return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                            "backend '%s': get_io_info of %s %zu reported "
                            "struct_size %u; the host passed %zu and ABI 1.0 "
                            "needs %zu",
                            m->backend->name, aotrun_hm_kind_name(kind), index,
                            (unsigned)out->struct_size, sizeof *out,
                            (size_t)AOTRUN_IO_INFO_SIZE_1_0);
  if (out->ndim < 0 || out->ndim > AOTRUN_MAX_DIMS)
    return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                            "backend '%s': %s %zu has rank %d (max %d)",
                            m->backend->name, aotrun_hm_kind_name(kind), index,
                            (int)out->ndim, AOTRUN_MAX_DIMS);
  return AOTRUN_OK;
}

aotrun_status aotrun_host_method_set_option(aotrun_host_method *m,
                                            const aotrun_option *option) {
  if (m == NULL || option == NULL || option->key == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "set_option: NULL method, option or key");
  if (!AOTRUN_BACKEND_CAN(m->backend, set_option))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no set_option",
                            m->backend->name);
  aotrun_status s = m->backend->api->set_option(m->handle, option);
  if (s == AOTRUN_OK) return s;
  char code[AOTRUN_HOST_STATUS_TEXT_SIZE];
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': set_option '%s' failed (%s): %s",
                          m->backend->name, option->key,
                          aotrun_host_status_text(s, code, sizeof code),
                          plugin_error(m->backend, m->handle));
}

aotrun_status aotrun_host_method_get_option(const aotrun_host_method *m,
                                            const char *key,
                                            aotrun_option *out) {
  if (m == NULL || key == NULL || out == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option: NULL method, key or out");
  memset(out, 0, sizeof *out);
  if (!AOTRUN_BACKEND_CAN(m->backend, get_option))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no get_option",
                            m->backend->name);
  aotrun_status s = m->backend->api->get_option(m->handle, key, out);
  if (s == AOTRUN_OK) return s;
  char code[AOTRUN_HOST_STATUS_TEXT_SIZE];
  return aotrun_host_fail(aotrun_host_known_status(s),
                          "backend '%s': get_option '%s' failed (%s): %s",
                          m->backend->name, key,
                          aotrun_host_status_text(s, code, sizeof code),
                          plugin_error(m->backend, m->handle));
}

aotrun_status aotrun_host_method_swap_backend(aotrun_host_method *m,
                                              const char *backend_name) {
  if (m == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "swap_backend: NULL host method");
  const aotrun_backend *b = NULL;
  aotrun_status s = aotrun_registry_find(m->registry, backend_name, &b);
  if (s != AOTRUN_OK) return s;
  aotrun_method *fresh = NULL;
  s = init_on(m, b, &fresh);
  if (s != AOTRUN_OK) {
    /* The old handle is untouched: the method keeps working. Copy the
     * message first: it lives in the buffer we are about to rewrite. */
    char why[AOTRUN_HOST_ERROR_SIZE];
    snprintf(why, sizeof why, "%s", aotrun_host_last_error());
    return aotrun_host_fail(s, "swap from '%s' to '%s' failed, still on "
                               "'%s': %s",
                            m->backend->name, backend_name, m->backend->name,
                            why);
  }
  destroy_on(m->backend, m->handle);
  m->backend = b;
  m->handle = fresh;
  aotrun_hm_io_learn(&m->io, b, m->handle);
  return AOTRUN_OK;
}

const aotrun_backend *aotrun_host_method_backend(const aotrun_host_method *m) {
  return m != NULL ? m->backend : NULL;
}
