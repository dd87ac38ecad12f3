/*
 * cli_demo.h: the pieces of `aotrun demo` shared by its CPU part
 * (cli_demo.c) and its CUDA part (cli_demo_cuda.c).
 */
#ifndef AOTRUN_CLI_DEMO_H
#define AOTRUN_CLI_DEMO_H

#include <stddef.h>

#include "plugin_api/cli.h"

/* The backend the CUDA part runs on. */
#define CLI_DEMO_CUDA_BACKEND "cuda"

/* An example program directory: $env, else <binary dir>/dir_name, else
 * <binary>.runfiles/aotrun/runfiles; NULL when none exists. */
const char *cli_demo_find_example(const char *env, const char *dir_name,
                                  const char *runfiles, char *buf,
                                  size_t size);

/* Generated inputs for the session's method (every symbolic dim 2, small
 * deterministic values), prepared into t (outputs allocated) and printed.
 * Returns a CLI exit code. */
int cli_demo_inputs(const cli_session *s, cli_tensors *t);

/* Whether the CUDA part can run: the cuda backend among the loaded plugins
 * and its is_available answer. */
typedef struct cli_demo_cuda_probe {
  int loaded, available;
  char reason[256]; /* why not available (empty when it is) */
} cli_demo_cuda_probe;

void cli_demo_cuda_probe_registry(const aotrun_registry *r,
                                  cli_demo_cuda_probe *out);

/* The CUDA part: with the backend available, runs the CUDA example on it
 * (inputs, outputs compared with host_ref, the CPU part's tensors, then
 * latency without and with CUDA graphs); otherwise prints one line saying
 * what is missing and how to run it on a GPU. Returns a CLI exit code. */
int cli_demo_cuda(const cli_options *opts, const cli_demo_cuda_probe *probe,
                  const cli_tensors *host_ref);

#endif /* AOTRUN_CLI_DEMO_H */
