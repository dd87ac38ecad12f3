/*
 * method_runner.h: load one method of a program and run it, on any device.
 *
 * Device-neutral core shared by the CPU reference plugin (device "cpu") and
 * the CUDA backend (device "cuda:N"); the device is reached only through
 * aotrun_runner_device_ops (copies, stream synchronisation, constant memory).
 *
 * create: parse the manifest, find the method, fetch its library through the
 *   host's named data (released as soon as it is in its memfd or temp
 *   file), load it (after the GPU portability check), fetch the weights
 *   file, check the GPU has room for the new device copies, bind the
 *   constants (method_weights; the weights' bytes are released once bound),
 *   keep the declared io info and the load report.
 * run: check inputs against the declared dtype, rank and static dims (and
 *   symbols: the same symbol is the same size) BEFORE anything runs; create
 *   FRESH input handles (the model steals them) over the caller's data or
 *   over staged device copies of host data; run; copy the outputs into the
 *   caller's DLTensors (host or device memory) after checking they fit;
 *   write real sizes of dynamic dims into their shape arrays; delete the
 *   output handles.
 *
 * The lower-level steps (run_handles, copy_outputs) are public for the CUDA
 * graph path, which runs the model over its own static buffers and keeps the
 * output handles of the captured graph.
 *
 * Destroy order (the container aliases the weight cache's memory): model
 * library, then the method's weight references, then (private) cache.
 */
#ifndef AOTRUN_METHOD_RUNNER_H
#define AOTRUN_METHOD_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/dl_dtype.h"
#include "aot_loader/output_copy.h"
#include "aot_loader/program.h"
#include "aot_loader/weight_cache.h"
#include "plugin_api/aotrun_plugin.h"
#include "shim_lib/aotrun_shim.h"


typedef enum aotrun_copy_kind {
  AOTRUN_COPY_HOST_TO_DEVICE = 0,
  AOTRUN_COPY_DEVICE_TO_HOST = 1,
  AOTRUN_COPY_DEVICE_TO_DEVICE = 2,
  AOTRUN_COPY_HOST_TO_HOST = 3,
} aotrun_copy_kind;

/* How the runner reaches its device. NULL members mean host memory:
 * copy = memcpy, synchronize = nothing, memory = aotrun_host_device_ops(). */
typedef struct aotrun_runner_device_ops {
  void *ctx;
  /* Queues a contiguous copy on stream. */
  aotrun_status (*copy)(void *ctx, void *dst, const void *src, size_t bytes,
                        aotrun_copy_kind kind, void *stream,
                        aotrun_error *err);
  /* Waits until everything queued on stream has finished. */
  aotrun_status (*synchronize)(void *ctx, void *stream, aotrun_error *err);
  /* Memory for constants on this device (the weight cache's cuda_ops).
   * Borrowed; must outlive the runner. */
  const aotrun_device_ops *memory;
  /* Optional (NULL: no check). Free memory of the GPU `device`, asked
   * before the weights are uploaded: a method whose new device copies do
   * not fit fails early, naming both sizes. */
  aotrun_status (*free_memory)(void *ctx, int32_t device,
                               uint64_t *free_bytes, aotrun_error *err);
  /* Optional (NULL: no check). The GPU's compute capability, major * 10 +
   * minor: the library must have kernels for it (kernel_arch.h). */
  aotrun_status (*compute_capability)(void *ctx, int32_t device,
                                      uint32_t *arch, aotrun_error *err);
  /* Optional (NULL: not checked). The driver's CUDA version
   * (cudaDriverGetVersion, 12080 = 12.8): embedded PTX must be of an ISA
   * version it compiles (kernel_arch.h). */
  aotrun_status (*driver_version)(void *ctx, int *version, aotrun_error *err);
} aotrun_runner_device_ops;

typedef struct aotrun_method_runner_config {
  const aotrun_host_api *host; /* must outlive the runner */
  const void *manifest;        /* manifest.json bytes, borrowed */
  size_t manifest_size;
  const char *method;          /* method name, copied */
  const char *device;          /* "cpu", "cuda" or "cuda:N" */
  aotrun_runner_device_ops ops;
  /* The program's shared weight cache (borrowed; must outlive the runner)
   * or NULL for a private one. */
  aotrun_weight_cache *weight_cache;
  /* 1: write the model library to a temp file, never a memfd (the
   * backend option library_temp_file; docs/loading.md). */
  int library_temp_file;
} aotrun_method_runner_config;

typedef struct aotrun_method_runner aotrun_method_runner;

aotrun_status aotrun_method_runner_create(
    const aotrun_method_runner_config *config, aotrun_method_runner **out,
    aotrun_error *err);
/* Accepts NULL. */
void aotrun_method_runner_destroy(aotrun_method_runner *runner);

/* Outputs the last plain call wrote straight into the caller's tensors
 * (aot_loader/output_placement.h), and whether that may still happen. */
size_t aotrun_method_runner_placed_outputs(const aotrun_method_runner *runner);
int aotrun_method_runner_places_outputs(const aotrun_method_runner *runner);
/* Turns placement on (learning anew from the next call) or off, between
 * calls. Fails only for a NULL runner or out of memory. */
aotrun_status aotrun_method_runner_set_output_placement(
    aotrun_method_runner *runner, int on, aotrun_error *err);

const char *aotrun_method_runner_method(const aotrun_method_runner *runner);
/* Device copies held by the runner's weight cache (shared by the methods of
 * one program when the caller passed one): one per FQN and layout. */
size_t aotrun_method_runner_weight_copies(const aotrun_method_runner *runner);
/* The DLPack device of the model's memory ({kDLCPU,0} or {kDLCUDA,N}). */
DLDevice aotrun_method_runner_device(const aotrun_method_runner *runner);
int aotrun_method_runner_has_run_single_threaded(
    const aotrun_method_runner *runner);
/* The method's manifest entry (inputs, symbols), valid until destroy;
 * NULL for a NULL runner. */
const aotrun_program_method *aotrun_method_runner_program_method(
    const aotrun_method_runner *runner);

/* The load report (docs/loading.md): one JSON object with the time of
 * each load phase and the bytes kept, owned by the runner (valid until
 * destroy). "" when it could not be made (out of memory). first_run_ns is
 * null until the backend notes the first call below. */
const char *aotrun_method_runner_load_report(
    const aotrun_method_runner *runner);

/* A backend calls this at the end of every successful execute or
 * execute_ex with the call's start (aotrun_load_clock_ns() on entry): the
 * first one's wall time becomes the report's first_run_ns (its JSON is
 * made when the report is next read); later calls cost one branch. */
void aotrun_method_runner_note_call(aotrun_method_runner *runner,
                                    int64_t start_ns);

/* get_num_io / get_io_info of the plugin ABI. */
aotrun_status aotrun_method_runner_num_io(const aotrun_method_runner *runner,
                                          int32_t kind, size_t *count,
                                          aotrun_error *err);
aotrun_status aotrun_method_runner_io_info(const aotrun_method_runner *runner,
                                           int32_t kind, size_t index,
                                           aotrun_io_info *out,
                                           aotrun_error *err);

/* Constants in host memory (manifest device "cpu"): such a method runs
 * without a CUDA graph. constants_unlisted: the library could not list its
 * constants, so what it keeps where is unknown. */
size_t aotrun_method_runner_num_host_constants(
    const aotrun_method_runner *runner);
const char *aotrun_method_runner_host_constant(
    const aotrun_method_runner *runner, size_t index);
int aotrun_method_runner_constants_unlisted(
    const aotrun_method_runner *runner);

/* The declared-signature check: count, dtype, rank, static dims, symbols,
 * device, data, contiguity. Messages name the input and both values:
 * "input 0 (x) has size 5 in dim 1, expected 4". */
aotrun_status aotrun_method_runner_check_inputs(
    const aotrun_method_runner *runner, const DLTensor *inputs,
    size_t num_inputs, aotrun_error *err);

/* The whole call: check, stage, run, copy out, synchronise, delete. */
aotrun_status aotrun_method_runner_run(aotrun_method_runner *runner,
                                       const DLTensor *inputs,
                                       size_t num_inputs, DLTensor *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err);

/* aotrun_method_runner_run for inputs that already passed
 * aotrun_method_runner_check_inputs on this runner (the CUDA backend checks
 * once per execute, before choosing graph replay or a direct run). */
aotrun_status aotrun_method_runner_run_checked(aotrun_method_runner *runner,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               DLTensor *outputs,
                                               size_t num_outputs,
                                               void *stream,
                                               aotrun_error *err);

/* Runs the model once over inputs that already live in the model's memory
 * (fresh non-owning handles are made over them; nothing is staged or
 * synchronised). On success outputs[] receive new references the caller
 * deletes (aotrun_method_runner_delete_handles). */
aotrun_status aotrun_method_runner_run_handles(aotrun_method_runner *runner,
                                               const DLTensor *inputs,
                                               size_t num_inputs,
                                               AtenTensorHandle *outputs,
                                               size_t num_outputs,
                                               void *stream,
                                               aotrun_error *err);

/* Checks each model output fits the caller's DLTensor (dtype, rank, static
 * dims equal, dynamic dims at most the caller's size), copies it there (any
 * source strides), writes the real sizes into the caller's shape arrays and
 * synchronises the stream. The handles stay the caller's. */
aotrun_status aotrun_method_runner_copy_outputs(aotrun_method_runner *runner,
                                                AtenTensorHandle *sources,
                                                DLTensor *outputs,
                                                size_t num_outputs,
                                                void *stream,
                                                aotrun_error *err);

/*
 * What execute_ex (ABI 1.1) asks of one call beyond run. Zero-initialise,
 * then set what is wanted; too_small is written by the call.
 *   kept:    NULL, or num_outputs slots. An output whose caller tensor has
 *            data == NULL is not checked or copied but kept here as a new
 *            handle the caller deletes: the model's own tensor when the
 *            shim owns its memory (aotrun_shim_tensor_owns_memory) and it
 *            is row-major (run_checked_call only), otherwise a fresh
 *            row-major copy on the output's device (copy_outputs_call:
 *            its sources, e.g. a CUDA graph's pool, are reused). Slots of
 *            other outputs stay NULL; on failure every slot is NULL.
 *   no_sync: 1: queue everything and skip the final synchronisation.
 *   report_too_small: 1: an output whose dynamic dim exceeds the caller's
 *            room fails with AOTRUN_ERR_OUTPUT_TOO_SMALL and fills
 *            too_small / needed_ndim / needed_shape (0: the 1.0 status
 *            AOTRUN_ERR_INVALID_ARGUMENT, as run).
 *   too_small: out: that output's index, -1 when none.
 */
typedef struct aotrun_runner_call {
  AtenTensorHandle *kept;
  int no_sync;
  int report_too_small;
  int64_t too_small;
  int32_t needed_ndim;
  int64_t needed_shape[AOTRUN_MAX_DIMS];
} aotrun_runner_call;

/* run_checked and copy_outputs with a call's requests (call may be NULL:
 * exactly run_checked / copy_outputs). */
aotrun_status aotrun_method_runner_run_checked_call(
    aotrun_method_runner *runner, const DLTensor *inputs, size_t num_inputs,
    DLTensor *outputs, size_t num_outputs, void *stream,
    aotrun_runner_call *call, aotrun_error *err);
aotrun_status aotrun_method_runner_copy_outputs_call(
    aotrun_method_runner *runner, AtenTensorHandle *sources,
    DLTensor *outputs, size_t num_outputs, void *stream,
    aotrun_runner_call *call, aotrun_error *err);

/* copy_outputs_call's checks without its copies (output_copy.h): each output
 * not kept is checked against the caller's tensor (the same errors,
 * too_small report included) and its real sizes written into the caller's
 * shape array; plan[i] says whether its copy is direct. Queues nothing,
 * waits for nothing. */
aotrun_status aotrun_method_runner_plan_output_copies(
    aotrun_method_runner *runner, AtenTensorHandle *sources,
    DLTensor *outputs, size_t num_outputs, aotrun_runner_call *call,
    aotrun_output_copy *plan, aotrun_error *err);

/* The end of a call whose output copies were queued elsewhere: waits for
 * the stream as copy_outputs_call does (the same fault point), unless the
 * call asks for no_sync. */
aotrun_status aotrun_method_runner_finish_call(aotrun_method_runner *runner,
                                               void *stream,
                                               const aotrun_runner_call *call,
                                               aotrun_error *err);

/* Deletes each non-NULL handle once (a model may return one handle in
 * several slots) and sets every slot to NULL. */
void aotrun_method_runner_delete_handles(AtenTensorHandle *handles, size_t n);

/* The method name of compile specs ({"method", name}); "forward" when the
 * specs name none. */
aotrun_status aotrun_method_runner_spec_method(const aotrun_key_value *specs,
                                               size_t num_specs,
                                               const char **method,
                                               aotrun_error *err);

#endif /* AOTRUN_METHOD_RUNNER_H */
