/*
 * sort_plan.h: the plan of one sort / sort_stable / topk call, built and
 * checked by sort_args.c without CUDA calls (so argument errors are
 * reported on machines without a GPU too), then run by sort.c / topk.c.
 */
#ifndef AOTRUN_FALLBACK_SORT_PLAN_H
#define AOTRUN_FALLBACK_SORT_PLAN_H

#include "shim_lib/fallback/fallback_tensor.h"
#include "shim_lib/fallback/sort_kernels.h"

typedef struct aotrun_fb_sort_plan {
  aotrun_fb_tensor self;
  aotrun_fb_sort_elems elems; /* elem_size, kind, inf_bits of self's dtype */
  int64_t dim;   /* wrapped; 0 for a 0-d self */
  int64_t n;     /* elements along dim (1 for a 0-d self) */
  int64_t rows;  /* numel / n; 0 when self has no elements */
  int64_t k;     /* outputs per row: n for sort, k for topk */
  /* The outputs' sizes (self's, with k along dim) and strides. */
  int64_t out_sizes[AOTRUN_FB_MAX_DIMS];
  int64_t out_strides[AOTRUN_FB_MAX_DIMS];
  int64_t out_numel;
} aotrun_fb_sort_plan;

/* sort / sort_stable: outputs strided like torch.empty_like(self). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_sort_plan_build(
    const char *op, AtenTensorHandle self, int64_t dim,
    const AtenTensorHandle *ret0, const AtenTensorHandle *ret1,
    aotrun_fb_sort_plan *p);

/* topk: 0 <= k <= n; contiguous outputs. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_topk_plan_build(
    const char *op, AtenTensorHandle self, int64_t k, int64_t dim,
    const AtenTensorHandle *ret0, const AtenTensorHandle *ret1,
    aotrun_fb_sort_plan *p);

/* The plan's two outputs (values in self's dtype, int64 indices) on self's
 * device, new references; on failure nothing is left allocated. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_sort_outputs_new(
    const char *op, const aotrun_fb_sort_plan *p, AtenTensorHandle *values,
    AtenTensorHandle *indices, void **values_data, int64_t **indices_data);

/* Where the rows of self are and where they go in the outputs. */
AOTRUN_FB_HIDDEN void aotrun_fb_sort_plan_layout(const aotrun_fb_sort_plan *p,
                                                 aotrun_fb_rows_layout *l);

#endif /* AOTRUN_FALLBACK_SORT_PLAN_H */
