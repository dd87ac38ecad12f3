/*
 * cli_execute.c: one execute for `aotrun run` and `bench`. With a backend
 * that has execute_ex (ABI 1.1), outputs of data-dependent size are
 * allocated by the backend (managed outputs) instead of being given a
 * guessed capacity, and an output the backend reports too small is
 * reallocated to the shape it needs and the call retried once. A backend
 * without execute_ex gets the 1.0 execute, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"

/* cudaMemcpyDeviceToHost (driver_types.h). */
#define CUDA_MEMCPY_DEVICE_TO_HOST 2

static const char *output_name(const cli_session *s, size_t i) {
  const manifest_method *m = s->method;
  return m != NULL && i < m->num_outputs && m->outputs[i].name != NULL
             ? m->outputs[i].name
             : "?";
}

/* Bytes of (dtype, ndim, shape), or 0 with *ok = 0 on overflow. */
static size_t bytes_of(DLDataType dtype, int32_t ndim, const int64_t *shape,
                       int *ok) {
  size_t bytes = aotrun_dtype_size(dtype);
  *ok = 1;
  for (int32_t d = 0; d < ndim; d++) {
    if (shape[d] < 0 ||
        (shape[d] != 0 && bytes > SIZE_MAX / (size_t)shape[d])) {
      *ok = 0;
      return 0;
    }
    bytes *= (size_t)shape[d];
  }
  return bytes;
}

/* Output `i` gets a host buffer of the shape the backend asked for. */
static aotrun_status grow_output(const cli_session *s, cli_tensors *t,
                                 const aotrun_execute_args *a) {
  size_t i = (size_t)a->too_small_output;
  DLTensor *o = &t->outputs[i];
  int ok = 0;
  size_t bytes = bytes_of(o->dtype, a->needed_ndim, a->needed_shape, &ok);
  if (t->managed[i] || o->device.device_type != kDLCPU ||
      a->needed_ndim != o->ndim || !ok)
    return AOTRUN_ERR_OUTPUT_TOO_SMALL; /* the backend's message stands */
  void *data = calloc(1, bytes ? bytes : 1);
  if (data == NULL) return AOTRUN_ERR_OUTPUT_TOO_SMALL;
  free(o->data);
  o->data = data;
  memcpy(t->out_capacity[i], a->needed_shape,
         (size_t)a->needed_ndim * sizeof a->needed_shape[0]);
  memcpy(t->out_shapes[i], t->out_capacity[i], sizeof t->out_capacity[i]);
  fprintf(stderr, "aotrun: note: output %zu (", i);
  cli_put_escaped(stderr, output_name(s, i));
  fprintf(stderr, ") needs %zu bytes; reallocated, running again\n", bytes);
  return AOTRUN_OK;
}

aotrun_status cli_execute(const cli_session *s, cli_tensors *t) {
  if (!t->use_ex)
    return aotrun_host_method_execute(s->handle, t->inputs, t->num_inputs,
                                      t->outputs, t->num_outputs);
  for (int attempt = 0;; attempt++) {
    aotrun_execute_args a = {.struct_size = sizeof a,
                             .inputs = t->inputs,
                             .num_inputs = t->num_inputs,
                             .outputs = t->outputs,
                             .num_outputs = t->num_outputs,
                             .managed_outputs = t->held};
    aotrun_status st = aotrun_host_method_execute_ex(s->handle, &a);
    if (st != AOTRUN_ERR_OUTPUT_TOO_SMALL || attempt > 0 ||
        a.too_small_output < 0 || grow_output(s, t, &a) != AOTRUN_OK)
      return st;
  }
}

/* Copies `src` (host or CUDA memory) into `dst`. */
static int copy_to_host(const cli_session *s, cli_tensors *t, size_t i,
                        const DLTensor *src, void *dst, size_t bytes) {
  const char *from = (const char *)src->data + src->byte_offset;
  DLDeviceType type = src->device.device_type;
  if (bytes == 0) return CLI_EXIT_OK;
  if (type == kDLCPU || type == kDLCUDAHost) {
    memcpy(dst, from, bytes);
    return CLI_EXIT_OK;
  }
  if (type != kDLCUDA && type != kDLCUDAManaged)
    return cli_fail(CLI_EXIT_EXECUTE,
                    "output %zu (%s) is in memory of DLPack device type %d, "
                    "which aotrun cannot read",
                    i, output_name(s, i), (int)type);
  if (t->runtime == NULL) {
    t->runtime = calloc(1, sizeof *t->runtime);
    if (t->runtime == NULL)
      return cli_fail(CLI_EXIT_EXECUTE, "out of memory");
    int rc = cli_device_io_load_runtime(t->runtime);
    if (rc != CLI_EXIT_OK) {
      free(t->runtime);
      t->runtime = NULL;
      return rc;
    }
  }
  int e = t->runtime->memcpy_fn(dst, from, bytes, CUDA_MEMCPY_DEVICE_TO_HOST);
  if (e != 0)
    return cli_fail(CLI_EXIT_EXECUTE,
                    "cudaMemcpy of output %zu (%s, %zu bytes) to the host "
                    "failed: CUDA error %d",
                    i, output_name(s, i), bytes, e);
  return CLI_EXIT_OK;
}

/* Held output i into a host buffer that outputs[i] then describes. */
static int take_one(const cli_session *s, cli_tensors *t, size_t i) {
  const DLTensor *src = &t->held[i]->dl_tensor;
  int ok = 0;
  size_t bytes = bytes_of(src->dtype, src->ndim, src->shape, &ok);
  if (!ok || src->ndim != t->outputs[i].ndim)
    return cli_fail(CLI_EXIT_EXECUTE,
                    "output %zu (%s): the backend returned rank %d (declared "
                    "%d) or an impossible size",
                    i, output_name(s, i), (int)src->ndim,
                    (int)t->outputs[i].ndim);
  void *host = malloc(bytes ? bytes : 1);
  if (host == NULL)
    return cli_fail(CLI_EXIT_EXECUTE, "out of memory for output %zu (%s)", i,
                    output_name(s, i));
  int rc = copy_to_host(s, t, i, src, host, bytes);
  if (rc != CLI_EXIT_OK) {
    free(host);
    return rc;
  }
  DLTensor *o = &t->outputs[i];
  free(o->data);
  o->data = host;
  o->dtype = src->dtype;
  o->device = (DLDevice){kDLCPU, 0};
  o->shape = t->out_shapes[i];
  memcpy(o->shape, src->shape, (size_t)src->ndim * sizeof *src->shape);
  t->held[i]->deleter(t->held[i]);
  t->held[i] = NULL;
  return CLI_EXIT_OK;
}

int cli_tensors_take_managed(const cli_session *s, cli_tensors *t) {
  int rc = CLI_EXIT_OK;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t->num_outputs; i++)
    if (t->managed[i] && t->held[i] != NULL) rc = take_one(s, t, i);
  return rc;
}
