/*
 * cuda_options.h: the CUDA backend's options (set_option / get_option):
 * their keys and types, parsing and the values they hold. Pure C (no CUDA),
 * so every rule is tested on the CPU.
 *
 *   key                            type    where         meaning
 *   enable_cuda_graph_for_method   STRING  both          comma-separated
 *        method names that use CUDA graphs ("forward, decode"; spaces
 *        around names and empty items are ignored; "" for none)
 *   shared_stream                  BOOL    both          methods share one
 *        stream per device so they can hand tensors to each other
 *        (default 0: a stream per method handle)
 *   share_weights                  BOOL    backend-wide  methods of one
 *        program share one weight cache (default 1); read on a method
 *   log_level                      STRING  both          "debug", "info",
 *        "warning" or "error": the least level sent to the host's log
 *        (default "info")
 *   recapture                      BOOL    method        true: drop the
 *        method's CUDA graph, warm up one call and capture again
 *   cuda_graph_phase               STRING  method, read  "Disabled",
 *        "Warmup" or "Replay"
 *   cuda_graph_shapes              INT     both          graphs kept per
 *        method, one per input shapes (LRU): 0 (default) keeps one graph
 *        and refuses other shapes; 1..64 captures new shapes
 *   cuda_graph_input_nodes         BOOL    both          1: a graph
 *        captured from then on copies its inputs with copy nodes of its
 *        own, pointed at each call's device inputs (no cudaMemcpyAsync of
 *        their own; host inputs still copied on the stream);
 *        graph_input_nodes.h (default 1 since 2026-12-06; 0: copies
 *        on the stream)
 *   cuda_graph_output_nodes        BOOL    both          1: a graph
 *        captured from then on copies its outputs into the caller's
 *        device tensors with copy nodes of its own, after its last
 *        kernels (no cudaMemcpyAsync of their own; host, kept or strided
 *        outputs still copied after the launch); graph_output_nodes.h
 *        (default 1 since 2026-12-07; 0: copies after the launch)
 *   cuda_graph_bytes               STRING  method, read  the graphs held
 *        and their device memory: "2 graphs, 4194816 bytes: [1,4]
 *        2097408; [2,4] 2097408" (input shapes and bytes per graph, most
 *        recently used first)
 *   weight_copies                  INT     method, read  device copies in
 *        the method's weight cache (shared by the program's methods with
 *        share_weights: one per FQN and layout)
 *   library_temp_file              BOOL    backend-wide  1: write model
 *        libraries to a temp file under $TMPDIR instead of a memfd
 *        (default 0; docs/loading.md); read on a method
 *   load_report                    STRING  method, read  the method's
 *        load report: one JSON object (phase times, bytes; docs/loading.md)
 *   warm_up                        BOOL    backend-wide  init does the
 *        one-time library work of the first call for the ops the method
 *        imports (cuBLAS/cuBLASLt, cuDNN, the allocator's pool; default 1;
 *        docs/cuda-backend.md); read on a method
 *   warm_up_run                    BOOL    backend-wide  init also runs
 *        the method once on zeroed inputs of the export example's shapes
 *        (each symbol's "hint"; without one its smallest declared value),
 *        so the model's own lazy work (kernel modules, per-shape library
 *        kernels) is not the first call's; only for methods whose manifest
 *        says they write no buffer and that import no random or assert op
 *        (warm_up_run_plan.h; default 1); read on a method
 *   output_placement               BOOL    both          1: a call
 *        without a graph writes the outputs the model allocates straight
 *        into the caller's output tensors where they fit, learned from
 *        the calls before (aot_loader/output_placement.h); 0: every
 *        output copied after the run. Unset: $AOTRUN_OUTPUT_PLACEMENT
 *        (1 or 0) at the method's init, else the build's default
 *        (placement_setting.h); on a method it reads what the method
 *        does now (a call that finds it unsafe turns it off)
 *   cuda_graph_copy_kernels        BOOL    both          1: the copy
 *        nodes of graphs captured from then on (input and output nodes)
 *        are kernel nodes running one byte-copy kernel
 *        (graph_copy_kernel.h) instead of memcpy nodes (default 0, opt-in
 *        until measured on the GPU)
 *   cuda_graph_capture_at_init     BOOL    backend-wide  1 (default): the
 *        warm-up run at init (warm_up_run) drives a graph method's calls
 *        on through the graph's warm-up calls, its capture and one replay,
 *        so a caller's first call is a replay and no capture happens in a
 *        caller's call; only where the graph cannot be refused a caller's
 *        shapes: every input dim static, or cuda_graph_shapes > 0; read on
 *        a method
 *   cuda_graph_done_flag           BOOL    both          1: graphs
 *        captured from then on end in one more kernel that bumps a
 *        counter in mapped host memory, and a replay whose output copies
 *        are graph nodes waits by spinning on that counter instead of in
 *        cudaStreamSynchronize (cuda_done_flag.h; default 0, opt-in until
 *        measured on the GPU)
 *
 * Backend-wide values (method NULL) apply to handles created afterwards;
 * a handle starts with a copy. Unknown keys are AOTRUN_ERR_NOT_FOUND, a
 * wrong type or value AOTRUN_ERR_INVALID_ARGUMENT, a key that does not apply
 * where it is set AOTRUN_ERR_NOT_SUPPORTED; messages name the key and types.
 */
#ifndef AOTRUN_CUDA_OPTIONS_H
#define AOTRUN_CUDA_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "plugin_api/aotrun_plugin.h"

typedef enum aotrun_cuda_option_id {
  AOTRUN_CUDA_OPT_GRAPH_METHODS = 0,
  AOTRUN_CUDA_OPT_SHARED_STREAM,
  AOTRUN_CUDA_OPT_SHARE_WEIGHTS,
  AOTRUN_CUDA_OPT_LOG_LEVEL,
  AOTRUN_CUDA_OPT_RECAPTURE,
  AOTRUN_CUDA_OPT_GRAPH_PHASE,
  AOTRUN_CUDA_OPT_WEIGHT_COPIES,
  AOTRUN_CUDA_OPT_GPU_TIMING,
  AOTRUN_CUDA_OPT_LAST_GPU_TIME,
  AOTRUN_CUDA_OPT_GRAPH_SHAPES,
  AOTRUN_CUDA_OPT_GRAPH_BYTES,
  AOTRUN_CUDA_OPT_LIBRARY_TEMP_FILE,
  AOTRUN_CUDA_OPT_LOAD_REPORT,
  AOTRUN_CUDA_OPT_WARM_UP,
  AOTRUN_CUDA_OPT_WARM_UP_RUN,
  AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES,
  AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES,
  AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT,
  AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS,
  AOTRUN_CUDA_OPT_GRAPH_CAPTURE_AT_INIT,
  AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG,
  AOTRUN_CUDA_OPT_COUNT
} aotrun_cuda_option_id;

#define AOTRUN_CUDA_METHOD_LIST_MAX 1024
/* Largest cuda_graph_shapes (AOTRUN_GRAPH_MAX_SHAPES of the graph state). */
#define AOTRUN_CUDA_MAX_GRAPH_SHAPES 64

/* The values a target (the backend, or one method handle) holds. */
typedef struct aotrun_cuda_options {
  char graph_methods[AOTRUN_CUDA_METHOD_LIST_MAX]; /* normalised "a,b" */
  int32_t shared_stream;
  int32_t share_weights;
  int32_t log_level; /* AOTRUN_LOG_* */
  int32_t graph_shapes; /* cuda_graph_shapes */
  int32_t library_temp_file;
  int32_t warm_up; /* warm_up */
  int32_t warm_up_run; /* warm_up_run */
  int32_t graph_input_nodes; /* cuda_graph_input_nodes */
  int32_t graph_output_nodes; /* cuda_graph_output_nodes */
  int32_t output_placement; /* -1: not set (aotrun_output_placement_wanted) */
  int32_t graph_copy_kernels; /* cuda_graph_copy_kernels */
  /* cuda_graph_capture_at_init: 1 or 0 as set, -1 on by default (not
   * asked for: a graph not captured at init is logged at debug only) */
  int32_t graph_capture_at_init;
  int32_t graph_done_flag; /* cuda_graph_done_flag */
} aotrun_cuda_options;

/* The defaults: no graphs, a stream per method, shared weights, info. */
void aotrun_cuda_options_default(aotrun_cuda_options *o);

/* Finds the key. for_method: 1 on a method handle, 0 backend-wide. Checks
 * the key exists, applies there, and (when check_type) that type matches. */
aotrun_status aotrun_cuda_option_find(const char *key, int32_t type,
                                      int check_type, int for_method,
                                      aotrun_cuda_option_id *id,
                                      aotrun_error *err);
const char *aotrun_cuda_option_key(aotrun_cuda_option_id id);
int32_t aotrun_cuda_option_type(aotrun_cuda_option_id id);
const char *aotrun_cuda_option_type_name(int32_t type);

/* Stores a stored option's value (graph methods, streams, weights, log
 * level) into *o; the others are actions the caller carries out. */
aotrun_status aotrun_cuda_options_store(aotrun_cuda_options *o,
                                        aotrun_cuda_option_id id,
                                        const aotrun_option *option,
                                        aotrun_error *err);
/* Writes a stored option's value into *out (string owned by *o). */
void aotrun_cuda_options_read(const aotrun_cuda_options *o,
                              aotrun_cuda_option_id id, aotrun_option *out);

/* Normalises a comma-separated method list: trims spaces and tabs, drops
 * empty items, joins with ","; an item with inner spaces is an error. */
aotrun_status aotrun_cuda_method_list_normalize(const char *in, char *out,
                                                size_t out_size,
                                                aotrun_error *err);
/* 1 when the normalised list names method. */
int aotrun_cuda_method_list_contains(const char *list, const char *method);

#endif /* AOTRUN_CUDA_OPTIONS_H */
