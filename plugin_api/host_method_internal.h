/*
 * host_method_internal.h: the host method's state and the checks that
 * host_method.c (execute) and host_execute_ex.c (execute_ex) share
 * (private to the host library).
 */
#ifndef AOTRUN_HOST_METHOD_INTERNAL_H
#define AOTRUN_HOST_METHOD_INTERNAL_H

#include "plugin_api/aotrun_host.h"
#include "plugin_api/backend_internal.h"

/* What a method declares, read once per handle (host_method_io.c): per
 * kind (AOTRUN_IO_INPUT, AOTRUN_IO_OUTPUT) the count (known 0 where the
 * plugin cannot say) and each tensor's rank (ndim NULL where it cannot);
 * what is unknown is left to the plugin's execute. */
typedef struct aotrun_hm_io {
  int known[2];
  size_t count[2];
  int32_t *ndim[2];
} aotrun_hm_io;

struct aotrun_host_method {
  const aotrun_registry *registry;
  const aotrun_host_api *host;
  const aotrun_backend *backend; /* owned by the registry */
  aotrun_method *handle;         /* owned by backend */
  void *processed;               /* our copy */
  size_t processed_size;
  aotrun_key_value *specs; /* our copies of keys and values */
  size_t num_specs;
  /* An AOTRUN_EXECUTE_ASYNC execute_ex reached the plugin and no
   * synchronize followed (only tracked for plugins without synchronize). */
  int async_pending;
  aotrun_hm_io io; /* of handle */
};

/* Reads h's declaration from backend b into io (replacing what it held). */
void aotrun_hm_io_learn(aotrun_hm_io *io, const aotrun_backend *b,
                        const aotrun_method *h);
void aotrun_hm_io_free(aotrun_hm_io *io);

/* "input" or "output". */
const char *aotrun_hm_kind_name(int32_t kind);
/* The name get_io_info gives tensor `index` of `kind`, or "?". */
const char *aotrun_hm_io_name(const aotrun_host_method *m, int32_t kind,
                              size_t index, aotrun_io_info *info);
/* Records "backend 'X': WHAT failed (status): plugin message" (an unknown
 * status with its number) and returns the known status. */
aotrun_status aotrun_hm_call_failed(const aotrun_backend *b,
                                    const aotrun_method *m, const char *what,
                                    aotrun_status s);
/* The caller's count of `kind` tensors against the method's declaration. */
aotrun_status aotrun_hm_check_count(const aotrun_host_method *m, int32_t kind,
                                    size_t given);
/* Rank (bounds, and the declared rank), shape array and row-major strides
 * of each tensor; with `managed`,
 * tensors whose data is NULL (backend-allocated outputs) are skipped. */
aotrun_status aotrun_hm_check_tensors(const aotrun_host_method *m,
                                      int32_t kind, const DLTensor *t,
                                      size_t n, int managed);

#endif /* AOTRUN_HOST_METHOD_INTERNAL_H */
