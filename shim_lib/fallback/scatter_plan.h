/*
 * scatter_plan.h: one call of the scatter family (scatter src / value,
 * scatter_reduce), checked by scatter_args.c without CUDA calls, and the
 * steps that run it (scatter_run.c, scatter_engine.c).
 *
 * Semantics (ATen's scatter / scatter_reduce.two): out = self (a copy
 * unless out is self); then for every position p of index's shape, in
 * row-major order, out[p with dim replaced by index[p]] receives src[p]
 * (or the value): the last write wins, or the values are reduced.
 */
#ifndef AOTRUN_FALLBACK_SCATTER_PLAN_H
#define AOTRUN_FALLBACK_SCATTER_PLAN_H

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/fallback_temp.h"
#include "shim_lib/fallback/fallback_tensor.h"
#include "shim_lib/fallback/scatter_kernels.h"

/* What happens to a target. */
typedef enum aotrun_fb_scatter_kind {
  AOTRUN_FB_SCATTER_SRC = 0, /* last write wins */
  AOTRUN_FB_SCATTER_VALUE,   /* the value (every writer writes the same) */
  AOTRUN_FB_SCATTER_SUM,
  AOTRUN_FB_SCATTER_PROD,
  AOTRUN_FB_SCATTER_MEAN,
  AOTRUN_FB_SCATTER_AMAX,
  AOTRUN_FB_SCATTER_AMIN,
} aotrun_fb_scatter_kind;

/* The arguments as the ABI passes them. */
typedef struct aotrun_fb_scatter_call {
  AtenTensorHandle out, self, index, src; /* src unused for a value */
  int64_t dim;
  int has_src;        /* 0: scatter.value */
  double value;       /* scatter.value */
  int has_reduce;     /* scatter_reduce.two */
  const char *reduce; /* "sum", "prod", "mean", "amax", "amin" */
  int32_t include_self;
} aotrun_fb_scatter_call;

typedef struct aotrun_fb_scatter_plan {
  const char *op;
  aotrun_fb_tensor out, self, index, src; /* src: only when has_src */
  int has_src;
  aotrun_fb_scatter_kind kind;
  int include_self;   /* scatter_reduce; 1 otherwise */
  int64_t dim;        /* wrapped into [0, max(self.ndim, 1)) */
  int in_place;       /* out is self */
  int64_t index_numel;
  uint64_t value[2];  /* scatter.value: the element's bits */
} aotrun_fb_scatter_plan;

/* Checks the call like ATen (dtypes, dims, sizes, devices, overlap, the
 * reduce name, the value's conversion) and fills *p. No CUDA calls. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_scatter_plan_build(
    const char *op, const aotrun_fb_scatter_call *call,
    aotrun_fb_scatter_plan *p);

/* The bits of `value` converted to dtype the way c10::Scalar::to<T>() does
 * (rounding double -> float -> half/bfloat16; an integer out of range, or a
 * finite float beyond the dtype's range, is an overflow error). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_scalar_to_bits(const char *op,
                                                         double value,
                                                         int32_t dtype,
                                                         uint64_t bits[2]);

/* Kernel view of the plan's items (see aotrun_fb_scatter_items). Only for
 * index_numel > 0. */
AOTRUN_FB_HIDDEN void aotrun_fb_scatter_items_build(
    const aotrun_fb_scatter_plan *p, aotrun_fb_scatter_items *it);

/* out = self (nothing when in place). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_scatter_copy_self(
    const aotrun_fb_scatter_plan *p, aotrun_fb_temps *temps,
    cudaStream_t stream);

/* Runs the whole plan on the current device and stream. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_scatter_run(
    const aotrun_fb_scatter_plan *p);

/* The sort engine: groups the items by target with the shared radix sort
 * and folds each run in index order (reduce: AOTRUN_FB_SEG_*). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_scatter_sorted(
    const aotrun_fb_scatter_plan *p, const aotrun_fb_scatter_items *it,
    int32_t reduce, const aotrun_fb_scatter_report *r,
    aotrun_fb_temps *temps, cudaStream_t stream);

#endif /* AOTRUN_FALLBACK_SCATTER_PLAN_H */
