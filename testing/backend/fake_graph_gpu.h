/*
 * fake_graph_gpu.h: a fake GPU behind the graph state machine's ops
 * (backend_cuda/cuda_graph_state.h), close enough to real CUDA graphs that
 * a wrong result shows: "device" memory is host memory; the model is the
 * kernel out = in0 + ... + 1 over float tensors; a capture records that
 * kernel over the static buffers; an executable graph keeps its own copy of
 * the input and output copy nodes (pointers, size, on/off) as CUDA does,
 * updated only by the exec setters; a launch runs the enabled input nodes,
 * the kernel, then the enabled output nodes. An output in kDLCUDA memory
 * with data is a direct copy (plan_outputs); any other is not.
 * A graph may end in the done counter's node (FAKE.done_flag): each
 * launch of one is counted, and a stream copy queued while such a launch
 * is armed (awaited by the counter) is counted as the bug it would be.
 * Any op can be made to fail once (fake_gpu.fault), and every allocation is
 * counted so a test can check nothing leaked after destroy.
 *
 * Used by //testing/backend:test_graph_input_nodes and the fuzz target
 * testing/fuzz/fuzz_graph_state.c.
 */
#ifndef AOTRUN_TESTING_FAKE_GRAPH_GPU_H
#define AOTRUN_TESTING_FAKE_GRAPH_GPU_H

#include <stddef.h>

#include "backend_cuda/cuda_graph_state.h"

typedef enum fake_fault {
  FAKE_OK = 0,
  FAKE_RUN_DIRECT,
  FAKE_STATIC_ALLOC,
  FAKE_COPY_INPUTS,
  FAKE_POOL_CREATE,
  FAKE_BEGIN,
  FAKE_RUN_CAPTURE,
  FAKE_END,
  FAKE_INSTANTIATE,
  FAKE_LAUNCH,
  FAKE_SYNC,
  FAKE_COPY_OUTPUTS,
  FAKE_ADD_NODES, /* fails after adding all but the last node */
  FAKE_POINT,
  FAKE_ENABLE,
  FAKE_PLAN,          /* plan_outputs */
  FAKE_FINISH,        /* finish_outputs */
  FAKE_ADD_OUT_NODES, /* fails after adding all but the last node */
  FAKE_OUT_POINT,
  FAKE_OUT_ENABLE,
  FAKE_ADD_DONE,      /* add_done_node */
  FAKE_FAULT_COUNT
} fake_fault;

typedef struct fake_gpu {
  fake_fault fault;       /* the next op of this kind fails, then FAKE_OK */
  const void *refuse_src; /* point_input_node refuses this source */
  const void *refuse_dst; /* point_output_node refuses this destination */
  void *capturing;        /* the graph being recorded */
  int copy_inputs, add_nodes, points, enables, launches;
  int copy_outputs, plans, finishes, add_out_nodes, out_points, out_enables;
  int graphs_made, graphs_destroyed, execs_made, execs_destroyed;
  int static_allocs, static_frees, pools_made, pools_destroyed;
  int outputs_made, outputs_deleted;
  /* The done counter's node (option cuda_graph_done_flag). */
  int done_flag;           /* add_done_node adds one (else *added = 0) */
  const char *done_refuse; /* with done_flag: not added, this the reason */
  int done_nodes, done_launches, done_awaitable; /* counts */
  int armed;               /* an awaitable launch not yet finished */
  int flag_waits;          /* finish_outputs ending an armed launch */
  int copies_while_armed;  /* copy_outputs after one: a wait would end early */
  char last_log[2048];
  char logs[8192]; /* every log line, while they fit */
} fake_gpu;

extern fake_gpu FAKE;

/* Zeroes FAKE. */
void fake_gpu_reset(void);
/* The ops, all members set (the input- and output-node ones included). */
aotrun_graph_ops fake_gpu_ops(void);
/* After the state was destroyed: 1 when every graph, exec, static buffer,
 * pool and output made was freed and no capture is open; else 0 with the
 * first imbalance in why. */
int fake_gpu_balanced(char *why, size_t why_size);
/* The model's result for inputs in[0..n): out = sum + 1, elementwise. */
void fake_gpu_model(const float *const *in, size_t n, size_t numel,
                    float *out);

#endif /* AOTRUN_TESTING_FAKE_GRAPH_GPU_H */
