/*
 * capture_at_init.h: option cuda_graph_capture_at_init's decisions, pure C
 * (tested on the CPU, //testing/backend:test_capture_at_init): whether
 * init tries, and says so, whether a method's CUDA graph may be captured
 * by init's warm-up run, and whether that run's calls through the graph go
 * on. cuda_method_warm_up.c
 * drives them with the method's graph state.
 */
#ifndef AOTRUN_CAPTURE_AT_INIT_H
#define AOTRUN_CAPTURE_AT_INIT_H

#include <stddef.h>

#include "aot_loader/program.h"
#include "backend_cuda/cuda_graph_state.h"

/* Whether init tries to capture the graph, from the option's value (1 or 0
 * as set, -1 left at its default, which is on) and the graph's phase
 * before the warm-up: set on, always (a refusal is then logged at info);
 * by default, only for a method whose graph is enabled (phase Warmup), so
 * a method without graphs hears nothing of it. */
int aotrun_capture_at_init_asked(int option, aotrun_graph_phase phase);

/* NULL when the graph may be captured at init, else why not (written into
 * why): graphs off for the method (`disabled_reason`, else not named in
 * enable_cuda_graph_for_method), or an input with a dynamic dim while
 * cuda_graph_shapes is 0 (the one graph, captured at the export's shapes,
 * would refuse a caller's other sizes). */
const char *aotrun_capture_at_init_refusal(const aotrun_program_method *pm,
                                           int graph_shapes,
                                           aotrun_graph_phase phase,
                                           const char *disabled_reason,
                                           char *why, size_t n);

/* 1 while the warm-up's calls go on: the graph still warming up (its next
 * call warms or captures), or captured and not yet replayed (one replay,
 * so that path is not cold either). */
int aotrun_capture_at_init_more(aotrun_graph_phase phase, size_t num_replays);

#endif /* AOTRUN_CAPTURE_AT_INIT_H */
