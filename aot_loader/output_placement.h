/*
 * output_placement.h: a plain call's outputs written by the model straight
 * into the caller's tensors, with no copy after the call.
 *
 * Without it the model allocates each output and the runner copies it into
 * the caller's tensor. An AOTInductor wrapper makes the same allocations in
 * the same order on every call with the same shapes, so once two calls in
 * a row agree which allocation became each output (the plan: its ordinal
 * among the call's aoti_torch_empty_strided calls, dtype and sizes), later
 * calls lend the caller's buffer to that allocation (aotrun_shim_lend_begin):
 * the model writes the output in place and method_output_copy.c skips the
 * copy onto itself.
 *
 * A buffer is lent only where that is safe: the caller's tensor has the
 * plan's dtype and sizes exactly, is row-major, in the allocation's memory
 * (this runner's CUDA device, or host memory on a cpu runner), aligned to
 * AOTRUN_PLACEMENT_ALIGN bytes, and overlaps no input and no other output.
 * After the call each lent buffer must hold its own output, referenced by
 * it alone. A call where one does not (a wrapper whose allocations
 * changed) gets every output that sits in lent memory but not as its own
 * output cloned before the copies, so its results stay right, and turns
 * placement off for the method with a warning; so does a lent buffer still
 * referenced after the call's tensors are gone. Whether a runner places
 * at all: its backend's option output_placement where set, else
 * AOTRUN_OUTPUT_PLACEMENT=1 or 0 in the environment at create, else
 * AOTRUN_OUTPUT_PLACEMENT_DEFAULT (aotrun_output_placement_wanted).
 *
 * Calls on one runner are serialised (plugin-abi.md), so is this state.
 */
#ifndef AOTRUN_OUTPUT_PLACEMENT_H
#define AOTRUN_OUTPUT_PLACEMENT_H

#include <stddef.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/placement_setting.h"
#include "shim_lib/aotrun_shim.h"

/* The larger of what generated code assumes of its buffers: 16 bytes on
 * CUDA (Triton's pointer divisibility), 64 on the host (libtorch's CPU
 * allocator). */
#define AOTRUN_PLACEMENT_ALIGN 64

typedef struct aotrun_output_placement aotrun_output_placement;

typedef void (*aotrun_placement_log)(void *ctx, int32_t level,
                                     const char *message);

/* *out NULL (nothing ever placed) for 0 outputs. method names the method
 * in the warnings. */
aotrun_status aotrun_output_placement_new(size_t num_outputs, DLDevice device,
                                          const char *method,
                                          aotrun_placement_log log,
                                          void *log_ctx,
                                          aotrun_output_placement **out,
                                          aotrun_error *err);
void aotrun_output_placement_free(aotrun_output_placement *p);

/* Right before the model runs (inputs checked): lends what the plan allows
 * and starts numbering this thread's allocations. NULL p: nothing. */
void aotrun_output_placement_begin(aotrun_output_placement *p,
                                   const DLTensor *inputs, size_t num_inputs,
                                   const DLTensor *outputs,
                                   size_t num_outputs);
/* Right after the model returned, also when it failed. */
void aotrun_output_placement_end(aotrun_output_placement *p);

/* After a successful run, before the copies: checks the lent buffers,
 * clones outputs found in lent memory that is not theirs (replacing their
 * handles in out), and learns the plan from where the outputs came from.
 * Fails only when a clone fails (out stays deletable). */
aotrun_status aotrun_output_placement_settle(aotrun_output_placement *p,
                                             AtenTensorHandle *out,
                                             const DLTensor *outputs,
                                             size_t num_outputs,
                                             aotrun_error *err);

/* After the call's output handles are deleted: turns placement off (with a
 * warning) when something still references a lent buffer. */
void aotrun_output_placement_after(aotrun_output_placement *p);

/* Outputs the last call wrote in place (tests, benchmarks). */
size_t aotrun_output_placement_last_placed(const aotrun_output_placement *p);
/* 1 while placement may still be used. */
int aotrun_output_placement_enabled(const aotrun_output_placement *p);

#endif /* AOTRUN_OUTPUT_PLACEMENT_H */
