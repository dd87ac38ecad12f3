/*
 * graph_call_fixture.h: one-input, one-output calls through the graph
 * state machine over the fake GPU (fake_graph_gpu.h), shared by the tests
 * of graph nodes: tensors of GF_N floats in "device" or host memory, a
 * call that checks out = in + 1, the warm-up and capture calls.
 */
#ifndef AOTRUN_TESTING_GRAPH_CALL_FIXTURE_H
#define AOTRUN_TESTING_GRAPH_CALL_FIXTURE_H

#include <stdint.h>

#include "backend_cuda/cuda_graph_state.h"

#define GF_N 4 /* floats per tensor */

typedef struct gf_buf {
  float v[GF_N + 1];
  DLTensor t;
} gf_buf;

extern aotrun_graph_state *GF_STATE;
extern int64_t gf_long_shape[1]; /* GF_N + 1: a tensor too big */

/* cmocka setup/teardown: FAKE reset; the state destroyed and the fake GPU
 * checked balanced (nothing leaked). */
int gf_setup(void **state);
int gf_teardown(void **state);

/* A tensor of GF_N floats v0, v0+1, ... in "device" (kDLCUDA) or host
 * memory. */
void gf_make(gf_buf *b, float v0, int device);
/* GF_STATE made over ops, input nodes on, output nodes as given, graphs
 * on. */
void gf_start(int output_nodes, aotrun_graph_ops ops);
/* One call of in into out (its first GF_N floats overwritten first); on
 * success checks out = in + 1; on failure the message is FAKE.last_log. */
aotrun_status gf_call(gf_buf *in, gf_buf *out);
/* b's first GF_N floats are still its own (no node wrote into it). */
void gf_untouched(const gf_buf *b, float v0);
/* Three warm-up calls and the capture call, input a into output o. */
void gf_capture(gf_buf *a, gf_buf *o);

#endif /* AOTRUN_TESTING_GRAPH_CALL_FIXTURE_H */
