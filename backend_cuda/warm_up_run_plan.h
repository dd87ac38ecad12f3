/*
 * warm_up_run_plan.h: whether a method may be run once at init on zeroed
 * inputs (option warm_up_run), and the shapes of those inputs. The run
 * moves the model's own lazy work (AOTInductor loads each kernel's module
 * at its first launch; cuBLAS loads its kernels per shape) out of the
 * first call. Pure C (no CUDA): tested on the CPU.
 *
 * A run must leave nothing behind that a caller could see, so it is
 * refused for a method that writes buffers (its state would change), that
 * draws random numbers (a fixed seed's sequence would shift) or that
 * asserts on device (zeros may fail the assert, and a device-side assert
 * ends the CUDA context). A manifest that does not say whether the method
 * writes buffers (older exporters) is refused too: nothing is guessed.
 */
#ifndef AOTRUN_WARM_UP_RUN_PLAN_H
#define AOTRUN_WARM_UP_RUN_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/program.h"

/* 1 and the reason in why ("it writes buffers (...)") when `method` of the
 * manifest must not be run at init; 0 and why "" when it may. */
int aotrun_warm_up_run_refused(const void *manifest, size_t size,
                               const char *method, char *why,
                               size_t why_size);

/* Which sizes a warm-up run takes for the symbolic dims. */
typedef enum aotrun_warm_up_at {
  /* Each symbol's hint (the export example's value: the size callers most
   * likely use) where it has one of at least 1, else as the next. */
  AOTRUN_WARM_UP_AT_HINT = 0,
  /* Each symbol's smallest value that is at least 1 and in its range (a
   * dim of 0 launches no kernel), else its min. */
  AOTRUN_WARM_UP_AT_SMALLEST = 1
} aotrun_warm_up_at;

/* Input i's shape for the run in shapes[i][0..ndim): static dims as
 * declared, each symbolic dim scale * v + offset with v its symbol's value
 * chosen by `at` (so relations between inputs hold). 0 and the reason in
 * why when an input has a symbolic dim without a declared range, or more
 * than max_inputs inputs. */
int aotrun_warm_up_run_shapes(const aotrun_program_method *m,
                              aotrun_warm_up_at at,
                              int64_t (*shapes)[AOTRUN_PROGRAM_MAX_DIMS],
                              size_t max_inputs, char *why, size_t why_size);

#endif /* AOTRUN_WARM_UP_RUN_PLAN_H */
