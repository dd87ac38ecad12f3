/*
 * dim_ranges.h: the check every call's inputs pass against the method's
 * dynamic-dim ranges and relations (manifest "symbols" and input "dims",
 * docs/program-format.md), before anything runs, graphs on or off.
 */
#ifndef AOTRUN_DIM_RANGES_H
#define AOTRUN_DIM_RANGES_H

#include <stddef.h>

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/program.h"

/* inputs[i] must already have the declared rank and non-negative sizes
 * (method_inputs.c checks those first). Each dim with an expression binds
 * or must agree with its symbol's value, which must lie in the symbol's
 * range. Errors (InvalidArgument) name the input, dim, size and range:
 *   input 0 (x) has size 2000 in dim 0 (symbol s0), outside its range
 *   [1, 1024]
 * A method without "symbols" costs nothing. */
aotrun_status aotrun_dim_ranges_check(const aotrun_program_method *m,
                                      const DLTensor *inputs,
                                      size_t num_inputs, aotrun_error *err);

#endif /* AOTRUN_DIM_RANGES_H */
