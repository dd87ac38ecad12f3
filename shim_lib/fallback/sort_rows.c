/* sort_rows.c: dtype -> element order, row layouts, and the choice between
 * the block path and the long path of aotrun_fb_sort_rows (sort_rows.h). */
#include "shim_lib/fallback/sort_rows.h"

#include <string.h>

int aotrun_fb_sort_elems_for(int32_t dtype, aotrun_fb_sort_elems *e) {
  memset(e, 0, sizeof *e);
  switch (dtype) {
    case 0: case 11: /* uint8, bool */
      e->elem_size = 1; e->kind = AOTRUN_FB_KIND_UNSIGNED; return 1;
    case 27: e->elem_size = 2; e->kind = AOTRUN_FB_KIND_UNSIGNED; return 1;
    case 28: e->elem_size = 4; e->kind = AOTRUN_FB_KIND_UNSIGNED; return 1;
    case 29: e->elem_size = 8; e->kind = AOTRUN_FB_KIND_UNSIGNED; return 1;
    case 1: e->elem_size = 1; e->kind = AOTRUN_FB_KIND_SIGNED; return 1;
    case 2: e->elem_size = 2; e->kind = AOTRUN_FB_KIND_SIGNED; return 1;
    case 3: e->elem_size = 4; e->kind = AOTRUN_FB_KIND_SIGNED; return 1;
    case 4: e->elem_size = 8; e->kind = AOTRUN_FB_KIND_SIGNED; return 1;
    case 5: /* float16 */
      e->elem_size = 2; e->kind = AOTRUN_FB_KIND_FLOAT; e->inf_bits = 0x7c00u;
      return 1;
    case 15: /* bfloat16 */
      e->elem_size = 2; e->kind = AOTRUN_FB_KIND_FLOAT; e->inf_bits = 0x7f80u;
      return 1;
    case 6:
      e->elem_size = 4; e->kind = AOTRUN_FB_KIND_FLOAT;
      e->inf_bits = 0x7f800000u;
      return 1;
    case 7:
      e->elem_size = 8; e->kind = AOTRUN_FB_KIND_FLOAT;
      e->inf_bits = 0x7ff0000000000000ull;
      return 1;
    default: return 0;
  }
}

void aotrun_fb_rows_layout_of(const int64_t *sizes, const int64_t *in_strides,
                              const int64_t *out_strides, int64_t ndim,
                              int64_t dim, aotrun_fb_rows_layout *l) {
  memset(l, 0, sizeof *l);
  l->in_dim_stride = in_strides[dim];
  l->out_dim_stride = out_strides[dim];
  for (int64_t d = 0; d < ndim; d++) {
    if (d == dim || sizes[d] == 1) continue;
    int32_t m = l->ndim;
    /* Merge into the previous (outer) kept dim when both layouts nest. */
    if (m > 0 && l->in_strides[m - 1] == in_strides[d] * sizes[d] &&
        l->out_strides[m - 1] == out_strides[d] * sizes[d]) {
      l->sizes[m - 1] *= sizes[d];
      l->in_strides[m - 1] = in_strides[d];
      l->out_strides[m - 1] = out_strides[d];
      continue;
    }
    l->sizes[m] = sizes[d];
    l->in_strides[m] = in_strides[d];
    l->out_strides[m] = out_strides[d];
    l->ndim = m + 1;
  }
}

void aotrun_fb_rows_layout_contiguous(int64_t rows, int64_t in_len,
                                      int64_t out_len,
                                      aotrun_fb_rows_layout *l) {
  memset(l, 0, sizeof *l);
  l->in_dim_stride = 1;
  l->out_dim_stride = 1;
  if (rows == 1) return;
  l->ndim = 1;
  l->sizes[0] = rows;
  l->in_strides[0] = in_len;
  l->out_strides[0] = out_len;
}

void aotrun_fb_rows_layout_set_contiguous(aotrun_fb_rows_layout *l,
                                          int64_t len, int out) {
  int64_t s = len;
  for (int32_t d = l->ndim - 1; d >= 0; d--) {
    if (out) l->out_strides[d] = s;
    else l->in_strides[d] = s;
    s *= l->sizes[d];
  }
  if (out) l->out_dim_stride = 1;
  else l->in_dim_stride = 1;
}

AOTITorchError aotrun_fb_sort_rows(aotrun_fb_temps *t,
                                   const aotrun_fb_sort_rows_args *a,
                                   cudaStream_t stream) {
  if (a->rows <= 0 || a->n <= 0 || a->k <= 0) return AOTI_TORCH_SUCCESS;
  if (a->k > a->n)
    return aotrun_shim_fail("%s: internal error: sorting %lld of %lld", t->op,
                            (long long)a->k, (long long)a->n);
  aotrun_fb_sort_elems e;
  if (!aotrun_fb_sort_elems_for(a->dtype, &e))
    return aotrun_shim_fail("%s: internal error: dtype %d cannot be sorted",
                            t->op, (int)a->dtype);
  e.order = a->order;
  e.descending = a->descending;
  if (a->n > AOTRUN_FB_BLOCK_SORT_MAX)
    return aotrun_fb_sort_rows_long(t, a, &e, stream);
  aotrun_fb_block_sort_job job;
  memset(&job, 0, sizeof job);
  job.in = a->in;
  job.values = a->values;
  job.indices = a->indices;
  job.idx_map = a->idx_map;
  job.rows = a->rows;
  job.n = a->n;
  job.chunk_len = a->n;
  job.chunks = 1;
  job.k = a->k;
  job.elems = e;
  job.layout = a->layout;
  cudaError_t err = aotrun_fb_block_sort_rows(&job, stream);
  if (err != cudaSuccess)
    return aotrun_shim_fail("%s: the block sort kernel failed: %s", t->op,
                            cudaGetErrorString(err));
  return AOTI_TORCH_SUCCESS;
}
