/* topk_rows.c: aotrun_fb_select_rows, the first k elements of each row by
 * rounds of block radix selections (radix_select.cu) over row pieces of at
 * most 4096 elements, then one sort of what is left (see sort_rows.h).
 *
 * A round keeps, of each piece, exactly the elements a stable sort of the
 * piece would put first (k of them), in index order: every element of a
 * row's first k is among its piece's first k, and candidates stay in index
 * order, so the final stable sort of the candidates gives what a sort of
 * the whole row gives. E.g. k = 8 of 1024: one selection round ([rows, 8]
 * left) and a sort of 8; k = 64 of 50000: 13 pieces -> 832 candidates ->
 * 64 -> sorted. */
#include <string.h>

#include "shim_lib/fallback/sort_rows.h"

/* Worth a selection round: rows too long for one block, or a k small
 * enough next to n that sorting only k pays for the extra pass. */
static int select_first(int64_t n, int64_t k) {
  if (k > AOTRUN_FB_SELECT_MAX_K) return 0;
  return n > AOTRUN_FB_BLOCK_SORT_MAX || (k <= 256 && 4 * k <= n);
}

/* One round: candidates (values + indices, contiguous [rows, *m]) of the
 * current input (`cur`: in, idx_map, n and the input side of its layout). */
static AOTITorchError round_of(aotrun_fb_temps *t,
                               const aotrun_fb_sort_rows_args *cur,
                               const aotrun_fb_sort_elems *e, void **vals,
                               int64_t **idx, int64_t *m,
                               cudaStream_t stream) {
  const int64_t piece = cur->n < AOTRUN_FB_BLOCK_SORT_MAX
                            ? cur->n
                            : AOTRUN_FB_BLOCK_SORT_MAX;
  const int64_t chunks = (cur->n + piece - 1) / piece;
  const int64_t last = cur->n - (chunks - 1) * piece;
  *m = (chunks - 1) * cur->k + (last < cur->k ? last : cur->k);
  void *iv = NULL;
  AOTITorchError err = aotrun_fb_temp_bytes(
      t, (size_t)(cur->rows * *m) * (size_t)e->elem_size, vals);
  if (!err) err = aotrun_fb_temp_bytes(t, (size_t)(cur->rows * *m) * 8, &iv);
  if (err) return err;
  *idx = iv;
  aotrun_fb_block_sort_job job;
  memset(&job, 0, sizeof job);
  job.in = cur->in;
  job.values = *vals;
  job.indices = *idx;
  job.idx_map = cur->idx_map;
  job.rows = cur->rows;
  job.n = cur->n;
  job.chunk_len = piece;
  job.chunks = chunks;
  job.k = cur->k;
  job.elems = *e;
  job.layout = cur->layout;
  aotrun_fb_rows_layout_set_contiguous(&job.layout, *m, 1);
  cudaError_t ce = aotrun_fb_block_select_rows(&job, stream);
  if (ce != cudaSuccess)
    return aotrun_shim_fail("%s: the radix selection kernel failed: %s",
                            t->op, cudaGetErrorString(ce));
  return AOTI_TORCH_SUCCESS;
}

/* Rounds while they pay, then the final sort into the caller's outputs.
 * Round i's candidates live in pool[i % 2]: when round i starts, round
 * i - 2's buffers (input of round i - 1, already queued) are released
 * stream-ordered first, so scratch stays bounded. */
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
  for (int i = 0; select_first(cur.n, cur.k) && cur.n > cur.k; i++) {
    aotrun_fb_temps *mine = &pool[i % 2];
    aotrun_fb_temps_release(mine);
    void *vals = NULL;
    int64_t *idx = NULL, m = 0;
    AOTITorchError err = round_of(mine, &cur, &e, &vals, &idx, &m, stream);
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
  if (!select_first(a->n, a->k) || a->k >= a->n)
    return aotrun_fb_sort_rows(t, a, stream);
  aotrun_fb_temps pool[2];
  aotrun_fb_temps_init(&pool[0], t->op, t->device);
  aotrun_fb_temps_init(&pool[1], t->op, t->device);
  AOTITorchError err = select_rounds(t, pool, a, stream);
  aotrun_fb_temps_release(&pool[0]);
  aotrun_fb_temps_release(&pool[1]);
  return err;
}
