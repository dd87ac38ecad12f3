/*
 * cuda_warm_up_run.h: option warm_up_run. A method is run at init on
 * zeroed device inputs of the export example's shapes, then once more at
 * the smallest declared sizes where those differ (warm_up_run_plan.h), so
 * the model's own lazy work (each Triton kernel's module loaded at its
 * first launch, cuBLAS kernels per shape) is not its first call's; and
 * one copy of each kind a call makes is done (device to device, to and
 * from the host). When it is refused and why: warm_up_run_plan.h.
 */
#ifndef AOTRUN_CUDA_WARM_UP_RUN_H
#define AOTRUN_CUDA_WARM_UP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/method_runner.h"

/* Runs `runner` on `stream` (device current) and waits for it; 0 on
 * success. A refusal (why: the reason) or a failure (why: the message) is
 * the caller's to log: neither fails the init, and the shim's error is
 * cleared. *runs receives the runs that succeeded (1 or 2), *ms their
 * wall time; a failed second run (at the smallest sizes) does not fail
 * the warm-up: 0 with *runs 1 and its message in why. */
int aotrun_cuda_warm_up_run(aotrun_method_runner *runner, const void *manifest,
                            size_t size, const char *method, int device,
                            void *stream, int *refused, int *runs, char *why,
                            size_t why_size, double *ms);

#endif /* AOTRUN_CUDA_WARM_UP_RUN_H */
