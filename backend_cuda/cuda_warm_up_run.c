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
  /* The first run's outputs as a caller's device tensors (caller_run). */
  DLTensor out[MAX_IO];
  int64_t out_shapes[MAX_IO][AOTRUN_MAX_DIMS];
  void *out_block;
  const aotrun_warm_up_caller *caller; /* NULL: the runner's own call */
  aotrun_warm_up_result *r; /* caller_path, caller_why */
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

/* Caller tensors on the device shaped as the run's outputs, in one block
 * (z->out, z->out_block); 1 with why when an output cannot be one (not
 * on the device, no DLPack dtype). */
static int make_outputs(const AtenTensorHandle *out, size_t num_outputs,
                        int device, zero_inputs *z) {
  char *why = z->r->caller_why;
  size_t n = sizeof z->r->caller_why;
  size_t offsets[MAX_IO], total = 0;
  for (size_t k = 0; k < num_outputs; k++) {
    int32_t dtype = 0, where = -1;
    int64_t ndim = 0, *sizes = NULL;
    DLTensor *t = &z->out[k];
    if (aoti_torch_get_dtype(out[k], &dtype) || aoti_torch_get_dim(out[k], &ndim) ||
        aoti_torch_get_sizes(out[k], &sizes) ||
        aoti_torch_get_device_type(out[k], &where) ||
        where != aoti_torch_device_type_cuda() ||
        ndim > AOTRUN_MAX_DIMS ||
        !aotrun_dl_dtype_from_scalar_type(dtype, &t->dtype)) {
      snprintf(why, n, "output %zu is not a device tensor a caller could hold",
               k);
      return 1;
    }
    t->ndim = (int32_t)ndim;
    t->shape = z->out_shapes[k];
    t->device = (DLDevice){kDLCUDA, device};
    size_t bytes = aotrun_dl_itemsize(t->dtype);
    for (int64_t d = 0; d < ndim; d++) {
      z->out_shapes[k][d] = sizes[d];
      bytes *= (size_t)sizes[d];
    }
    offsets[k] = total;
    total += (bytes + ALIGN - 1) / ALIGN * ALIGN;
  }
  cudaError_t e = cudaMalloc(&z->out_block, total ? total : ALIGN);
  if (e != cudaSuccess) return fail(why, n, "cudaMalloc of the outputs", e);
  for (size_t k = 0; k < num_outputs; k++)
    z->out[k].data = (char *)z->out_block + offsets[k];
  return 0;
}

/* One call as a caller's goes: the caller's function, else the runner's
 * checked call. */
static aotrun_status one_call(aotrun_method_runner *runner,
                              const aotrun_program_method *pm, void *stream,
                              zero_inputs *z, aotrun_error *err) {
  const aotrun_warm_up_caller *c = z->caller;
  if (c != NULL && c->call != NULL)
    return c->call(c->ctx, z->t, pm->num_inputs, z->out, pm->num_outputs, err);
  aotrun_status st =
      aotrun_method_runner_check_inputs(runner, z->t, pm->num_inputs, err);
  if (st == AOTRUN_OK)
    st = aotrun_method_runner_run_checked_call(runner, z->t, pm->num_inputs,
                                               z->out, pm->num_outputs, stream,
                                               NULL, err);
  return st;
}

/* The same inputs once more the way a call runs them: the inputs' check,
 * the run, the outputs copied (or written in place) into caller tensors,
 * the synchronisation. That path's code then is not fetched cold by the
 * first call (benchmarks.md, "Which first touches": 231 instruction lines
 * on the CPU backend), and output placement sees its first call here.
 * With a caller (cuda_graph_capture_at_init) the calls go on while it
 * asks for more: through the graph's warm-up calls, its capture and one
 * replay. A failure is reported in caller_why and fails nothing. */
static void caller_run(aotrun_method_runner *runner,
                       const aotrun_program_method *pm, void *stream,
                       zero_inputs *z) {
  aotrun_error err = {AOTRUN_OK, ""};
  const aotrun_warm_up_caller *c = z->caller;
  aotrun_status st;
  int calls = 0;
  do {
    st = one_call(runner, pm, stream, z, &err);
    if (st != AOTRUN_OK) break;
    calls++;
  } while (calls < AOTRUN_WARM_UP_MAX_CALLER_CALLS && c != NULL &&
           c->more != NULL && c->more(c->ctx, calls));
  z->r->caller_calls = calls;
  z->r->caller_path = calls > 0;
  if (st != AOTRUN_OK) {
    snprintf(z->r->caller_why, sizeof z->r->caller_why, "%s", err.message);
    z->r->caller_failed = 1;
    aotrun_shim_clear_error();
  }
}

static int run_once(aotrun_method_runner *runner,
                    const aotrun_program_method *pm, int device, void *stream,
                    zero_inputs *z, int as_caller, char *why, size_t n) {
  AtenTensorHandle out[MAX_IO] = {0};
  aotrun_error err = {AOTRUN_OK, ""};
  aotrun_status st = aotrun_method_runner_run_handles(
      runner, z->t, pm->num_inputs, out, pm->num_outputs, stream, &err);
  cudaError_t e = cudaStreamSynchronize(stream);
  int outputs_made = st == AOTRUN_OK && e == cudaSuccess && as_caller &&
                     !make_outputs(out, pm->num_outputs, device, z);
  aotrun_method_runner_delete_handles(out, pm->num_outputs);
  if (outputs_made) caller_run(runner, pm, stream, z);
  if (z->out_block != NULL) cudaFree(z->out_block);
  z->out_block = NULL;
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
      run_once(runner, pm, device, stream, z, 1, why, n) ||
      warm_copies(stream, z, why, n))
    return 1;
  *runs = 1;
  if (!smallest_differs(pm, z)) return 0;
  cudaFree(z->block);
  z->block = NULL;
  memcpy(z->shapes, z->smallest, sizeof z->shapes);
  if (!make_inputs(pm, device, stream, z, why, n) &&
      !run_once(runner, pm, device, stream, z, 0, why, n))
    *runs = 2;
  return 0;
}

int aotrun_cuda_warm_up_run(aotrun_method_runner *runner, const void *manifest,
                            size_t size, const char *method, int device,
                            void *stream, const aotrun_warm_up_caller *caller,
                            aotrun_warm_up_result *r) {
  memset(r, 0, sizeof *r);
  r->refused = 1;
  const aotrun_program_method *pm = aotrun_method_runner_program_method(runner);
  if (pm == NULL) {
    snprintf(r->why, sizeof r->why, "the method has no manifest entry");
    return 1;
  }
  zero_inputs *z = calloc(1, sizeof *z);
  if (z == NULL) {
    snprintf(r->why, sizeof r->why, "out of memory");
    return 1;
  }
  z->r = r;
  z->caller = caller;
  int bad = !plan(pm, manifest, size, method, z, r->why, sizeof r->why);
  if (!bad) {
    r->refused = 0;
    int64_t t0 = aotrun_load_clock_ns();
    bad = run_both(runner, pm, device, stream, z, &r->runs, r->why,
                   sizeof r->why);
    r->ms = (double)(aotrun_load_clock_ns() - t0) / 1e6;
  }
  if (z->block != NULL) cudaFree(z->block);
  free(z);
  return bad;
}
