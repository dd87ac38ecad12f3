/* graph_call_fixture.c: see graph_call_fixture.h. */
#include "testing/backend/graph_call_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "testing/backend/fake_graph_gpu.h"

aotrun_graph_state *GF_STATE;
int64_t gf_long_shape[1] = {GF_N + 1};
static int64_t kShape[1] = {GF_N};

int gf_setup(void **state) {
  (void)state;
  fake_gpu_reset();
  return 0;
}

int gf_teardown(void **state) {
  (void)state;
  aotrun_graph_state_destroy(GF_STATE);
  GF_STATE = NULL;
  char why[128];
  if (!fake_gpu_balanced(why, sizeof why)) fail_msg("leaked: %s", why);
  return 0;
}

void gf_make(gf_buf *b, float v0, int device) {
  for (int j = 0; j <= GF_N; j++) b->v[j] = v0 + (float)j;
  b->t = (DLTensor){.data = b->v,
                    .device = {device ? kDLCUDA : kDLCPU, 0},
                    .ndim = 1,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = kShape};
}

void gf_start(int output_nodes, aotrun_graph_ops ops) {
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_graph_state_create(&ops, "forward",
                                             (DLDevice){kDLCUDA, 0}, 1, 1,
                                             &GF_STATE, &err),
                   AOTRUN_OK);
  aotrun_graph_state_set_input_nodes(GF_STATE, 1);
  aotrun_graph_state_set_output_nodes(GF_STATE, output_nodes);
  aotrun_graph_state_set_enabled(GF_STATE, 1);
}

aotrun_status gf_call(gf_buf *in, gf_buf *out) {
  for (int j = 0; j < GF_N; j++) out->v[j] = -1000;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_status st =
      aotrun_graph_state_execute(GF_STATE, &in->t, 1, &out->t, 1, &err);
  if (st != AOTRUN_OK) {
    snprintf(FAKE.last_log, sizeof FAKE.last_log, "%s", err.message);
    return st;
  }
  for (int j = 0; j < GF_N; j++)
    if (out->v[j] != in->v[j] + 1)
      fail_msg("output %d is %g, want %g (a stale or missing output copy)",
               j, (double)out->v[j], (double)(in->v[j] + 1));
  return st;
}

void gf_untouched(const gf_buf *b, float v0) {
  for (int j = 0; j < GF_N; j++)
    if (b->v[j] != -1000 && b->v[j] != v0 + (float)j)
      fail_msg("an earlier output buffer was written: [%d] = %g", j,
               (double)b->v[j]);
}

void gf_capture(gf_buf *a, gf_buf *o) {
  for (int i = 0; i < 4; i++) assert_int_equal(gf_call(a, o), AOTRUN_OK);
  assert_string_equal(
      aotrun_graph_phase_name(aotrun_graph_state_phase(GF_STATE)), "Replay");
}
