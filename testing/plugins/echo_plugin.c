/*
 * echo_plugin.c: the "echo" test backend. It declares the inputs and
 * outputs its program's manifest declares (any dtype, any rank) and
 * execute copies input i to output i byte for byte, so a host's tensor I/O
 * can be checked bit-exactly for every dtype without a model. The manifest
 * must pair them: output i has input i's dtype and rank. An output whose
 * manifest dims no input binds (e.g. "u0") is, to a host, of
 * data-dependent size: execute_ex (ABI 1.1) allocates it when asked, and
 * reports AOTRUN_ERR_OUTPUT_TOO_SMALL with the needed shape when a
 * caller's buffer is too small.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/program.h"
#include "plugin_api/aotrun_plugin.h"

struct aotrun_method {
  aotrun_program *program;
  const aotrun_program_method *method;
  char error[1024];
};

static _Thread_local char g_error[1024];

/* ScalarType codes (docs/program-format.md) as DLPack dtypes (DLPack 1.1
 * codes for bool and float8), written out independently of the host. */
static int to_dl(int32_t scalar, DLDataType *out) {
  static const struct { int32_t scalar; uint8_t code, bits; } kMap[] = {
      {0, 1, 8},   {1, 0, 8},   {2, 0, 16},  {3, 0, 32},  {4, 0, 64},
      {5, 2, 16},  {6, 2, 32},  {7, 2, 64},  {9, 5, 64},  {11, 6, 8},
      {15, 4, 16}, {23, 12, 8}, {24, 10, 8}, {27, 1, 16}, {28, 1, 32},
      {29, 1, 64},
  };
  for (size_t i = 0; i < sizeof kMap / sizeof kMap[0]; i++)
    if (kMap[i].scalar == scalar) {
      *out = (DLDataType){kMap[i].code, kMap[i].bits, 1};
      return 1;
    }
  return 0;
}

static const char *echo_name(void) { return "echo"; }

static int32_t echo_is_available(char *reason, size_t size) {
  if (reason != NULL && size > 0) reason[0] = '\0';
  return 1;
}

static aotrun_status echo_init(const aotrun_host_api *host,
                               const void *processed, size_t size,
                               const aotrun_key_value *specs, size_t n,
                               aotrun_method **out) {
  (void)host;
  *out = NULL;
  const char *name = "forward";
  for (size_t i = 0; i < n; i++)
    if (strcmp(specs[i].key, "method") == 0) name = specs[i].value;
  aotrun_method *m = calloc(1, sizeof *m);
  if (m == NULL) return AOTRUN_ERR_OUT_OF_MEMORY;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status s = aotrun_program_parse(processed, size, &m->program, &err);
  if (s == AOTRUN_OK)
    s = aotrun_program_find_method(m->program, name, &m->method, &err);
  if (s == AOTRUN_OK && m->method->num_inputs != m->method->num_outputs)
    s = aotrun_error_set(&err, AOTRUN_ERR_INVALID_ARGUMENT,
                         "echo: method '%s' needs as many outputs as inputs",
                         name);
  if (s != AOTRUN_OK) {
    snprintf(g_error, sizeof g_error, "%s", err.message);
    aotrun_program_destroy(m->program);
    free(m);
    return s;
  }
  *out = m;
  return AOTRUN_OK;
}

static size_t nbytes_of(const DLTensor *t) {
  size_t n = ((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

static aotrun_status echo_execute(aotrun_method *m, const DLTensor *inputs,
                                  size_t num_inputs, DLTensor *outputs,
                                  size_t num_outputs) {
  if (num_inputs != num_outputs) return AOTRUN_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < num_inputs; i++) {
    const DLTensor *x = &inputs[i];
    DLTensor *y = &outputs[i];
    size_t need = nbytes_of(x);
    if (y->ndim != x->ndim || nbytes_of(y) < need) {
      snprintf(m->error, sizeof m->error,
               "echo: output %zu cannot hold input %zu", i, i);
      return AOTRUN_ERR_INVALID_ARGUMENT;
    }
    if (need)
      memcpy((char *)y->data + y->byte_offset,
             (const char *)x->data + x->byte_offset, need);
    for (int32_t d = 0; d < x->ndim; d++) y->shape[d] = x->shape[d];
  }
  return AOTRUN_OK;
}

/* ---- ABI 1.1 execute_ex: an output whose data is NULL (with
 * managed_outputs) is allocated here in host memory; an output with too
 * little room is AOTRUN_ERR_OUTPUT_TOO_SMALL with the input's shape. No
 * stream (host memory only); ASYNC is accepted (synchronous). ---- */

#define ARGS_HAS(a, member) AOTRUN_TABLE_HAS_2_(a, member)

typedef struct echo_managed {
  DLManagedTensor t;
  int64_t shape[AOTRUN_MAX_DIMS];
} echo_managed;

static void echo_managed_delete(DLManagedTensor *t) {
  free(t->dl_tensor.data);
  free(t->manager_ctx);
}

static DLManagedTensor *echo_managed_new(const DLTensor *x) {
  echo_managed *e = calloc(1, sizeof *e);
  size_t bytes = nbytes_of(x);
  void *data = e != NULL ? malloc(bytes ? bytes : 1) : NULL;
  if (data == NULL || x->ndim > AOTRUN_MAX_DIMS) {
    free(data);
    free(e);
    return NULL;
  }
  memcpy(e->shape, x->shape, (size_t)x->ndim * sizeof *x->shape);
  e->t = (DLManagedTensor){.manager_ctx = e, .deleter = echo_managed_delete};
  e->t.dl_tensor = (DLTensor){.data = data, .device = {kDLCPU, 0},
                              .ndim = x->ndim, .dtype = x->dtype,
                              .shape = e->shape};
  return &e->t;
}

/* Every output is checked before any is written. */
static aotrun_status echo_check_ex(aotrun_method *m, aotrun_execute_args *a,
                                   DLManagedTensor **managed) {
  if (ARGS_HAS(a, stream) && a->stream != NULL) {
    snprintf(m->error, sizeof m->error, "echo: host memory only, no stream");
    return AOTRUN_ERR_NOT_SUPPORTED;
  }
  if (a->num_inputs != a->num_outputs) return AOTRUN_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < a->num_inputs; i++) {
    const DLTensor *x = &a->inputs[i];
    const DLTensor *y = &a->outputs[i];
    if (managed != NULL && y->data == NULL) continue;
    if (y->ndim == x->ndim && nbytes_of(y) >= nbytes_of(x)) continue;
    snprintf(m->error, sizeof m->error,
             "echo: output %zu cannot hold input %zu", i, i);
    if (y->ndim != x->ndim) return AOTRUN_ERR_INVALID_ARGUMENT;
    if (ARGS_HAS(a, needed_shape)) {
      a->too_small_output = (int64_t)i;
      a->needed_ndim = x->ndim;
      memcpy(a->needed_shape, x->shape, (size_t)x->ndim * sizeof *x->shape);
    }
    return AOTRUN_ERR_OUTPUT_TOO_SMALL;
  }
  return AOTRUN_OK;
}

static aotrun_status echo_execute_ex(aotrun_method *m,
                                     aotrun_execute_args *a) {
  if (m == NULL || a == NULL ||
      a->struct_size < AOTRUN_MEMBER_END(aotrun_execute_args, num_outputs))
    return AOTRUN_ERR_INVALID_ARGUMENT;
  m->error[0] = '\0';
  DLManagedTensor **managed =
      ARGS_HAS(a, managed_outputs) ? a->managed_outputs : NULL;
  if (ARGS_HAS(a, needed_shape)) a->too_small_output = -1;
  for (size_t i = 0; managed != NULL && i < a->num_outputs; i++)
    managed[i] = NULL;
  aotrun_status s = echo_check_ex(m, a, managed);
  for (size_t i = 0; s == AOTRUN_OK && i < a->num_outputs; i++) {
    if (managed == NULL || a->outputs[i].data != NULL) continue;
    managed[i] = echo_managed_new(&a->inputs[i]);
    if (managed[i] == NULL) s = AOTRUN_ERR_OUT_OF_MEMORY;
  }
  if (s != AOTRUN_OK) {
    for (size_t i = 0; managed != NULL && i < a->num_outputs; i++) {
      if (managed[i] != NULL) echo_managed_delete(managed[i]);
      managed[i] = NULL;
    }
    return s;
  }
  DLTensor out[64];
  if (a->num_outputs > 64) return AOTRUN_ERR_NOT_SUPPORTED;
  for (size_t i = 0; i < a->num_outputs; i++)
    out[i] = managed != NULL && managed[i] != NULL ? managed[i]->dl_tensor
                                                   : a->outputs[i];
  return echo_execute(m, a->inputs, a->num_inputs, out, a->num_outputs);
}

static aotrun_status echo_synchronize(aotrun_method *m) {
  return m != NULL ? AOTRUN_OK : AOTRUN_ERR_INVALID_ARGUMENT;
}

static void echo_destroy(aotrun_method *m) {
  if (m == NULL) return;
  aotrun_program_destroy(m->program);
  free(m);
}

static aotrun_status echo_set_option(aotrun_method *m,
                                     const aotrun_option *o) {
  (void)o;
  snprintf(m ? m->error : g_error, 1024, "echo has no options");
  return AOTRUN_ERR_NOT_FOUND;
}

static aotrun_status echo_get_option(aotrun_method *m, const char *key,
                                     aotrun_option *out) {
  (void)key;
  (void)out;
  return echo_set_option(m, NULL);
}

static aotrun_status echo_num_io(const aotrun_method *m, int32_t kind,
                                 size_t *count) {
  *count = kind == AOTRUN_IO_INPUT ? m->method->num_inputs
                                   : m->method->num_outputs;
  return AOTRUN_OK;
}

static aotrun_status echo_io_info(const aotrun_method *m, int32_t kind,
                                  size_t index, aotrun_io_info *out) {
  size_t n = kind == AOTRUN_IO_INPUT ? m->method->num_inputs
                                     : m->method->num_outputs;
  if (index >= n) return AOTRUN_ERR_NOT_FOUND;
  const aotrun_program_io *io = kind == AOTRUN_IO_INPUT
                                    ? &m->method->inputs[index]
                                    : &m->method->outputs[index];
  aotrun_io_info info = {.ndim = io->ndim};
  info.name = io->name;
  if (!to_dl(io->dtype, &info.dtype)) return AOTRUN_ERR_NOT_SUPPORTED;
  for (int32_t d = 0; d < io->ndim; d++) info.shape[d] = io->dims[d];
  /* Write and report min(caller's size, ours) (ABI 1.1). */
  size_t k = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)k;
  memcpy(out, &info, k);
  return AOTRUN_OK;
}

static const char *echo_last_error(const aotrun_method *m) {
  return m != NULL ? m->error : g_error;
}

static const aotrun_backend_api kApi = {
    .abi_version = AOTRUN_ABI_VERSION,
    .struct_size = sizeof(aotrun_backend_api),
    .get_name = echo_name,
    .is_available = echo_is_available,
    .init = echo_init,
    .execute = echo_execute,
    .destroy = echo_destroy,
    .set_option = echo_set_option,
    .get_option = echo_get_option,
    .get_num_io = echo_num_io,
    .get_io_info = echo_io_info,
    .last_error = echo_last_error,
    /* -- execution, ABI 1.1 -- */
    .execute_ex = echo_execute_ex,
    .synchronize = echo_synchronize,
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  if (out == NULL) return AOTRUN_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  return AOTRUN_OK;
}
