/*
 * host_method_io.c: what a method declares (counts and ranks of its inputs
 * and outputs), read from the plugin once per handle, and the checks every
 * execute makes against it before the plugin sees a tensor.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin_api/host_error.h"
#include "plugin_api/host_method_internal.h"

void aotrun_hm_io_free(aotrun_hm_io *io) {
  for (int k = 0; k < 2; k++) {
    free(io->ndim[k]);
    io->ndim[k] = NULL;
    io->known[k] = 0;
    io->count[k] = 0;
  }
}

/* One kind's count (returns 0 when the plugin cannot say it) and ranks
 * (left NULL when it cannot say those). */
static int learn_kind(aotrun_hm_io *io, const aotrun_backend *b,
                      const aotrun_method *h, int32_t kind) {
  size_t n = 0;
  if (!AOTRUN_BACKEND_CAN(b, get_num_io) ||
      b->api->get_num_io(h, kind, &n) != AOTRUN_OK)
    return 0;
  io->count[kind] = n;
  if (n == 0) return 1;
  if (!AOTRUN_BACKEND_CAN(b, get_io_info)) return 1;
  int32_t *ndim = calloc(n, sizeof *ndim);
  if (ndim == NULL) return 1; /* the plugin's own checks still run */
  for (size_t i = 0; i < n; i++) {
    aotrun_io_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (b->api->get_io_info(h, kind, i, &info) != AOTRUN_OK ||
        info.ndim < 0 || info.ndim > AOTRUN_MAX_DIMS) {
      free(ndim);
      return 1;
    }
    ndim[i] = info.ndim;
  }
  io->ndim[kind] = ndim;
  return 1;
}

void aotrun_hm_io_learn(aotrun_hm_io *io, const aotrun_backend *b,
                        const aotrun_method *h) {
  aotrun_hm_io_free(io);
  for (int32_t k = AOTRUN_IO_INPUT; k <= AOTRUN_IO_OUTPUT; k++)
    io->known[k] = learn_kind(io, b, h, k);
}

aotrun_status aotrun_hm_check_count(const aotrun_host_method *m,
                                    int32_t kind, size_t given) {
  const aotrun_hm_io *io = &m->io;
  if (!io->known[kind] || io->count[kind] == given) return AOTRUN_OK;
  return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                          "backend '%s': execute got %zu %ss, the method "
                          "takes %zu",
                          m->backend->name, given, aotrun_hm_kind_name(kind),
                          io->count[kind]);
}

/* The rank the method declares for tensor i of kind, or -1 (unknown). */
static int32_t declared_rank(const aotrun_hm_io *io, int32_t kind, size_t i) {
  if (!io->known[kind] || io->ndim[kind] == NULL || i >= io->count[kind])
    return -1;
  return io->ndim[kind][i];
}

/* What the ABI asks of every tensor (aotrun_plugin.h, "Strides") and the
 * rank the method declares; with `managed`, outputs whose data is NULL are
 * the backend's to allocate and are not read. */
aotrun_status aotrun_hm_check_tensors(const aotrun_host_method *m,
                                      int32_t kind, const DLTensor *t,
                                      size_t n, int managed) {
  for (size_t i = 0; i < n; i++) {
    aotrun_io_info info;
    if (managed && t[i].data == NULL) continue;
    if (t[i].ndim < 0 || t[i].ndim > AOTRUN_MAX_DIMS)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "backend '%s': %s %zu (%s) has rank %d (0..%d)",
                              m->backend->name, aotrun_hm_kind_name(kind), i,
                              aotrun_hm_io_name(m, kind, i, &info),
                              (int)t[i].ndim, AOTRUN_MAX_DIMS);
    int32_t want = declared_rank(&m->io, kind, i);
    if (want >= 0 && t[i].ndim != want)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "backend '%s': %s %zu (%s) has rank %d, the "
                              "method declares %d",
                              m->backend->name, aotrun_hm_kind_name(kind), i,
                              aotrun_hm_io_name(m, kind, i, &info),
                              (int)t[i].ndim, (int)want);
    if (t[i].ndim > 0 && t[i].shape == NULL)
      return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                              "backend '%s': %s %zu (%s) has %d dims but no "
                              "shape array",
                              m->backend->name, aotrun_hm_kind_name(kind), i,
                              aotrun_hm_io_name(m, kind, i, &info),
                              (int)t[i].ndim);
    if (!aotrun_strides_are_row_major(t[i].ndim, t[i].shape, t[i].strides))
      return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                              "backend '%s': %s %zu (%s) is not contiguous "
                              "(row-major strides are required; NULL strides "
                              "mean row-major)",
                              m->backend->name, aotrun_hm_kind_name(kind), i,
                              aotrun_hm_io_name(m, kind, i, &info));
  }
  return AOTRUN_OK;
}
