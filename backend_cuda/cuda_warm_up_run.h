/*
 * cuda_warm_up_run.h: option warm_up_run. A method is run at init on
 * zeroed device inputs of the export example's shapes, then once more at
 * the smallest declared sizes where those differ (warm_up_run_plan.h), so
 * the model's own lazy work (each Triton kernel's module loaded at its
 * first launch, cuBLAS kernels per shape) is not its first call's; and
 * one copy of each kind a call makes is done (device to device, to and
 * from the host). The first run's inputs then go once more through a
 * call's own path (the inputs' check, the run, the outputs copied into
 * caller tensors, output placement), so that code is not cold at the
 * first call; with cuda_graph_capture_at_init, through the method's CUDA
 * graph until it is captured and replayed once. When it is refused and
 * why: warm_up_run_plan.h.
 */
#ifndef AOTRUN_CUDA_WARM_UP_RUN_H
#define AOTRUN_CUDA_WARM_UP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/method_runner.h"

/* How the warm-up makes its calls the way a caller's go (cuda_method.c
 * passes the method's graph state for cuda_graph_capture_at_init): `call`
 * makes one call (inputs checked, outputs into the caller's tensors,
 * synchronised); `more`, asked after each successful call with the count
 * so far, says whether another follows (the graph's warm-up calls, its
 * capture, one replay). At most AOTRUN_WARM_UP_MAX_CALLER_CALLS calls. */
typedef struct aotrun_warm_up_caller {
  aotrun_status (*call)(void *ctx, const DLTensor *inputs, size_t ni,
                        DLTensor *outputs, size_t no, aotrun_error *err);
  int (*more)(void *ctx, int calls);
  void *ctx;
} aotrun_warm_up_caller;

#define AOTRUN_WARM_UP_MAX_CALLER_CALLS 8

/* What a warm-up run did. */
typedef struct aotrun_warm_up_result {
  int refused;      /* 1: not run (why says why) */
  int runs;         /* the model runs that succeeded: 1 or 2 */
  int caller_path;  /* 1: the first run's inputs also went through a call's
                     * own path (check, run, copies into caller tensors) */
  double ms;        /* the runs' wall time */
  char why[512];    /* a refusal, a failure, or the second run's failure */
  int caller_failed; /* 1: that run failed (caller_why); else skipped */
  int caller_calls;  /* the calls through a call's own path that succeeded */
  char caller_why[256]; /* why the caller's path was not run, or failed */
} aotrun_warm_up_result;

/* Runs `runner` on `stream` (device current) and waits for it; 0 on
 * success. A refusal or a failure (r->why) is the caller's to log:
 * neither fails the init, and the shim's error is cleared. A failed second
 * run (at the smallest sizes) does not fail the warm-up: 0 with runs 1 and
 * its message in why; nor does a failed run through the caller's path
 * (caller_why). `caller` NULL: that path is one call of the runner's own
 * (inputs checked, run, outputs copied or placed). */
int aotrun_cuda_warm_up_run(aotrun_method_runner *runner, const void *manifest,
                            size_t size, const char *method, int device,
                            void *stream, const aotrun_warm_up_caller *caller,
                            aotrun_warm_up_result *r);

#endif /* AOTRUN_CUDA_WARM_UP_RUN_H */
