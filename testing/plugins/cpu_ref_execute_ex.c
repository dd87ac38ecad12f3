/*
 * cpu_ref_execute_ex.c: ABI 1.1 execute_ex of the CPU reference backend.
 *   - Backend-allocated outputs: an output whose data is NULL (with
 *     args->managed_outputs set) comes back as a DLManagedTensor in host
 *     memory, shaped as the model returned it; its deleter frees it and may
 *     run on any thread, also after the method is destroyed.
 *   - An output buffer whose dynamic dim is smaller than the result:
 *     AOTRUN_ERR_OUTPUT_TOO_SMALL, with the output and the shape it needs in
 *     the args. Nothing is written to any output then.
 *   - AOTRUN_EXECUTE_ASYNC is accepted: the CPU runs synchronously, so the
 *     outputs are complete when execute_ex returns (which the flag allows);
 *     synchronize has nothing to wait for.
 *   - A caller stream is refused (AOTRUN_ERR_NOT_SUPPORTED): there is no
 *     device stream on the CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/dl_dtype.h"
#include "aot_loader/load_report.h"
#include "testing/plugins/cpu_ref_plugin.h"

#define ARGS_HAS(a, member) AOTRUN_TABLE_HAS_2_(a, member)
#define STACK_IO 16

/* One allocation holds the managed tensor and its shape; data is apart. */
typedef struct managed_block {
  DLManagedTensor managed;
  int64_t shape[AOTRUN_MAX_DIMS];
} managed_block;

static void managed_delete(DLManagedTensor *t) {
  if (t == NULL) return;
  free(t->dl_tensor.data);
  free(t->manager_ctx);
}

/* A host tensor of `info`'s dtype shaped like the model's output. */
static aotrun_status managed_new(const aotrun_io_info *info, int64_t ndim,
                                 const int64_t *sizes, size_t i,
                                 DLManagedTensor **out, aotrun_error *err) {
  managed_block *b = calloc(1, sizeof *b);
  size_t bytes = aotrun_dl_itemsize(info->dtype);
  for (int64_t d = 0; d < ndim; d++) bytes *= (size_t)sizes[d];
  void *data = b != NULL ? malloc(bytes ? bytes : 1) : NULL;
  if (data == NULL) {
    free(b);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "output %zu (%s): out of memory allocating %zu "
                            "bytes",
                            i, info->name, bytes);
  }
  memcpy(b->shape, sizes, (size_t)ndim * sizeof *sizes);
  b->managed.manager_ctx = b;
  b->managed.deleter = managed_delete;
  b->managed.dl_tensor = (DLTensor){.data = data,
                                    .device = {kDLCPU, 0},
                                    .ndim = (int32_t)ndim,
                                    .dtype = info->dtype,
                                    .shape = b->shape};
  *out = &b->managed;
  return AOTRUN_OK;
}

/* The caller's buffer for output i cannot hold the model's result when a
 * dynamic dim is larger than its room (static dims and ranks that differ
 * are the caller's error, reported by the copy). */
static int too_small(const aotrun_io_info *info, const DLTensor *dst,
                     int64_t ndim, const int64_t *sizes) {
  if (ndim != dst->ndim || (ndim > 0 && dst->shape == NULL)) return 0;
  int bigger = 0;
  for (int64_t d = 0; d < ndim; d++) {
    if (info->shape[d] != AOTRUN_DYNAMIC_DIM) {
      if (sizes[d] != dst->shape[d]) return 0;
    } else if (sizes[d] > dst->shape[d]) {
      bigger = 1;
    }
  }
  return bigger;
}

static aotrun_status report_too_small(aotrun_method *m, size_t i,
                                      const aotrun_io_info *info,
                                      int64_t ndim, const int64_t *sizes,
                                      aotrun_execute_args *a) {
  if (ARGS_HAS(a, needed_shape)) {
    a->too_small_output = (int64_t)i;
    a->needed_ndim = (int32_t)ndim;
    memcpy(a->needed_shape, sizes, (size_t)ndim * sizeof *sizes);
  }
  char need[256] = "";
  size_t used = 0;
  for (int64_t d = 0; d < ndim && used < sizeof need; d++)
    used += (size_t)snprintf(need + used, sizeof need - used, "%s%lld",
                             d ? ", " : "", (long long)sizes[d]);
  return aotrun_error_set(&m->err, AOTRUN_ERR_OUTPUT_TOO_SMALL,
                          "output %zu (%s) needs shape [%s], more than the "
                          "caller's buffer holds",
                          i, info->name, need);
}

/* Output i's destination: the caller's tensor, or a new managed one. */
static aotrun_status place_output(aotrun_method *m, size_t i,
                                  AtenTensorHandle src,
                                  aotrun_execute_args *a,
                                  DLManagedTensor **managed, DLTensor *dst) {
  aotrun_io_info info = {.struct_size = sizeof info};
  aotrun_status st = aotrun_method_runner_io_info(
      m->runner, AOTRUN_IO_OUTPUT, i, &info, &m->err);
  int64_t ndim = 0, *sizes = NULL;
  if (st == AOTRUN_OK && (aoti_torch_get_dim(src, &ndim) ||
                          aoti_torch_get_sizes(src, &sizes) ||
                          ndim < 0 || ndim > AOTRUN_MAX_DIMS))
    st = aotrun_error_set(&m->err, AOTRUN_ERR_INTERNAL,
                          "output %zu (%s): cannot read the model's output "
                          "shape",
                          i, info.name);
  if (st != AOTRUN_OK) return st;
  if (managed != NULL && a->outputs[i].data == NULL) {
    st = managed_new(&info, ndim, sizes, i, &managed[i], &m->err);
    if (st == AOTRUN_OK) *dst = managed[i]->dl_tensor;
    return st;
  }
  *dst = a->outputs[i];
  if (too_small(&info, dst, ndim, sizes))
    return report_too_small(m, i, &info, ndim, sizes, a);
  return AOTRUN_OK;
}

static void delete_all(DLManagedTensor **managed, size_t n) {
  for (size_t i = 0; managed != NULL && i < n; i++) {
    managed_delete(managed[i]);
    managed[i] = NULL;
  }
}

/* The model has run: place every output, then copy (all or nothing). */
static aotrun_status finish(aotrun_method *m, AtenTensorHandle *handles,
                            aotrun_execute_args *a, DLTensor *dst) {
  DLManagedTensor **managed =
      ARGS_HAS(a, managed_outputs) ? a->managed_outputs : NULL;
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < a->num_outputs && st == AOTRUN_OK; i++)
    st = place_output(m, i, handles[i], a, managed, &dst[i]);
  if (st == AOTRUN_OK)
    st = aotrun_method_runner_copy_outputs(m->runner, handles, dst,
                                           a->num_outputs, NULL, &m->err);
  /* (dst[i] shares the caller's shape array: the real sizes land there.) */
  if (st != AOTRUN_OK) delete_all(managed, a->num_outputs);
  return st;
}

static aotrun_status check_args(aotrun_method *m, aotrun_execute_args *a) {
  if (a == NULL || a->struct_size < AOTRUN_MEMBER_END(aotrun_execute_args,
                                                      num_outputs))
    return aotrun_error_set(&m->err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "execute_ex: args is NULL or its struct_size "
                            "is below the end of num_outputs");
  if (ARGS_HAS(a, needed_shape)) a->too_small_output = -1;
  if (ARGS_HAS(a, managed_outputs) && a->managed_outputs != NULL)
    for (size_t i = 0; i < a->num_outputs; i++) a->managed_outputs[i] = NULL;
  if (ARGS_HAS(a, stream) && a->stream != NULL)
    return aotrun_error_set(&m->err, AOTRUN_ERR_NOT_SUPPORTED,
                            "backend cpu_ref runs on the CPU: it takes no "
                            "device stream (pass stream NULL)");
  if (a->flags & ~(uint32_t)AOTRUN_EXECUTE_ASYNC)
    return aotrun_error_set(&m->err, AOTRUN_ERR_NOT_SUPPORTED,
                            "execute_ex: unknown flags 0x%x",
                            (unsigned)a->flags);
  if (a->num_outputs > STACK_IO)
    return aotrun_error_set(&m->err, AOTRUN_ERR_NOT_SUPPORTED,
                            "execute_ex: %zu outputs (cpu_ref takes up to "
                            "%d)",
                            a->num_outputs, STACK_IO);
  return AOTRUN_OK;
}

aotrun_status aotrun_cpu_ref_execute_ex(aotrun_method *m,
                                        aotrun_execute_args *a) {
  if (m == NULL) return cpu_ref_null_handle("execute_ex");
  int64_t start = aotrun_load_clock_ns();
  aotrun_error_clear(&m->err);
  cpu_ref_forget_query_error(m);
  aotrun_status st = check_args(m, a);
  if (st == AOTRUN_OK)
    st = aotrun_method_runner_check_inputs(m->runner, a->inputs,
                                           a->num_inputs, &m->err);
  if (st != AOTRUN_OK) return st;
  AtenTensorHandle handles[STACK_IO] = {0};
  DLTensor dst[STACK_IO];
  st = aotrun_method_runner_run_handles(m->runner, a->inputs, a->num_inputs,
                                        handles, a->num_outputs, NULL,
                                        &m->err);
  if (st == AOTRUN_OK) st = finish(m, handles, a, dst);
  aotrun_method_runner_delete_handles(handles, a->num_outputs);
  if (st == AOTRUN_OK) aotrun_method_runner_note_call(m->runner, start);
  return st;
}

aotrun_status aotrun_cpu_ref_synchronize(aotrun_method *m) {
  if (m == NULL) return cpu_ref_null_handle("synchronize");
  aotrun_error_clear(&m->err);
  cpu_ref_forget_query_error(m);
  return AOTRUN_OK; /* every execute_ex finished before it returned */
}
