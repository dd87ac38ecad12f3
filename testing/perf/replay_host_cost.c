/*
 * replay_host_cost.c: the host instructions the graph state machine
 * (backend_cuda/cuda_graph_state.c) spends on one steady replay, without
 * the CUDA calls it makes: the ops are the fake GPU of
 * testing/backend/fake_graph_gpu.h (host memory, a 4-float kernel). Run
 * it under callgrind and read aotrun_graph_state_execute's inclusive
 * count minus the fake ops' (docs/benchmarks.md, "Replay's own host
 * work"):
 *
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *     .bazel-links/bin/testing/perf/replay_host_cost 100000
 *   callgrind_annotate --inclusive=yes cg.out | head -40
 *
 * Prints the replays made; exits 1 if any call fails. A measuring tool,
 * not a test: it asserts no speed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "backend_cuda/cuda_graph_state.h"
#include "testing/backend/fake_graph_gpu.h"

#define N 4

int main(int argc, char **argv) {
  long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
  static float in[N] = {1, 2, 3, 4}, out[N];
  static int64_t shape[1] = {N};
  DLTensor ti = {.data = in, .device = {kDLCUDA, 0}, .ndim = 1,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor to = ti;
  to.data = out;
  fake_gpu_reset();
  aotrun_graph_ops ops = fake_gpu_ops();
  aotrun_graph_state *s = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_graph_state_create(&ops, "forward", (DLDevice){kDLCUDA, 0}, 1,
                                1, &s, &err) != AOTRUN_OK) {
    fprintf(stderr, "create: %s\n", err.message);
    return 1;
  }
  /* The CUDA backend's defaults: input and output copy nodes. */
  aotrun_graph_state_set_input_nodes(s, 1);
  aotrun_graph_state_set_output_nodes(s, 1);
  aotrun_graph_state_set_enabled(s, 1);
  for (long i = 0; i < calls + 4; i++) {
    if (aotrun_graph_state_execute(s, &ti, 1, &to, 1, &err) != AOTRUN_OK) {
      fprintf(stderr, "call %ld: %s\n", i, err.message);
      aotrun_graph_state_destroy(s);
      return 1;
    }
  }
  printf("%ld replays after 3 warm-up calls and the capture; phase %s\n",
         calls, aotrun_graph_phase_name(aotrun_graph_state_phase(s)));
  aotrun_graph_state_destroy(s);
  return 0;
}
