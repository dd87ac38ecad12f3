/*
 * faulty_ex_plugin.c: the "faulty_ex" test backend: an ABI 1.1 plugin whose
 * execute_ex breaks the contract in the way x[0] asks, so the host
 * library's checks of what a plugin hands back can be tested. It has no
 * synchronize member. One float32 vector in, one out (y = x), host memory.
 *
 *   x[0] == 1  OK, but no managed tensor for a data-NULL output
 *   x[0] == 2  OK, a managed tensor without a deleter
 *   x[0] == 3  OUTPUT_TOO_SMALL naming output 5 (there is one)
 *   x[0] == 4  status 42 (unknown to the host)
 *   x[0] == 5  INTERNAL, but a managed tensor left in the array
 *   otherwise  y = x (managed when asked), ASYNC accepted
 *
 * g_deleted counts deleter calls; the "faulty_ex.deleted.v1" extension
 * returns its address.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin_api/aotrun_plugin.h"

struct aotrun_method {
  char error[128];
};

static int g_deleted;
static int64_t g_shape[1] = {1};
static float g_value[1];
/* A managed tensor with no deleter (x[0] == 2): static, nothing leaks. */
static DLManagedTensor g_no_deleter = {
    .dl_tensor = {.data = g_value, .device = {kDLCPU, 0}, .ndim = 1,
                  .dtype = {kDLFloat, 32, 1}, .shape = g_shape}};

static void count_delete(DLManagedTensor *t) {
  g_deleted++;
  free(t->dl_tensor.data);
  free(t);
}

/* A copy of x as a new managed tensor; its shape lives in the same
 * allocation, right after the struct. */
static DLManagedTensor *copy_of(const DLTensor *x) {
  size_t bytes = (size_t)x->shape[0] * sizeof(float);
  DLManagedTensor *t = calloc(1, sizeof *t + sizeof(int64_t));
  void *data = t != NULL ? malloc(bytes ? bytes : 1) : NULL;
  if (data == NULL) {
    free(t);
    return NULL;
  }
  int64_t *shape = (int64_t *)(t + 1);
  shape[0] = x->shape[0];
  memcpy(data, x->data, bytes);
  t->dl_tensor = (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = 1,
                            .dtype = {kDLFloat, 32, 1}, .shape = shape};
  t->deleter = count_delete;
  return t;
}

static aotrun_status faulty_execute_ex(aotrun_method *m,
                                       aotrun_execute_args *a) {
  const DLTensor *x = &a->inputs[0];
  DLTensor *y = &a->outputs[0];
  float mode = x->shape[0] > 0 ? ((const float *)x->data)[0] : 0.0f;
  DLManagedTensor **managed = a->managed_outputs;
  int want_managed = managed != NULL && y->data == NULL;
  strcpy(m->error, "faulty on purpose");
  if (mode == 1.0f) return AOTRUN_OK;
  if (mode == 2.0f) {
    if (want_managed) managed[0] = &g_no_deleter;
    return AOTRUN_OK;
  }
  if (mode == 3.0f) {
    a->too_small_output = 5;
    a->needed_ndim = 1;
    a->needed_shape[0] = 99;
    return AOTRUN_ERR_OUTPUT_TOO_SMALL;
  }
  if (mode == 4.0f) return 42;
  if (mode == 5.0f) {
    if (managed != NULL) managed[0] = copy_of(x);
    return AOTRUN_ERR_INTERNAL;
  }
  m->error[0] = '\0';
  if (want_managed) {
    managed[0] = copy_of(x);
    return managed[0] != NULL ? AOTRUN_OK : AOTRUN_ERR_OUT_OF_MEMORY;
  }
  if (y->shape[0] < x->shape[0]) return AOTRUN_ERR_INVALID_ARGUMENT;
  memcpy(y->data, x->data, (size_t)x->shape[0] * sizeof(float));
  y->shape[0] = x->shape[0];
  return AOTRUN_OK;
}

static aotrun_status faulty_execute(aotrun_method *m, const DLTensor *in,
                                    size_t n_in, DLTensor *out,
                                    size_t n_out) {
  aotrun_execute_args a = {.struct_size = sizeof a, .inputs = in,
                           .num_inputs = n_in, .outputs = out,
                           .num_outputs = n_out};
  return faulty_execute_ex(m, &a);
}

static const char *faulty_name(void) { return "faulty_ex"; }

static int32_t faulty_is_available(char *reason, size_t size) {
  if (reason != NULL && size > 0) reason[0] = '\0';
  return 1;
}

static aotrun_status faulty_init(const aotrun_host_api *host,
                                 const void *processed, size_t size,
                                 const aotrun_key_value *specs, size_t n,
                                 aotrun_method **out) {
  (void)host, (void)processed, (void)size, (void)specs, (void)n;
  *out = calloc(1, sizeof **out);
  return *out != NULL ? AOTRUN_OK : AOTRUN_ERR_OUT_OF_MEMORY;
}

static void faulty_destroy(aotrun_method *m) { free(m); }

static aotrun_status faulty_no_option(aotrun_method *m,
                                      const aotrun_option *o) {
  (void)m, (void)o;
  return AOTRUN_ERR_NOT_FOUND;
}

static aotrun_status faulty_get_option(aotrun_method *m, const char *key,
                                       aotrun_option *out) {
  (void)m, (void)key, (void)out;
  return AOTRUN_ERR_NOT_FOUND;
}

static aotrun_status faulty_num_io(const aotrun_method *m, int32_t kind,
                                   size_t *count) {
  (void)m, (void)kind;
  *count = 1;
  return AOTRUN_OK;
}

static aotrun_status faulty_io_info(const aotrun_method *m, int32_t kind,
                                    size_t index, aotrun_io_info *out) {
  (void)m;
  if (index != 0) return AOTRUN_ERR_NOT_FOUND;
  aotrun_io_info info = {.ndim = 1, .dtype = {kDLFloat, 32, 1}};
  info.name = kind == AOTRUN_IO_INPUT ? "x" : "y";
  info.shape[0] = AOTRUN_DYNAMIC_DIM;
  size_t k = out->struct_size < sizeof info ? out->struct_size : sizeof info;
  info.struct_size = (uint32_t)k;
  memcpy(out, &info, k);
  return AOTRUN_OK;
}

static const char *faulty_last_error(const aotrun_method *m) {
  return m != NULL ? m->error : "";
}

static void *faulty_get_extension(const char *name) {
  return name != NULL && strcmp(name, "faulty_ex.deleted.v1") == 0
             ? (void *)&g_deleted
             : NULL;
}

static const aotrun_backend_api kApi = {
    .abi_version = AOTRUN_ABI_VERSION,
    .struct_size = sizeof(aotrun_backend_api),
    .get_name = faulty_name,
    .is_available = faulty_is_available,
    .init = faulty_init,
    .execute = faulty_execute,
    .destroy = faulty_destroy,
    .set_option = faulty_no_option,
    .get_option = faulty_get_option,
    .get_num_io = faulty_num_io,
    .get_io_info = faulty_io_info,
    .last_error = faulty_last_error,
    .get_extension = faulty_get_extension,
    /* -- execution, ABI 1.1 (no synchronize, on purpose) -- */
    .execute_ex = faulty_execute_ex,
};

AOTRUN_DECLARE_PLUGIN_ENTRY {
  *out = NULL;
  if (AOTRUN_VERSION_MAJOR(host_abi_version) != AOTRUN_ABI_VERSION_MAJOR)
    return AOTRUN_ERR_VERSION_MISMATCH;
  *out = &kApi;
  return AOTRUN_OK;
}
