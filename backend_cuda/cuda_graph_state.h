/*
 * cuda_graph_state.h: the CUDA graph state machine of one method handle
 * (DESIGN.md §3.2, docs/cuda-graphs.md).
 *
 * Every CUDA call it makes goes through aotrun_graph_ops, a narrow seam of
 * function pointers: the backend passes the real CUDA implementations
 * (cuda_graph_ops.c), CPU tests pass fakes and drive every edge below.
 *
 * Phases and edges (the same diagram is in docs/cuda-graphs.md):
 *
 *                      enable (the method is named in
 *                      enable_cuda_graph_for_method)
 *   +------------+ ------------------------------------> +-------------------+
 *   |  Disabled  |                                        |  Warmup           |
 *   |            | <------------------------------------ |  (n normal calls  |
 *   +------------+   disable (the option no longer       |   left; n = 3)    |
 *    ^   ^   ^  ^    names it): release()                 +-------------------+
 *    |   |   |  |                                           | successful normal
 *    |   |   |  |  forbid (host-memory constant, constants   | call: n -= 1
 *    |   |   |  +- unlisted, no RunSingleThreaded): never  | (a failed call
 *    |   |   |     leaves Disabled, logged at Info          |  does not count)
 *    |   |   |                                              v call with n == 0
 *    |   |   |                       +------------------------------------------+
 *    |   |   |                       | Capture (inside that one call)           |
 *    |   |   |                       |  1 static buffers <- copy of the inputs  |
 *    |   |   |                       |  2 pool_create                           |
 *    |   |   |                       |  3 begin_capture (relaxed, own stream)   |
 *    |   |   |                       |  4 pool_install; run_capture            |
 *    |   |   |                       |    (RunSingleThreaded); pool_install(0) |
 *    |   |   |                       |  5 end_capture -> graph                  |
 *    |   |   |                       |  (the pool grew in 4: undo 4-5, steps   |
 *    |   |   |                       |   2-5 again with its size reserved)     |
 *    |   |   |                       |  6 instantiate -> exec                   |
 *    |   |   |                       |  7 launch (first launch)                 |
 *    |   |   |                       |  8 synchronize                           |
 *    |   |   |                       +------------------------------------------+
 *    |   |   |  F1..F7: a step 1-7 fails: the graph never   |     |
 *    |   |   +- ran. release(); graphs off; Info log; the ---+     |
 *    |   |      SAME call runs once more without a graph         |
 *    |   |      and its result is returned                       |
 *    |   |                                                       |
 *    |   |  F8: synchronize after the first launch fails: the    |
 *    |   +- graph started running (state may have changed). -----+
 *    |      release(); graphs off; Error log; the error is        |
 *    |      returned, NO retry                                    | 8 ok: the pool and
 *    |                                                            | the output handles
 *    |                                                            | become the graph's
 *    |                                                            v (commit)
 *    |  disable: release()                               +-------------------+
 *    +-------------------------------------------------- |  Replay           |
 *                                                        |  check every input|
 *          recapture (option "recapture"): release(),    |  vs captured shape|
 *          clear captured shapes + static buffers,       |  -> copy inputs   |
 *          Warmup with n = 1 (from Warmup, Replay or a   |  -> launch        |
 *          failed capture's Disabled; not when forbidden)|  -> copy outputs  |
 *                                                        +-------------------+
 *     Replay self-edges: an input whose dtype, dim count or a size differs
 *     from the capture call's -> AOTRUN_ERR_INVALID_ARGUMENT before any copy
 *     ("input 0 has size 4 in dim 1, captured with 3", "input 0 has 3 dims,
 *     captured with 4"); a failing copy or launch -> that error (Error log),
 *     the graph is kept.
 *
 * release() is the ONE function that undoes a capture, used by every failure
 * edge, by disable, by recapture and by destroy: it ends a capture still in
 * progress (discarding its graph), uninstalls the pool, deletes the output
 * handles, destroys exec and graph, destroys the pool (freeing its memory),
 * frees the static buffers, forgets the captured shapes and clears CUDA's
 * sticky last error (cudaGetLastError), then checks the stream has left
 * capture mode.
 *
 * A graph per shape (option cuda_graph_shapes = K > 0, default 0): in
 * Replay, a call whose input shapes match no captured graph is new. Its
 * first call runs without a graph (one warmup call per shape, remembered
 * for up to K shapes); its next call captures a graph for those shapes
 * (steps 1-8 into a free slot), evicting the least recently used graph
 * first when K are held (its exec, graph, pool and static buffers freed).
 * Replay picks the graph whose shapes equal the call's. Every failure edge
 * above still applies and releases ALL graphs (graphs off for the method);
 * recapture drops all of them. K = 0 keeps one graph and the refusal.
 *
 * Calls on one state must be serialised (the plugin ABI's rule).
 */
#ifndef AOTRUN_CUDA_GRAPH_STATE_H
#define AOTRUN_CUDA_GRAPH_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/output_copy.h"
#include "shim_lib/aotrun_shim.h"

/* Normal calls before the first capture, and after a recapture request. */
#define AOTRUN_GRAPH_WARMUP_CALLS 3
#define AOTRUN_GRAPH_RECAPTURE_WARMUP_CALLS 1
/* Normal calls of a new shape before its capture (cuda_graph_shapes > 0). */
#define AOTRUN_GRAPH_SHAPE_WARMUP_CALLS 1
/* Most graphs per method (the largest cuda_graph_shapes). */
#define AOTRUN_GRAPH_MAX_SHAPES 64

typedef enum aotrun_graph_phase {
  AOTRUN_GRAPH_DISABLED = 0,
  AOTRUN_GRAPH_WARMUP = 1,
  AOTRUN_GRAPH_REPLAY = 2,
} aotrun_graph_phase;

/*
 * The seam: every CUDA (and model) call the state machine makes. All members
 * are required. Functions returning aotrun_status fill *err on failure.
 */
typedef struct aotrun_graph_ops {
  void *ctx; /* first argument of every member */

  /* A normal call without a graph (stage, run, copy outputs out). */
  aotrun_status (*run_direct)(void *ctx, const DLTensor *inputs,
                              size_t num_inputs, DLTensor *outputs,
                              size_t num_outputs, aotrun_error *err);
  /* The model run recorded into the capture: fresh input handles over the
   * static buffers, RunSingleThreaded on the method's stream; on success
   * outputs[] receive new references (their memory comes from the pool). */
  aotrun_status (*run_capture)(void *ctx, const DLTensor *static_inputs,
                               size_t num_inputs, AtenTensorHandle *outputs,
                               size_t num_outputs, aotrun_error *err);

  /* cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed). */
  aotrun_status (*begin_capture)(void *ctx, aotrun_error *err);
  /* cudaStreamEndCapture; *graph may be set even on failure. */
  aotrun_status (*end_capture)(void *ctx, void **graph, aotrun_error *err);
  /* cudaStreamIsCapturing != None. */
  int (*is_capturing)(void *ctx);
  aotrun_status (*instantiate)(void *ctx, void *graph, void **exec,
                               aotrun_error *err);
  aotrun_status (*launch)(void *ctx, void *exec, aotrun_error *err);
  aotrun_status (*synchronize)(void *ctx, aotrun_error *err);
  void (*destroy_graph)(void *ctx, void *graph);
  void (*destroy_exec)(void *ctx, void *exec);
  /* cudaGetLastError: clears the sticky per-thread error. */
  void (*clear_error)(void *ctx);

  /* Static device buffers for the captured inputs (cudaMalloc/cudaFree). */
  aotrun_status (*static_alloc)(void *ctx, size_t bytes, void **ptr,
                                aotrun_error *err);
  void (*static_free)(void *ctx, void *ptr);
  /* Queues inputs[i] -> static_inputs[i] (same dtype/shape, contiguous) on
   * the method's stream. */
  aotrun_status (*copy_inputs)(void *ctx, const DLTensor *inputs,
                               const DLTensor *static_inputs, size_t n,
                               aotrun_error *err);
  /* Copies the graph's output tensors into the caller's outputs (checks
   * they fit, writes dynamic sizes) and synchronises the stream. */
  aotrun_status (*copy_outputs)(void *ctx, AtenTensorHandle *graph_outputs,
                                DLTensor *outputs, size_t n,
                                aotrun_error *err);
  /* aoti_torch_delete_tensor_object on each non-NULL handle. */
  void (*delete_outputs)(void *ctx, AtenTensorHandle *handles, size_t n);

  /* The per-graph memory pool: created before the capture with at least
   * `reserve` bytes of device memory taken (0: its smallest chunk), so the
   * capture need not allocate any; installed as the thread's shim allocator
   * while the model runs inside it (NULL uninstalls), destroyed (memory
   * freed) by release(). */
  aotrun_status (*pool_create)(void *ctx, size_t reserve, void **pool,
                               aotrun_error *err);
  void (*pool_install)(void *ctx, void *pool);
  void (*pool_destroy)(void *ctx, void *pool);
  /* Device bytes the pool holds (for the memory report). */
  size_t (*pool_bytes)(void *ctx, void *pool);

  /* One log message (AOTRUN_LOG_*), borrowed for the call. */
  void (*log)(void *ctx, int32_t level, const char *message);

  /* Optional, all three or none (option cuda_graph_input_nodes; NULL:
   * inputs are always copied on the stream; graph_input_nodes.h). */
  /* Adds to graph a device-to-device copy node inputs[i] ->
   * static_inputs[i] per input, each ahead of every node that was a root
   * of the graph before; nodes[i] gets node i. */
  aotrun_status (*add_input_nodes)(void *ctx, void *graph,
                                   const DLTensor *inputs,
                                   const DLTensor *static_inputs, size_t n,
                                   void **nodes, aotrun_error *err);
  /* Points node of exec at input -> static_input for its next launches. */
  aotrun_status (*point_input_node)(void *ctx, void *exec, void *node,
                                    const DLTensor *input,
                                    const DLTensor *static_input,
                                    aotrun_error *err);
  /* Turns node of exec on (1) or off (0) for its next launches. */
  aotrun_status (*enable_input_node)(void *ctx, void *exec, void *node,
                                     int on, aotrun_error *err);

  /* Optional, all five or none (option cuda_graph_output_nodes; NULL:
   * outputs are always copied by copy_outputs; graph_output_nodes.h). */
  /* copy_outputs's checks without its copies: sizes written into the
   * caller's shapes, each output's copy described in plan[i]
   * (aotrun_method_runner_plan_output_copies). */
  aotrun_status (*plan_outputs)(void *ctx, AtenTensorHandle *graph_outputs,
                                DLTensor *outputs, size_t n,
                                aotrun_output_copy *plan, aotrun_error *err);
  /* The end of a call whose outputs the graph copied: what copy_outputs
   * does after its copies (the wait, unless the call is asynchronous). */
  aotrun_status (*finish_outputs)(void *ctx, aotrun_error *err);
  /* Adds to graph a device-to-device copy node plan[i].src -> plan[i].dst
   * per output, each after every node that was a leaf of the graph
   * before; nodes[i] gets node i. */
  aotrun_status (*add_output_nodes)(void *ctx, void *graph,
                                    const aotrun_output_copy *plan, size_t n,
                                    void **nodes, aotrun_error *err);
  /* Points node of exec at copy for its next launches. */
  aotrun_status (*point_output_node)(void *ctx, void *exec, void *node,
                                     const aotrun_output_copy *copy,
                                     aotrun_error *err);
  /* Turns node of exec on (1) or off (0) for its next launches. */
  aotrun_status (*enable_output_node)(void *ctx, void *exec, void *node,
                                      int on, aotrun_error *err);

  /* Optional, both or none (option cuda_graph_done_flag; NULL: every call
   * ends in cudaStreamSynchronize; cuda_done_flag.h). */
  /* Adds to graph a last node, after every leaf, telling the host the
   * replay's end; *added = 0 where the ctx does not want one or cannot
   * make it (not an error: the capture goes on without it). */
  aotrun_status (*add_done_node)(void *ctx, void *graph, int *added,
                                 aotrun_error *err);
  /* A graph with that node was launched; awaitable: only the call's
   * synchronisation follows (its outputs were copied by nodes). */
  void (*done_launched)(void *ctx, int awaitable);
} aotrun_graph_ops;

typedef struct aotrun_graph_state aotrun_graph_state;

/* ops is copied; method_name (copied) appears in log messages; device is the
 * device of the static buffers. Starts Disabled. */
aotrun_status aotrun_graph_state_create(const aotrun_graph_ops *ops,
                                        const char *method_name,
                                        DLDevice device, size_t num_inputs,
                                        size_t num_outputs,
                                        aotrun_graph_state **out,
                                        aotrun_error *err);
/* release() and free. Accepts NULL. */
void aotrun_graph_state_destroy(aotrun_graph_state *s);

/* Turns graphs on (Disabled -> Warmup with 3 calls; no change when already
 * on) or off (any phase -> Disabled through release()). A forbidden state
 * stays Disabled (logged at Info with the reason); a state whose capture
 * failed stays off until a recapture. */
void aotrun_graph_state_set_enabled(aotrun_graph_state *s, int enabled);
int aotrun_graph_state_enabled(const aotrun_graph_state *s);

/* Disables graphs for good: reason (copied) says why, e.g. "it keeps
 * constant 'pred' in host memory"; logged at Info. */
void aotrun_graph_state_forbid(aotrun_graph_state *s, const char *reason);

/* How many graphs (one per input shapes) to keep: 0 (the default) keeps
 * one and refuses other shapes in Replay; 1..AOTRUN_GRAPH_MAX_SHAPES
 * captures new shapes, evicting the least recently used graph. Lowering it
 * evicts graphs down to max(max_graphs, 1). AOTRUN_ERR_INVALID_ARGUMENT
 * outside 0..AOTRUN_GRAPH_MAX_SHAPES. */
aotrun_status aotrun_graph_state_set_max_graphs(aotrun_graph_state *s,
                                                int64_t max_graphs,
                                                aotrun_error *err);

/* Option cuda_graph_input_nodes: 1 puts the input copies of graphs
 * captured from now on into the graph (graph_input_nodes.h); 0 copies them
 * on the stream before each launch. A new state starts at 0; the CUDA
 * method sets the option's value (1 by default, cuda_options.c). A graph
 * already captured keeps its way until it is released. */
void aotrun_graph_state_set_input_nodes(aotrun_graph_state *s, int on);
/* Option cuda_graph_output_nodes: graphs captured from then on copy the
 * outputs into the caller's device tensors with nodes of their own
 * (graph_output_nodes.h). Starts 0. */
void aotrun_graph_state_set_output_nodes(aotrun_graph_state *s, int on);

/* Graphs held now whose input copies are nodes of the graph (tests). */
size_t aotrun_graph_state_num_input_node_graphs(const aotrun_graph_state *s);
/* Graphs held now whose output copies are nodes of the graph (tests). */
size_t aotrun_graph_state_num_output_node_graphs(const aotrun_graph_state *s);

/* Recapture: release(), then Warmup with 1 call. AOTRUN_ERR_NOT_SUPPORTED
 * when graphs are forbidden or not enabled for this method. */
aotrun_status aotrun_graph_state_recapture(aotrun_graph_state *s,
                                           aotrun_error *err);

/* One call of the method. Inputs must already satisfy the method's declared
 * signature (the method runner checks that first). */
aotrun_status aotrun_graph_state_execute(aotrun_graph_state *s,
                                         const DLTensor *inputs,
                                         size_t num_inputs, DLTensor *outputs,
                                         size_t num_outputs,
                                         aotrun_error *err);

/* Introspection (tests, logs). */
aotrun_graph_phase aotrun_graph_state_phase(const aotrun_graph_state *s);
const char *aotrun_graph_phase_name(aotrun_graph_phase phase);
/* Normal calls left before the capture (Warmup only; else 0). */
int aotrun_graph_state_warmup_left(const aotrun_graph_state *s);
/* 1 while captured shapes / static buffers are held. */
int aotrun_graph_state_has_capture(const aotrun_graph_state *s);
/* Graphs held now, their device bytes (static input buffers plus pool),
 * and how many were evicted so far. */
size_t aotrun_graph_state_num_graphs(const aotrun_graph_state *s);
size_t aotrun_graph_state_graph_bytes(const aotrun_graph_state *s);
size_t aotrun_graph_state_num_evictions(const aotrun_graph_state *s);
/* "2 graphs, 4194816 bytes: [1,4] 2097408; [2,4] 2097408" (each graph's
 * input shapes and bytes, most recently used first; "0 graphs, 0 bytes"
 * when none). The string lives in s until the next call. */
const char *aotrun_graph_state_memory_report(aotrun_graph_state *s);
/* How often release() found something to release; replays so far. */
size_t aotrun_graph_state_num_releases(const aotrun_graph_state *s);
size_t aotrun_graph_state_num_replays(const aotrun_graph_state *s);
/* Captures recorded twice because the pool took device memory inside the
 * first recording. */
size_t aotrun_graph_state_num_rerecords(const aotrun_graph_state *s);
/* Why graphs are off ("" when they are not): the forbid reason or the
 * failed capture's message. */
const char *aotrun_graph_state_disabled_reason(const aotrun_graph_state *s);

#endif /* AOTRUN_CUDA_GRAPH_STATE_H */
