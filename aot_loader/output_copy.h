/*
 * output_copy.h: one output's copy into the caller's tensor, as something
 * other than the method runner makes it (a CUDA graph's copy node): the
 * runner plans it (aotrun_method_runner_plan_output_copies), the graph
 * copies.
 */
#ifndef AOTRUN_OUTPUT_COPY_H
#define AOTRUN_OUTPUT_COPY_H

#include <stddef.h>

/* `bytes` bytes from `src` to `dst`, both device memory of the method's
 * device. direct 0: not such a copy (a kept output, host memory on either
 * side, a strided source, no bytes): the runner's copy_outputs must make
 * it. */
typedef struct aotrun_output_copy {
  const void *src;
  void *dst;
  size_t bytes;
  int direct;
} aotrun_output_copy;

#endif /* AOTRUN_OUTPUT_COPY_H */
