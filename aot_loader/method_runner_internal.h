/*
 * method_runner_internal.h: the method runner's state, shared by its
 * files: method_runner.c (create, destroy, io info), method_inputs.c (input
 * validation, before anything runs), method_run.c (handles, the model
 * call, the wait), method_output_copy.c (the outputs checked and copied
 * into the caller's tensors, or planned for a graph's copy nodes) and
 * method_output_keep.c (outputs handed to the caller).
 */
#ifndef AOTRUN_METHOD_RUNNER_INTERNAL_H
#define AOTRUN_METHOD_RUNNER_INTERNAL_H

#include <stdatomic.h>

#include "aot_loader/load_report.h"
#include "aot_loader/method_runner.h"
#include "aot_loader/method_weights.h"
#include "aot_loader/model_library.h"
#include "aot_loader/output_placement.h"
#include "aot_loader/program.h"

#define LAYOUT_STRIDED 0   /* DESIGN.md §2.3 */
#define SHIM_DEVICE_CPU 0
#define SHIM_DEVICE_CUDA 1
#define DEVICE_STR_MAX 32

struct aotrun_method_runner {
  const aotrun_host_api *host;
  char *method;
  char device_str[DEVICE_STR_MAX];
  DLDevice device;
  aotrun_runner_device_ops ops;
  aotrun_program *program;
  const aotrun_program_method *pm; /* points into program */
  aotrun_model_library *lib;
  aotrun_weight_cache *private_cache;
  aotrun_weight_cache *cache; /* private_cache or the shared one */
  aotrun_method_weights *weights;
  aotrun_io_info *io[2]; /* [AOTRUN_IO_INPUT], [AOTRUN_IO_OUTPUT] */
  size_t num_io[2];
  int library_temp_file;
  aotrun_load_report report;
  char *report_json; /* malloc'd at the end of create */
  /* The report again once the first call is timed (first_run_ns), made
   * once; a reader on another thread may still hold report_json, so both
   * live until destroy. */
  _Atomic(char *) report_after_run;
  aotrun_output_placement *placement; /* NULL: outputs always copied */
};

/* ---- method_load.c: the load's checks and report ---- */

/* The GPU's compute capability for the portability check (0: cpu, or the
 * ops cannot tell). */
aotrun_status aotrun_runner_gpu_arch(aotrun_method_runner *r, uint32_t *arch,
                                     aotrun_error *err);
/* The driver's CUDA version (0 on the CPU or when the backend cannot
 * tell), for the PTX ISA check. */
aotrun_status aotrun_runner_driver_version(aotrun_method_runner *r,
                                           int *version, aotrun_error *err);
/* Before the upload: the bytes of device copies this method would add to
 * the cache (constants on cuda not already there, each FQN once) against
 * the GPU's free memory; AOTRUN_ERR_OUT_OF_MEMORY "method M needs N bytes
 * of device memory for its weights, F free on cuda:D" when they do not
 * fit. Also records the shared bytes and the free memory in the report. */
aotrun_status aotrun_runner_check_weight_memory(aotrun_method_runner *r,
                                                aotrun_weight_cache *cache,
                                                aotrun_error *err);
/* Cache bytes before the bind, for aotrun_runner_note_weight_bytes. */
typedef struct aotrun_runner_bytes {
  uint64_t host, device;
} aotrun_runner_bytes;
aotrun_runner_bytes aotrun_runner_cache_bytes(aotrun_weight_cache *cache);
/* After a successful bind: host/device bytes this method added, the
 * weights path. */
void aotrun_runner_note_weight_bytes(aotrun_method_runner *r,
                                     aotrun_weight_cache *cache,
                                     aotrun_runner_bytes before);
/* The end of create: names, total time, the JSON text. */
void aotrun_runner_finish_report(aotrun_method_runner *r, int64_t start);

/* Host memory, or this runner's CUDA device; `what` is "input" or
 * "output" in the message (method_inputs.c). */
aotrun_status aotrun_runner_check_device(const aotrun_method_runner *r,
                                         const char *what, size_t i,
                                         const char *name, DLDevice dev,
                                         aotrun_error *err);

/* ---- method_run.c: the steps of one call, shared with the output
 * copies ---- */

/* Up to this many inputs/outputs, per-call arrays live on the stack (no
 * heap allocation on the execute path). */
#define RUNNER_STACK_IO 16

/* "<what> for input/output <i> failed: <the shim's last error>". */
aotrun_status aotrun_runner_shim_failed(aotrun_error *err, aotrun_status code,
                                        const char *what, size_t i);
/* A non-owning handle over t's memory, contiguous. */
aotrun_status aotrun_runner_view_of(const DLTensor *t, size_t i,
                                    AtenTensorHandle *out,
                                    aotrun_error *err);
/* `bytes` bytes on `stream` (the runner's copy op; a host memcpy on a
 * runner without one), behind fault point method_run.copy. */
aotrun_status aotrun_runner_copy_bytes(aotrun_method_runner *r, void *dst,
                                       const void *src, size_t bytes,
                                       aotrun_copy_kind kind, void *stream,
                                       aotrun_error *err);
/* The shim's current stream set to `stream` (cuda runners; *g NULL on a
 * cpu runner); close with aotrun_runner_close_guard (accepts NULL). */
aotrun_status aotrun_runner_open_guard(aotrun_method_runner *r, void *stream,
                                       CUDAStreamGuardHandle *g,
                                       aotrun_error *err);
void aotrun_runner_close_guard(CUDAStreamGuardHandle g);
/* Waits for `stream` (the runner's synchronize op), behind fault point
 * method_run.synchronize. */
aotrun_status aotrun_runner_synchronize(aotrun_method_runner *r, void *stream,
                                        aotrun_error *err);

/* ---- method_output_copy.c: the outputs into the caller's tensors ---- */

/* Starts a call's report: nothing kept, nothing too small (NULL: no-op). */
void aotrun_runner_call_reset(aotrun_runner_call *call, size_t num_outputs);
/* Checks every output before the first byte is written, then copies each
 * on `stream`; no wait. guarded: the caller holds the stream guard (else
 * one is opened only for a strided or kept output). may_hand_over: kept
 * outputs may be the model's own tensors. On failure none stays kept. */
aotrun_status aotrun_runner_copy_outputs_unsynced(
    aotrun_method_runner *r, AtenTensorHandle *sources, DLTensor *outputs,
    size_t num_outputs, void *stream, aotrun_runner_call *call,
    int may_hand_over, int guarded, aotrun_error *err);

/* ---- method_output_keep.c: outputs handed to the caller (1.1) ---- */

/* A new handle for model output i (src) that the caller owns: src's own
 * tensor when may_hand_over, the shim owns its memory and it is row-major;
 * else a fresh row-major copy on src's device, queued on the current
 * stream (the caller holds the stream guard). */
aotrun_status aotrun_runner_keep_output(aotrun_method_runner *r, size_t i,
                                        AtenTensorHandle src,
                                        int may_hand_over,
                                        AtenTensorHandle *out,
                                        aotrun_error *err);
/* "[4,3]" into buf (truncated to size). */
void aotrun_runner_shape_text(int64_t ndim, const int64_t *shape, char *buf,
                              size_t size);

/* Where a DLTensor's bytes start (NULL data stays NULL). */
static inline void *runner_data_of(const DLTensor *t) {
  return t->data == NULL ? NULL : (char *)t->data + t->byte_offset;
}

static inline int runner_is_cuda(const aotrun_method_runner *r) {
  return r->device.device_type == kDLCUDA;
}

static inline int runner_host_memory(DLDeviceType t) {
  return t == kDLCPU || t == kDLCUDAHost;
}

/* 1 when strides is NULL or row-major for shape (size-1 dims and tensors
 * with a zero-size dim may have any strides): the ABI's rule, shared with
 * the host library (aotrun_strides_are_row_major, aotrun_plugin.h). */
static inline int runner_is_compact(int32_t ndim, const int64_t *shape,
                                    const int64_t *strides) {
  return aotrun_strides_are_row_major(ndim, shape, strides);
}

/* Byte size of a tensor of non-negative sizes: 1 and *bytes set when
 * product(shape) * itemsize fits in int64_t, 0 when it overflows. */
static inline int runner_checked_nbytes(int32_t ndim, const int64_t *shape,
                                        size_t itemsize, size_t *bytes) {
  int64_t n = (int64_t)itemsize;
  for (int32_t d = 0; d < ndim; d++)
    if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n)) return 0;
  *bytes = (size_t)n;
  return 1;
}

static inline size_t runner_numel(int32_t ndim, const int64_t *shape) {
  size_t n = 1;
  for (int32_t d = 0; d < ndim; d++) n *= (size_t)shape[d];
  return n;
}

#endif /* AOTRUN_METHOD_RUNNER_INTERNAL_H */
