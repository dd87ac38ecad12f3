/* topk_rows.c: aotrun_fb_select_rows, the first k elements of long rows by
 * rounds of block sorts over row pieces (see sort_rows.h). One round reads
 * every element once and keeps at most k of each 4096, so a 50000-element
 * row with k = 64 needs one round of 13 pieces and a final sort of 832
 * candidates, instead of a device-wide radix sort of everything. */
#include <string.h>

#include "shim_lib/fallback/sort_rows.h"

/* One round: candidates (values + indices, contiguous [rows, *m]) of the
 * current input (`in`, `map`, `n`, layout `l`'s input side). */
static AOTITorchError round_of(aotrun_fb_temps *t,
                               const aotrun_fb_sort_rows_args *a,
                               const aotrun_fb_sort_elems *e, const void *in,
                               const int64_t *map, int64_t n,
                               const aotrun_fb_rows_layout *l, void **vals,
                               int64_t **idx, int64_t *m,
                               cudaStream_t stream) {
  const int64_t piece = AOTRUN_FB_BLOCK_SORT_MAX;
  const int64_t chunks = (n + piece - 1) / piece;
  const int64_t last = n - (chunks - 1) * piece;
  *m = (chunks - 1) * a->k + (last < a->k ? last : a->k);
  void *iv = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(
      t, (size_t)(a->rows * *m) * (size_t)e->elem_size, vals);
  if (!err) err = aotrun_fb_temp_bytes(t, (size_t)(a->rows * *m) * 8, &iv);
  if (err) return err;
  *idx = iv;
  aotrun_fb_block_sort_job job;
  memset(&job, 0, sizeof job);
  job.in = in;
  job.values = *vals;
  job.indices = *idx;
  job.idx_map = map;
  job.rows = a->rows;
  job.n = n;
  job.chunk_len = piece;
  job.chunks = chunks;
  job.k = a->k;
  job.elems = *e;
  job.layout = *l;
  aotrun_fb_rows_layout_set_contiguous(&job.layout, *m, 1);
  cudaError_t ce = aotrun_fb_block_sort_rows(&job, stream);
  if (ce != cudaSuccess)
    return aotrun_shim_fail("%s: the block sort of row pieces failed: %s",
                            t->op, cudaGetErrorString(ce));
  return AOTI_TORCH_SUCCESS;
}

/* Rounds until a row fits one block, then the final block sort into the
 * caller's outputs. Round i's candidates live in pool[i % 2]: when round i
 * starts, round i - 2's buffers (input of round i - 1, already queued) are
 * released stream-ordered first, so scratch stays bounded. */
static AOTITorchError select_rounds(aotrun_fb_temps *t, aotrun_fb_temps *pool,
                                    const aotrun_fb_sort_rows_args *a,
                                    cudaStream_t stream) {
  aotrun_fb_sort_elems e;
  if (!aotrun_fb_sort_elems_for(a->dtype, &e))
    return aotrun_shim_fail("%s: internal error: dtype %d cannot be sorted",
                            t->op, (int)a->dtype);
  e.order = a->order;
  e.descending = a->descending;
  aotrun_fb_sort_rows_args cur = *a;
  for (int i = 0; cur.n > AOTRUN_FB_BLOCK_SORT_MAX; i++) {
    aotrun_fb_temps *mine = &pool[i % 2];
    aotrun_fb_temps_release(mine);
    void *vals = NULL;
    int64_t *idx = NULL, m = 0;
    AOTITorchError err = round_of(mine, a, &e, cur.in, cur.idx_map, cur.n,
                                  &cur.layout, &vals, &idx, &m, stream);
    if (err) return err;
    cur.in = vals;
    cur.idx_map = idx;
    cur.n = m;
    aotrun_fb_rows_layout_set_contiguous(&cur.layout, m, 0);
  }
  return aotrun_fb_sort_rows(t, &cur, stream);
}

AOTITorchError aotrun_fb_select_rows(aotrun_fb_temps *t,
                                     const aotrun_fb_sort_rows_args *a,
                                     cudaStream_t stream) {
  if (a->rows <= 0 || a->n <= 0 || a->k <= 0) return AOTI_TORCH_SUCCESS;
  if (a->n <= AOTRUN_FB_BLOCK_SORT_MAX || a->k > AOTRUN_FB_SELECT_MAX_K)
    return aotrun_fb_sort_rows(t, a, stream);
  aotrun_fb_temps pool[2];
  aotrun_fb_temps_init(&pool[0], t->op, t->device);
  aotrun_fb_temps_init(&pool[1], t->op, t->device);
  AOTITorchError err = select_rounds(t, pool, a, stream);
  aotrun_fb_temps_release(&pool[0]);
  aotrun_fb_temps_release(&pool[1]);
  return err;
}
