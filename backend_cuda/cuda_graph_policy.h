/*
 * cuda_graph_policy.h: whether a loaded method may ever use a CUDA graph.
 * It may not when its program keeps a constant in host memory (a host read
 * inside the graph would be baked in once), when the library cannot list
 * its constants (so that cannot be ruled out), or when it lacks
 * RunSingleThreaded (Run records an event inside the capture).
 */
#ifndef AOTRUN_CUDA_GRAPH_POLICY_H
#define AOTRUN_CUDA_GRAPH_POLICY_H

#include <stddef.h>

#include "aot_loader/method_runner.h"

/* 1 and the reason (for "method X runs without a CUDA graph: <reason>")
 * when graphs must stay off; 0 otherwise. */
int aotrun_cuda_graph_forbid_reason(const aotrun_method_runner *runner,
                                    char *reason, size_t size);

#endif /* AOTRUN_CUDA_GRAPH_POLICY_H */
