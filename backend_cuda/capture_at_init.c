/* capture_at_init.c: see capture_at_init.h. */
#include "backend_cuda/capture_at_init.h"

#include <stdio.h>

/* The first input dim with a symbol (-1 in *dim when none). */
static const aotrun_program_io *dynamic_input(const aotrun_program_method *pm,
                                              int *dim) {
  for (size_t i = 0; pm != NULL && i < pm->num_inputs; i++)
    for (int d = 0; d < pm->inputs[i].ndim; d++)
      if (pm->inputs[i].exprs[d].symbol >= 0 || pm->inputs[i].symbols[d]) {
        *dim = d;
        return &pm->inputs[i];
      }
  *dim = -1;
  return NULL;
}

int aotrun_capture_at_init_asked(int option, aotrun_graph_phase phase) {
  if (option == 1) return 1;
  return option != 0 && phase == AOTRUN_GRAPH_WARMUP;
}

const char *aotrun_capture_at_init_refusal(const aotrun_program_method *pm,
                                           int graph_shapes,
                                           aotrun_graph_phase phase,
                                           const char *disabled_reason,
                                           char *why, size_t n) {
  if (phase != AOTRUN_GRAPH_WARMUP) {
    snprintf(why, n, "%s",
             disabled_reason != NULL && disabled_reason[0] != '\0'
                 ? disabled_reason
                 : "the method is not in enable_cuda_graph_for_method");
    return why;
  }
  int dim = -1;
  const aotrun_program_io *io = graph_shapes == 0 ? dynamic_input(pm, &dim)
                                                  : NULL;
  if (io == NULL) return NULL;
  snprintf(why, n,
           "input '%s' has a dynamic dim %d and cuda_graph_shapes is 0: the "
           "one graph is captured at a caller's shapes",
           io->name, dim);
  return why;
}

int aotrun_capture_at_init_more(aotrun_graph_phase phase, size_t num_replays) {
  return phase == AOTRUN_GRAPH_WARMUP ||
         (phase == AOTRUN_GRAPH_REPLAY && num_replays == 0);
}
