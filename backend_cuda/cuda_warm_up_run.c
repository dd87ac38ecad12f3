/* cuda_warm_up_run.c: see cuda_warm_up_run.h. */
#include "backend_cuda/cuda_warm_up_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "aot_loader/load_report.h"
#include "backend_cuda/warm_up_run_plan.h"

/* Inputs (and outputs) a warm-up run takes; more is refused. */
#define MAX_IO 64
/* Each input's start in the one zeroed block; also the bytes of the
 * block's tail that warm_copies writes. */
#define ALIGN 256

typedef struct zero_inputs {
  DLTensor t[MAX_IO];
  int64_t shapes[MAX_IO][AOTRUN_PROGRAM_MAX_DIMS];
  int64_t smallest[MAX_IO][AOTRUN_PROGRAM_MAX_DIMS]; /* the second run's */
  void *block;
  size_t inputs_bytes; /* the inputs' part; ALIGN more follow */
} zero_inputs;

static int fail(char *why, size_t n, const char *what, cudaError_t e) {
  snprintf(why, n, "%s: %s", what, cudaGetErrorString(e));
  (void)cudaGetLastError(); /* not sticky: the next call must not see it */
  return 1;
}

/* The DLTensors over one zeroed device block, laid out from their shapes. */
static int make_inputs(const aotrun_program_method *pm, int device,
                       void *stream, zero_inputs *z, char *why, size_t n) {
  size_t offsets[MAX_IO], total = 0;
  for (size_t i = 0; i < pm->num_inputs; i++) {
    DLTensor *t = &z->t[i];
    if (!aotrun_dl_dtype_from_scalar_type(pm->inputs[i].dtype, &t->dtype)) {
      snprintf(why, n, "input %zu (%s) has a dtype DLPack cannot name", i,
               pm->inputs[i].name);
      return 1;
    }
    t->ndim = pm->inputs[i].ndim;
    t->shape = z->shapes[i];
    t->device = (DLDevice){kDLCUDA, device};
    size_t bytes = aotrun_dl_itemsize(t->dtype);
    for (int d = 0; d < t->ndim; d++) bytes *= (size_t)z->shapes[i][d];
    offsets[i] = total;
    total += (bytes + ALIGN - 1) / ALIGN * ALIGN;
  }
  z->inputs_bytes = total ? total : ALIGN;
  cudaError_t e = cudaMalloc(&z->block, z->inputs_bytes + ALIGN);
  if (e != cudaSuccess) return fail(why, n, "cudaMalloc of the zeroed inputs", e);
  e = cudaMemsetAsync(z->block, 0, z->inputs_bytes + ALIGN, stream);
  if (e != cudaSuccess) return fail(why, n, "cudaMemsetAsync", e);
  for (size_t i = 0; i < pm->num_inputs; i++)
    z->t[i].data = (char *)z->block + offsets[i];
  return 0;
}

static int run_once(aotrun_method_runner *runner,
                    const aotrun_program_method *pm, void *stream,
                    zero_inputs *z, char *why, size_t n) {
  AtenTensorHandle out[MAX_IO] = {0};
  aotrun_error err = {AOTRUN_OK, ""};
  aotrun_status st = aotrun_method_runner_run_handles(
      runner, z->t, pm->num_inputs, out, pm->num_outputs, stream, &err);
  cudaError_t e = cudaStreamSynchronize(stream);
  aotrun_method_runner_delete_handles(out, pm->num_outputs);
  if (st != AOTRUN_OK) {
    snprintf(why, n, "%s", err.message);
    aotrun_shim_clear_error();
    return 1;
  }
  return e == cudaSuccess ? 0 : fail(why, n, "cudaStreamSynchronize", e);
}

/* The copies a call makes around the model (the outputs into the caller's
 * device tensors, host inputs and outputs), once each on zeroed bytes: the
 * driver sets up each copy kind at its first use, which would otherwise
 * be the first call's. */
static int warm_copies(void *stream, zero_inputs *z, char *why, size_t n) {
  char host[16] = {0};
  char *tail = (char *)z->block + z->inputs_bytes;
  cudaError_t e = cudaMemcpyAsync(tail, z->block, ALIGN,
                                  cudaMemcpyDeviceToDevice, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(host, tail, sizeof host, cudaMemcpyDeviceToHost,
                        stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(tail, host, sizeof host, cudaMemcpyHostToDevice,
                        stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? 0 : fail(why, n, "warming the copies", e);
}

/* The shapes of both runs; 0 and why when the method may not be run. */
static int plan(const aotrun_program_method *pm, const void *manifest,
                size_t size, const char *method, zero_inputs *z, char *why,
                size_t n) {
  if (aotrun_warm_up_run_refused(manifest, size, method, why, n) ||
      !aotrun_warm_up_run_shapes(pm, AOTRUN_WARM_UP_AT_HINT, z->shapes,
                                 MAX_IO, why, n) ||
      !aotrun_warm_up_run_shapes(pm, AOTRUN_WARM_UP_AT_SMALLEST, z->smallest,
                                 MAX_IO, why, n))
    return 0;
  if (pm->num_outputs > MAX_IO) {
    snprintf(why, n, "it has %zu outputs, more than %d", pm->num_outputs,
             MAX_IO);
    return 0;
  }
  return 1;
}

/* Whether the smallest sizes differ from the first run's. */
static int smallest_differs(const aotrun_program_method *pm,
                            const zero_inputs *z) {
  for (size_t i = 0; i < pm->num_inputs; i++)
    if (memcmp(z->shapes[i], z->smallest[i],
               sizeof(int64_t) * (size_t)pm->inputs[i].ndim) != 0)
      return 1;
  return 0;
}

/* The run at the hint with the copies, then one at the smallest sizes
 * where they differ: a size-1 batch, common in serving, uses other cuBLAS
 * kernels than the export example's. Only the first run's failure fails
 * the warm-up; the second's leaves its reason in why. */
static int run_both(aotrun_method_runner *runner,
                    const aotrun_program_method *pm, int device, void *stream,
                    zero_inputs *z, int *runs, char *why, size_t n) {
  if (make_inputs(pm, device, stream, z, why, n) ||
      run_once(runner, pm, stream, z, why, n) ||
      warm_copies(stream, z, why, n))
    return 1;
  *runs = 1;
  if (!smallest_differs(pm, z)) return 0;
  cudaFree(z->block);
  z->block = NULL;
  memcpy(z->shapes, z->smallest, sizeof z->shapes);
  if (!make_inputs(pm, device, stream, z, why, n) &&
      !run_once(runner, pm, stream, z, why, n))
    *runs = 2;
  return 0;
}

int aotrun_cuda_warm_up_run(aotrun_method_runner *runner, const void *manifest,
                            size_t size, const char *method, int device,
                            void *stream, int *refused, int *runs, char *why,
                            size_t why_size, double *ms) {
  *refused = 1;
  *runs = 0;
  *ms = 0;
  const aotrun_program_method *pm = aotrun_method_runner_program_method(runner);
  if (pm == NULL) {
    snprintf(why, why_size, "the method has no manifest entry");
    return 1;
  }
  zero_inputs *z = calloc(1, sizeof *z);
  if (z == NULL) {
    snprintf(why, why_size, "out of memory");
    return 1;
  }
  int bad = !plan(pm, manifest, size, method, z, why, why_size);
  if (!bad) {
    *refused = 0;
    int64_t t0 = aotrun_load_clock_ns();
    bad = run_both(runner, pm, device, stream, z, runs, why, why_size);
    *ms = (double)(aotrun_load_clock_ns() - t0) / 1e6;
  }
  if (z->block != NULL) cudaFree(z->block);
  free(z);
  return bad;
}
