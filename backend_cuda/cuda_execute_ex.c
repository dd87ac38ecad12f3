/*
 * cuda_execute_ex.c: the CUDA backend's ABI 1.1 execute_ex and
 * synchronize (docs/cuda-backend.md, "Caller streams, async calls and
 * backend-allocated outputs").
 *
 * One path for graphs and plain runs: the call's work is queued on the
 * method's own stream, ordered after the caller's stream by an event and
 * made visible to it by a second event (cuda_stream_order.h); nothing
 * synchronises the device. Without AOTRUN_EXECUTE_ASYNC the method's
 * stream is synchronised before returning, as execute does; with it the
 * call returns once queued and synchronize(method) (or the caller's
 * stream) waits.
 */
#include "backend_cuda/cuda_execute_ex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/load_report.h"
#include "backend_cuda/cuda_device_ops.h"
#include "backend_cuda/cuda_device_scope.h"
#include "backend_cuda/cuda_execute_args.h"
#include "backend_cuda/cuda_managed_output.h"
#include "backend_cuda/cuda_method_internal.h"
#include "backend_cuda/cuda_thread_error.h"

#define STACK_OUTPUTS 16

/* Drops kept handles of a failed call on the method's stream, which may
 * still have work queued that reads them. */
static void drop_kept(aotrun_method *m, AtenTensorHandle *kept, size_t n) {
  CUDAStreamGuardHandle guard = NULL;
  if (aoti_torch_create_cuda_stream_guard(m->graph_ctx.stream, m->device,
                                          &guard) != AOTI_TORCH_SUCCESS)
    guard = NULL;
  aotrun_method_runner_delete_handles(kept, n);
  if (guard != NULL) (void)aoti_torch_delete_cuda_stream_guard(guard);
}

/* A managed output's reference to the method's stream: its memory goes
 * back to the allocator on that stream, which must outlive the method. */
static void release_stream(void *ctx) { aotrun_cuda_stream_release(ctx); }

/* The kept handles as DLManagedTensors; on failure none is handed out. */
static aotrun_status hand_out(aotrun_method *m, AtenTensorHandle *kept,
                              const aotrun_cuda_call_args *a) {
  aotrun_status st = AOTRUN_OK;
  for (size_t i = 0; i < a->num_outputs; i++) {
    if (kept[i] == NULL) continue;
    aotrun_io_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    aotrun_error ignored;
    if (aotrun_method_runner_io_info(m->runner, AOTRUN_IO_OUTPUT, i, &info,
                                     &ignored) != AOTRUN_OK)
      info.name = "?";
    char what[160];
    snprintf(what, sizeof what, "output %zu (%s)", i,
             info.name ? info.name : "?");
    AtenTensorHandle h = kept[i];
    kept[i] = NULL;
    if (st == AOTRUN_OK) {
      aotrun_cuda_stream_retain(m->stream);
      aotrun_managed_owner owner = {m->graph_ctx.stream, release_stream,
                                    m->stream};
      st = aotrun_cuda_managed_output(h, what, &owner, &a->managed[i],
                                      &m->err);
    } else {
      drop_kept(m, &h, 1);
    }
  }
  /* The deleters free on the method's stream, after the copies queued
   * there that wrote these tensors. */
  if (st != AOTRUN_OK)
    for (size_t i = 0; i < a->num_outputs; i++) {
      if (a->managed[i] != NULL) a->managed[i]->deleter(a->managed[i]);
      a->managed[i] = NULL;
    }
  return st;
}

/* The call between the two stream orderings. */
static aotrun_status ordered_run(aotrun_method *m,
                                 const aotrun_cuda_call_args *a,
                                 aotrun_runner_call *call) {
  void *own = m->graph_ctx.stream;
  int ordered = a->stream != NULL && a->stream != own;
  aotrun_status st = AOTRUN_OK;
  if (ordered)
    st = aotrun_cuda_order_before(&m->order, a->stream, own, &m->err);
  if (st == AOTRUN_OK)
    st = aotrun_cuda_method_run(m, a->inputs, a->num_inputs, a->outputs,
                                a->num_outputs, call);
  if (ordered) {
    /* Also after a failure: the caller may free inputs the method's
     * stream still reads. */
    aotrun_error after_err;
    aotrun_error_clear(&after_err);
    aotrun_status after =
        aotrun_cuda_order_after(&m->order, a->stream, own, &after_err);
    if (st == AOTRUN_OK && after != AOTRUN_OK) {
      m->err = after_err;
      st = after;
    }
  }
  return st;
}

/* On the method's device; the caller's device is current again on return,
 * success or failure. */
static aotrun_status execute_ex(aotrun_method *m,
                                const aotrun_cuda_call_args *a,
                                AtenTensorHandle *kept,
                                aotrun_runner_call *call) {
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(m->device, &scope, &m->err);
  if (st != AOTRUN_OK) return st;
  st = ordered_run(m, a, call);
  aotrun_cuda_device_leave(&scope);
  if (kept == NULL) return st;
  if (st == AOTRUN_OK) return hand_out(m, kept, a);
  drop_kept(m, kept, a->num_outputs);
  return st;
}

aotrun_status aotrun_cuda_method_execute_ex(aotrun_method *m,
                                            aotrun_execute_args *args) {
  if (m == NULL) return aotrun_cuda_null_handle("execute_ex");
  int64_t start = aotrun_load_clock_ns();
  aotrun_error_clear(&m->err);
  aotrun_cuda_method_forget_query_error(m);
  aotrun_cuda_call_args a;
  aotrun_status st = aotrun_cuda_execute_args_read(args, &a, &m->err);
  if (st != AOTRUN_OK) return st;
  AtenTensorHandle stack[STACK_OUTPUTS] = {0};
  AtenTensorHandle *kept = NULL;
  if (a.managed != NULL)
    kept = a.num_outputs <= STACK_OUTPUTS
               ? stack
               : calloc(a.num_outputs, sizeof *kept);
  if (a.managed != NULL && kept == NULL)
    return aotrun_error_set(&m->err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "execute_ex: out of memory for %zu outputs",
                            a.num_outputs);
  aotrun_runner_call call;
  memset(&call, 0, sizeof call);
  call.kept = kept;
  call.no_sync = (a.flags & AOTRUN_EXECUTE_ASYNC) != 0;
  call.report_too_small = 1;
  call.too_small = -1;
  st = execute_ex(m, &a, kept, &call);
  if (st == AOTRUN_ERR_OUTPUT_TOO_SMALL)
    aotrun_cuda_execute_args_report(args, &call);
  if (kept != NULL && kept != stack) free(kept);
  if (st == AOTRUN_OK) aotrun_method_runner_note_call(m->runner, start);
  return st;
}

aotrun_status aotrun_cuda_method_synchronize(aotrun_method *m) {
  if (m == NULL) return aotrun_cuda_null_handle("synchronize");
  aotrun_error_clear(&m->err);
  aotrun_cuda_method_forget_query_error(m);
  aotrun_cuda_device_scope scope;
  aotrun_status st = aotrun_cuda_device_enter(m->device, &scope, &m->err);
  if (st == AOTRUN_OK) {
    /* The method's stream only: other work on the device is not ours. */
    st = aotrun_cuda_synchronize(m->graph_ctx.stream, &m->err);
    if (st != AOTRUN_OK)
      aotrun_error_prefix(&m->err, "synchronize of method %s: ",
                          aotrun_method_runner_method(m->runner));
  }
  if (m->timing_pending) {
    aotrun_cuda_timing_finish(&m->timing, st == AOTRUN_OK);
    m->timing_pending = 0;
  }
  aotrun_cuda_device_leave(&scope); /* also after a failed enter */
  return st;
}
