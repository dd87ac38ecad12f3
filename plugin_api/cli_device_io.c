/*
 * cli_device_io.c: `aotrun bench --device-io`: the job's inputs and outputs
 * in device memory, as a serving host keeps them. The CLI links no CUDA: the
 * CUDA runtime is loaded with dlopen when --device-io is used
 * ($AOTRUN_CUDART, else libcudart.so.13, else libcudart.so) and only
 * cudaMalloc, cudaFree and cudaMemcpy are resolved (cudaGetErrorString too
 * when present, for messages). The backend's session is open by then, so a
 * runtime its plugin already loaded is the one found (same SONAME).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"

/* The few cudaMemcpyKind and cudaError_t values used (driver_types.h). */
#define CUDA_MEMCPY_HOST_TO_DEVICE 1
#define CUDA_MEMCPY_DEVICE_TO_HOST 2
#define CUDA_ERROR_MEMORY_ALLOCATION 2

static const char *error_text(const cli_device_io *d, int e) {
  const char *s = d->error_string != NULL ? d->error_string(e) : NULL;
  return s != NULL ? s : "no description";
}

/* Resolves one symbol; fails naming the library and the symbol. */
static int resolve(cli_device_io *d, const char *name, void **out) {
  dlerror();
  *out = dlsym(d->lib, name);
  if (*out == NULL)
    return cli_fail(CLI_EXIT_PLUGIN,
                    "--device-io: the CUDA runtime %s has no %s", d->lib_name,
                    name);
  return CLI_EXIT_OK;
}

int cli_device_io_load_runtime(cli_device_io *d) {
  const char *env = getenv("AOTRUN_CUDART");
  const char *names[2] = {"libcudart.so.13", "libcudart.so"};
  size_t count = 2;
  if (env != NULL && env[0] != '\0') {
    names[0] = env;
    count = 1;
  }
  char tried[2048] = "";
  size_t used = 0;
  for (size_t i = 0; i < count && d->lib == NULL; i++) {
    d->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (d->lib != NULL) {
      snprintf(d->lib_name, sizeof d->lib_name, "%s", names[i]);
      break;
    }
    const char *why = dlerror();
    int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "",
                     why != NULL ? why : names[i]);
    if (n > 0) used += (size_t)n < sizeof tried - used ? (size_t)n
                                                        : sizeof tried - used - 1;
  }
  if (d->lib == NULL)
    return cli_fail(CLI_EXIT_PLUGIN,
                    "--device-io: cannot load the CUDA runtime (%s); put "
                    "CUDA 13's lib64 on LD_LIBRARY_PATH or name the library "
                    "in $AOTRUN_CUDART",
                    tried);
  void *p;
  int rc = resolve(d, "cudaMalloc", &p);
  if (rc == CLI_EXIT_OK) {
    memcpy(&d->malloc_fn, &p, sizeof p);
    rc = resolve(d, "cudaFree", &p);
  }
  if (rc == CLI_EXIT_OK) {
    memcpy(&d->free_fn, &p, sizeof p);
    rc = resolve(d, "cudaMemcpy", &p);
  }
  if (rc == CLI_EXIT_OK) memcpy(&d->memcpy_fn, &p, sizeof p);
  p = dlsym(d->lib, "cudaGetErrorString"); /* optional */
  if (p != NULL) memcpy(&d->error_string, &p, sizeof p);
  return rc;
}

static size_t tensor_bytes(const DLTensor *t) {
  size_t bytes = aotrun_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->ndim; d++) bytes *= (size_t)t->shape[d];
  return bytes;
}

static const char *io_name(const cli_session *s, int input, size_t i) {
  const manifest_method *m = s->method;
  const manifest_io *io = NULL;
  if (m != NULL && input && i < m->num_inputs) io = &m->inputs[i];
  if (m != NULL && !input && i < m->num_outputs) io = &m->outputs[i];
  return io != NULL && io->name != NULL ? io->name : "?";
}

/* Gives tensor t a device copy of its host bytes; remembers the host
 * pointer in *host. */
static int to_device(cli_device_io *d, const cli_session *s, int input,
                     size_t i, DLTensor *t, size_t bytes, void **host) {
  const char *kind = input ? "input" : "output";
  void *dev = NULL;
  int e = d->malloc_fn(&dev, bytes ? bytes : 1);
  if (e != 0)
    return cli_fail(e == CUDA_ERROR_MEMORY_ALLOCATION ? CLI_EXIT_EXECUTE
                                                      : CLI_EXIT_PLUGIN,
                    "--device-io: cudaMalloc of %zu bytes for %s %zu (%s) "
                    "failed: CUDA error %d (%s)",
                    bytes, kind, i, io_name(s, input, i), e, error_text(d, e));
  /* Outputs get their (zeroed) host contents too: defined bytes. */
  e = bytes ? d->memcpy_fn(dev, (const char *)t->data + t->byte_offset, bytes,
                           CUDA_MEMCPY_HOST_TO_DEVICE)
            : 0;
  if (e != 0) {
    d->free_fn(dev);
    return cli_fail(CLI_EXIT_EXECUTE,
                    "--device-io: cudaMemcpy of %zu bytes to %s %zu (%s) "
                    "failed: CUDA error %d (%s)",
                    bytes, kind, i, io_name(s, input, i), e, error_text(d, e));
  }
  *host = t->data;
  t->data = dev;
  t->device = (DLDevice){kDLCUDA, 0};
  return CLI_EXIT_OK;
}

int cli_device_io_start(const cli_session *s, cli_tensors *t,
                        cli_device_io *d) {
  memset(d, 0, sizeof *d);
  int rc = cli_device_io_load_runtime(d);
  if (rc != CLI_EXIT_OK) return rc;
  d->tensors = t;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t->num_inputs; i++) {
    rc = to_device(d, s, 1, i, &t->inputs[i], tensor_bytes(&t->inputs[i]),
                   &d->host_in[i]);
    if (rc == CLI_EXIT_OK) d->num_in++;
  }
  /* Outputs at their allocated capacity (dynamic dims written back);
   * backend-allocated ones (no buffer) stay as they are. */
  for (size_t i = 0; rc == CLI_EXIT_OK && i < t->num_outputs; i++) {
    if (t->managed[i]) {
      d->num_out++;
      continue;
    }
    DLTensor cap = t->outputs[i];
    cap.shape = t->out_capacity[i];
    rc = to_device(d, s, 0, i, &t->outputs[i], tensor_bytes(&cap),
                   &d->host_out[i]);
    if (rc == CLI_EXIT_OK) d->num_out++;
  }
  if (rc != CLI_EXIT_OK) cli_device_io_stop(d);
  return rc;
}

int cli_device_io_copy_outputs(cli_device_io *d) {
  cli_tensors *t = d->tensors;
  for (size_t i = 0; i < d->num_out; i++) {
    if (t->managed[i]) continue;
    DLTensor cap = t->outputs[i];
    cap.shape = t->out_capacity[i];
    size_t bytes = tensor_bytes(&cap);
    int e = bytes ? d->memcpy_fn(d->host_out[i], t->outputs[i].data, bytes,
                                 CUDA_MEMCPY_DEVICE_TO_HOST)
                  : 0;
    if (e != 0)
      return cli_fail(CLI_EXIT_EXECUTE,
                      "--device-io: cudaMemcpy of output %zu (%zu bytes) to "
                      "the host failed: CUDA error %d (%s)",
                      i, bytes, e, error_text(d, e));
  }
  return CLI_EXIT_OK;
}

void cli_device_io_stop(cli_device_io *d) {
  cli_tensors *t = d->tensors;
  for (size_t i = 0; t != NULL && i < d->num_in; i++) {
    d->free_fn(t->inputs[i].data);
    t->inputs[i].data = d->host_in[i];
    t->inputs[i].device = (DLDevice){kDLCPU, 0};
  }
  for (size_t i = 0; t != NULL && i < d->num_out; i++) {
    if (t->managed[i]) continue;
    d->free_fn(t->outputs[i].data);
    t->outputs[i].data = d->host_out[i];
    t->outputs[i].device = (DLDevice){kDLCPU, 0};
  }
  d->num_in = d->num_out = 0;
  /* The runtime stays loaded: the backend may share it, and unloading a
   * CUDA runtime that still has a context is not safe. */
}
