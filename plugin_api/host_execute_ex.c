/*
 * host_execute_ex.c: aotrun_host_method_execute_ex and _synchronize (ABI
 * 1.1): the checks the plugin cannot make, the fallback to a plugin's 1.0
 * execute where that is exactly equivalent, and the checks of what the
 * plugin hands back (backend-allocated outputs, the too-small report).
 */
#include <stdio.h>
#include <string.h>

#include "plugin_api/host_error.h"
#include "plugin_api/host_method_internal.h"

/* The execute_args members a caller must pass: the counterparts of 1.0
 * execute's arguments. Members after them that struct_size does not cover
 * read as 0 / NULL. */
#define ARGS_MIN_SIZE AOTRUN_MEMBER_END(aotrun_execute_args, num_outputs)
#define KNOWN_FLAGS AOTRUN_EXECUTE_ASYNC

#define ARGS_HAS(a, member) AOTRUN_TABLE_HAS_2_(a, member)

static void *args_stream(const aotrun_execute_args *a) {
  return ARGS_HAS(a, stream) ? a->stream : NULL;
}

static DLManagedTensor **args_managed(const aotrun_execute_args *a) {
  return ARGS_HAS(a, managed_outputs) ? a->managed_outputs : NULL;
}

static aotrun_status check_args(const aotrun_host_method *m,
                                const aotrun_execute_args *a) {
  if (m == NULL || a == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: NULL method or args");
  if (a->struct_size < ARGS_MIN_SIZE || a->struct_size > AOTRUN_TABLE_MAX_SIZE)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: args struct_size %u is outside "
                            "%zu..%zu (set it to sizeof(aotrun_execute_args))",
                            (unsigned)a->struct_size, (size_t)ARGS_MIN_SIZE,
                            (size_t)AOTRUN_TABLE_MAX_SIZE);
  if ((a->inputs == NULL && a->num_inputs) ||
      (a->outputs == NULL && a->num_outputs))
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: NULL inputs or outputs with a "
                            "count above 0 (%zu inputs, %zu outputs)",
                            a->num_inputs, a->num_outputs);
  if (a->flags & ~(uint32_t)KNOWN_FLAGS)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "execute_ex: flags 0x%x hold bits unknown to "
                            "this host library (0x%x; ABI 1.1 knows "
                            "AOTRUN_EXECUTE_ASYNC = 0x1)",
                            (unsigned)a->flags,
                            (unsigned)(a->flags & ~(uint32_t)KNOWN_FLAGS));
  return AOTRUN_OK;
}

static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++)
    n *= t->shape[d] > 0 ? t->shape[d] : 0;
  return n;
}

/* An output without data needs managed_outputs (unless it holds nothing:
 * 1.0 allows NULL data for an empty output). */
static aotrun_status check_dataless_outputs(const aotrun_host_method *m,
                                            const aotrun_execute_args *a) {
  if (args_managed(a) != NULL)
    return AOTRUN_OK;
  for (size_t i = 0; i < a->num_outputs; i++) {
    const DLTensor *t = &a->outputs[i];
    if (t->data != NULL || numel(t) == 0)
      continue;
    aotrun_io_info info;
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "backend '%s': output %zu (%s) has no data and "
                            "args->managed_outputs is NULL (pass an array "
                            "to have the backend allocate it)",
                            m->backend->name, i,
                            aotrun_hm_io_name(m, AOTRUN_IO_OUTPUT, i, &info));
  }
  return AOTRUN_OK;
}

/* The index of the first output the backend is asked to allocate, or -1. */
static long first_managed(const aotrun_execute_args *a) {
  if (args_managed(a) == NULL)
    return -1;
  for (size_t i = 0; i < a->num_outputs; i++)
    if (a->outputs[i].data == NULL)
      return (long)i;
  return -1;
}

static void delete_managed(DLManagedTensor **managed, size_t n) {
  for (size_t i = 0; managed != NULL && i < n; i++) {
    if (managed[i] != NULL && managed[i]->deleter != NULL)
      managed[i]->deleter(managed[i]);
    managed[i] = NULL;
  }
}

/* A 1.0 execute does what execute_ex asks only without a caller stream
 * and without backend-allocated outputs. ASYNC is no obstacle: a
 * synchronous call has finished its work before it returns, which the
 * flag allows. */
static aotrun_status run_fallback(aotrun_host_method *m,
                                  const aotrun_execute_args *a) {
  const char *what = NULL;
  char buf[160];
  long i = first_managed(a);
  aotrun_io_info info;
  if (args_stream(a) != NULL) {
    what = "a caller stream";
  } else if (i >= 0) {
    snprintf(buf, sizeof buf,
             "backend-allocated outputs (output %ld (%s) "
             "has no data)",
             i, aotrun_hm_io_name(m, AOTRUN_IO_OUTPUT, (size_t)i, &info));
    what = buf;
  }
  if (what != NULL)
    return aotrun_host_fail(
        AOTRUN_ERR_NOT_SUPPORTED,
        "backend '%s' (ABI %u.%u) has no execute_ex: it "
        "cannot take %s",
        m->backend->name,
        (unsigned)AOTRUN_VERSION_MAJOR(m->backend->api->abi_version),
        (unsigned)AOTRUN_VERSION_MINOR(m->backend->api->abi_version), what);
  if (!AOTRUN_BACKEND_CAN(m->backend, execute))
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' has no execute", m->backend->name);
  aotrun_status s = m->backend->api->execute(
      m->handle, a->inputs, a->num_inputs, a->outputs, a->num_outputs);
  return s == AOTRUN_OK
             ? s
             : aotrun_hm_call_failed(m->backend, m->handle, "execute", s);
}

/* What the plugin hands back for output i must be a tensor the caller can
 * use: a deleter, a rank in range, a shape, row-major strides. */
static aotrun_status check_managed(const aotrun_host_method *m,
                                   const aotrun_execute_args *a) {
  DLManagedTensor **managed = args_managed(a);
  for (size_t i = 0; managed != NULL && i < a->num_outputs; i++) {
    const DLManagedTensor *t = managed[i];
    const char *bad = NULL;
    if (a->outputs[i].data != NULL)
      bad = t != NULL ? "an entry for an output the caller gave data" : NULL;
    else if (t == NULL)
      bad = "no tensor";
    else if (t->deleter == NULL)
      bad = "a tensor without a deleter";
    else if (t->dl_tensor.ndim < 0 || t->dl_tensor.ndim > AOTRUN_MAX_DIMS ||
             (t->dl_tensor.ndim > 0 && t->dl_tensor.shape == NULL))
      bad = "a tensor without a valid rank and shape";
    else if (!aotrun_strides_are_row_major(
                 t->dl_tensor.ndim, t->dl_tensor.shape, t->dl_tensor.strides))
      bad = "a tensor that is not row-major";
    if (bad == NULL)
      continue;
    aotrun_io_info info;
    return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                            "backend '%s': execute_ex returned %s in "
                            "managed_outputs[%zu] (output %s)",
                            m->backend->name, bad, i,
                            aotrun_hm_io_name(m, AOTRUN_IO_OUTPUT, i, &info));
  }
  return AOTRUN_OK;
}

/* The too-small report must name an output and a shape in range. */
static aotrun_status check_too_small(const aotrun_host_method *m,
                                     aotrun_execute_args *a, aotrun_status s) {
  if (!ARGS_HAS(a, needed_shape))
    return s;
  if (a->too_small_output >= 0 &&
      (uint64_t)a->too_small_output < a->num_outputs && a->needed_ndim >= 0 &&
      a->needed_ndim <= AOTRUN_MAX_DIMS)
    return s;
  char why[AOTRUN_HOST_ERROR_SIZE];
  snprintf(why, sizeof why, "%s", aotrun_host_last_error());
  long long index = (long long)a->too_small_output;
  a->too_small_output = -1;
  return aotrun_host_fail(AOTRUN_ERR_INTERNAL,
                          "%s [backend '%s' reported output %lld with rank "
                          "%d as too small: out of range for %zu outputs]",
                          why, m->backend->name, index, (int)a->needed_ndim,
                          a->num_outputs);
}

static aotrun_status call_plugin(aotrun_host_method *m,
                                 aotrun_execute_args *a) {
  DLManagedTensor **managed = args_managed(a);
  aotrun_status s = m->backend->api->execute_ex(m->handle, a);
  if (s != AOTRUN_OK) {
    aotrun_status r =
        aotrun_hm_call_failed(m->backend, m->handle, "execute_ex", s);
    delete_managed(managed, a->num_outputs); /* the ABI: all NULL on failure */
    if (ARGS_HAS(a, needed_shape) && s != AOTRUN_ERR_OUTPUT_TOO_SMALL)
      a->too_small_output = -1;
    return s == AOTRUN_ERR_OUTPUT_TOO_SMALL ? check_too_small(m, a, r) : r;
  }
  s = check_managed(m, a);
  if (s != AOTRUN_OK) {
    delete_managed(managed, a->num_outputs);
    return s;
  }
  if ((a->flags & AOTRUN_EXECUTE_ASYNC) &&
      !AOTRUN_BACKEND_CAN(m->backend, synchronize))
    m->async_pending = 1;
  return AOTRUN_OK;
}

aotrun_status aotrun_host_method_execute_ex(aotrun_host_method *m,
                                            aotrun_execute_args *a) {
  aotrun_status s = check_args(m, a);
  if (s != AOTRUN_OK)
    return s;
  if (ARGS_HAS(a, needed_shape)) {
    a->too_small_output = -1;
    a->needed_ndim = 0;
  }
  DLManagedTensor **managed = args_managed(a);
  for (size_t i = 0; managed != NULL && i < a->num_outputs; i++)
    managed[i] = NULL;
  /* The counts first: the checks below read every tensor the caller says
   * it passes, so a count above the method's must be refused before. */
  s = aotrun_hm_check_count(m, AOTRUN_IO_INPUT, a->num_inputs);
  if (s == AOTRUN_OK)
    s = aotrun_hm_check_count(m, AOTRUN_IO_OUTPUT, a->num_outputs);
  if (s == AOTRUN_OK)
    s = aotrun_hm_check_tensors(m, AOTRUN_IO_INPUT, a->inputs, a->num_inputs,
                                0);
  if (s == AOTRUN_OK)
    s = aotrun_hm_check_tensors(m, AOTRUN_IO_OUTPUT, a->outputs, a->num_outputs,
                                managed != NULL);
  if (s == AOTRUN_OK)
    s = check_dataless_outputs(m, a);
  if (s != AOTRUN_OK)
    return s;
  if (!AOTRUN_BACKEND_CAN(m->backend, execute_ex))
    return run_fallback(m, a);
  return call_plugin(m, a);
}

aotrun_status aotrun_host_method_synchronize(aotrun_host_method *m) {
  if (m == NULL)
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "synchronize: NULL host method");
  if (!AOTRUN_BACKEND_CAN(m->backend, synchronize)) {
    /* Without execute_ex every call was synchronous: nothing can be
     * pending. With it, work queued on the backend's own stream cannot be
     * waited for here. */
    if (!m->async_pending)
      return AOTRUN_OK;
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "backend '%s' ran an AOTRUN_EXECUTE_ASYNC call "
                            "but has no synchronize: wait on the stream "
                            "passed to execute_ex instead",
                            m->backend->name);
  }
  aotrun_status s = m->backend->api->synchronize(m->handle);
  if (s != AOTRUN_OK)
    return aotrun_hm_call_failed(m->backend, m->handle, "synchronize", s);
  m->async_pending = 0;
  return AOTRUN_OK;
}
