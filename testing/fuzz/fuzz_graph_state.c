/*
 * fuzz_graph_state.c: libFuzzer target for the CUDA graph state machine
 * (backend_cuda/cuda_graph_state.h) over the fake GPU of
 * testing/backend/fake_graph_gpu.h. The input is a program of one-byte
 * steps: calls with two inputs of 1-3 rows (each input in device or host
 * memory, from one of three buffers, refilled with new values every call),
 * graphs on and off, cuda_graph_shapes 0-4, recapture, input nodes on and
 * off, output nodes on and off with outputs in one of two kept device
 * buffers or host memory, setters that refuse one buffer, and one op of
 * the fake made to fail (every failure edge: F1-F8, a failing replay, a
 * failing node switch, plan or wait).
 * Checked after every step: a call that succeeds returned in0 + in1 + 1 of
 * its own inputs (a stale static buffer, a node pointing at another call's
 * buffer, or a node left on over a stream copy shows here); one that fails
 * says why. After destroy: every graph, exec, static buffer, pool and output
 * freed, no capture open. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh graph_state.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda/cuda_graph_state.h"
#include "testing/backend/fake_graph_gpu.h"

#define COLS 4
#define MAX_ROWS 3
#define NUM_IN 2
#define NUM_BUFS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static float bufs[NUM_IN][NUM_BUFS][MAX_ROWS * COLS];
static float out_bufs[2][MAX_ROWS * COLS]; /* "device" outputs kept across
                                              calls (output nodes) */
static float fill = 1;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_graph_state: %s: %s\n", what, detail);
  abort();
}

/* One call: byte b picks the rows, each input's buffer and memory. */
static void call(aotrun_graph_state *s, uint8_t b) {
  int64_t shape[NUM_IN][2], out_shape[2] = {1 + b % MAX_ROWS, COLS};
  DLTensor in[NUM_IN];
  const float *vals[NUM_IN];
  size_t numel = (size_t)out_shape[0] * COLS;
  for (int i = 0; i < NUM_IN; i++) {
    int k = (b >> (2 + 3 * i)) % NUM_BUFS;
    int host = (b >> (4 + 3 * i)) & 1;
    float *v = bufs[i][k];
    for (size_t j = 0; j < numel; j++) v[j] = fill++;
    shape[i][0] = out_shape[0];
    shape[i][1] = COLS;
    in[i] = (DLTensor){.data = v,
                       .device = {host ? kDLCPU : kDLCUDA, 0},
                       .ndim = 2,
                       .dtype = {kDLFloat, 32, 1},
                       .shape = shape[i]};
    vals[i] = v;
  }
  /* The output: one of two kept device buffers or host memory (bit 0 and
   * bit 6 of b). */
  int out_kind = (((b & 1) << 1) | ((b >> 6) & 1)) % 3;
  float host_out[MAX_ROWS * COLS], want[MAX_ROWS * COLS];
  float *got = out_kind == 2 ? host_out : out_bufs[out_kind];
  for (size_t j = 0; j < numel; j++) got[j] = -1;
  DLTensor out = in[0];
  out.data = got;
  out.shape = out_shape;
  out.device = (DLDevice){out_kind == 2 ? kDLCPU : kDLCUDA, 0};
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st = aotrun_graph_state_execute(s, in, NUM_IN, &out, 1, &err);
  if (st != AOTRUN_OK) {
    if (err.message[0] == '\0') die("a failed call", "no message");
    return;
  }
  fake_gpu_model(vals, NUM_IN, numel, want);
  for (size_t j = 0; j < numel; j++)
    if (got[j] != want[j]) {
      char detail[160];
      snprintf(detail, sizeof detail,
               "value %zu is %g, want %g (phase %s, %zu graphs)", j,
               (double)got[j], (double)want[j],
               aotrun_graph_phase_name(aotrun_graph_state_phase(s)),
               aotrun_graph_state_num_graphs(s));
      die("a wrong output", detail);
    }
}

static void step(aotrun_graph_state *s, uint8_t b) {
  aotrun_error err;
  aotrun_error_clear(&err);
  switch (b & 3) {
    case 0:
    case 1:
      call(s, b);
      return;
    case 2:
      switch ((b >> 2) % 11) {
        case 0: aotrun_graph_state_set_enabled(s, 1); return;
        case 1: aotrun_graph_state_set_enabled(s, 0); return;
        case 2: aotrun_graph_state_set_input_nodes(s, 1); return;
        case 3: aotrun_graph_state_set_input_nodes(s, 0); return;
        case 4: (void)aotrun_graph_state_recapture(s, &err); return;
        case 5:
          FAKE.refuse_src = bufs[(b >> 5) & 1][(b >> 6) % NUM_BUFS];
          FAKE.refuse_dst = out_bufs[(b >> 7) & 1];
          return;
        case 6: FAKE.refuse_src = NULL, FAKE.refuse_dst = NULL; return;
        case 7: aotrun_graph_state_set_output_nodes(s, 1); return;
        case 8: aotrun_graph_state_set_output_nodes(s, 0); return;
        case 9: FAKE.done_flag = !FAKE.done_flag; return; /* next capture */
        default:
          (void)aotrun_graph_state_memory_report(s);
          return;
      }
    default:
      if ((b >> 2) < 48) {
        FAKE.fault = (fake_fault)(1 + (b >> 2) % (FAKE_FAULT_COUNT - 1));
      } else if (aotrun_graph_state_set_max_graphs(s, (b >> 2) % 5, &err) !=
                 AOTRUN_OK) {
        die("cuda_graph_shapes 0-4 refused", err.message);
      }
      return;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fake_gpu_reset();
  aotrun_graph_ops ops = fake_gpu_ops();
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_graph_state_create(&ops, "forward", (DLDevice){kDLCUDA, 0},
                                NUM_IN, 1, &s, &err) != AOTRUN_OK)
    die("create", err.message);
  aotrun_graph_state_set_enabled(s, 1);
  for (size_t i = 0; i < size && i < 4096; i++) step(s, data[i]);
  aotrun_graph_state_destroy(s);
  char why[160];
  if (!fake_gpu_balanced(why, sizeof why)) die("after destroy", why);
  /* A replay awaited by the done counter queued nothing after its launch,
   * and every launch of a graph with the node was counted. */
  if (FAKE.copies_while_armed != 0)
    die("done counter", "an output copy was queued after an awaited launch");
  if (FAKE.done_launches > FAKE.launches)
    die("done counter", "more done launches counted than launches");
  return 0;
}
