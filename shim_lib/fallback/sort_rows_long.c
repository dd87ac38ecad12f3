/* sort_rows_long.c: the long path of aotrun_fb_sort_rows: all rows in one
 * cub::DeviceRadixSort (the shared helper of radix_sort.h).
 *
 * Keys are (row << element bits) | element key, sorted on exactly the bits
 * they use, carrying each element's work position p = r * n + j; being
 * stable, equal elements of a row keep their index order. When the row
 * bits do not fit next to a 64-bit element key, two stable passes do the
 * same (LSD): by element key first, then by row. */
#include <string.h>

#include "shim_lib/fallback/sort_rows.h"

static AOTITorchError cuda_fail(const aotrun_fb_temps *t, const char *what,
                                cudaError_t e) {
  return aotrun_shim_fail("%s: %s failed: %s", t->op, what,
                          cudaGetErrorString(e));
}

/* Two scratch buffers of `count` elements of `bytes` each. */
static AOTITorchError two_buffers(aotrun_fb_temps *t, int64_t count, int bytes,
                                  void **a, void **b) {
  size_t size = (size_t)count * (size_t)bytes;
  AOTITorchError err = aotrun_fb_temp_bytes(t, size, a);
  if (!err) err = aotrun_fb_temp_bytes(t, size, b);
  return err;
}

static AOTITorchError sort_pairs(aotrun_fb_temps *t, const char *what,
                                 const void *kin, void *kout, int key_bytes,
                                 const void *vin, void *vout, int val_bytes,
                                 int64_t n, int end_bit, cudaStream_t stream) {
  aotrun_fb_sort_pairs_args s;
  memset(&s, 0, sizeof s);
  s.keys_in = kin;
  s.keys_out = kout;
  s.vals_in = vin;
  s.vals_out = vout;
  s.key_bytes = key_bytes;
  s.val_bytes = val_bytes;
  s.n = n;
  s.end_bit = end_bit;
  return aotrun_fb_sort(t, what, &s, stream);
}

/* Rows sorted by (row, key) in one pass, or by key then row in two. */
static AOTITorchError run(aotrun_fb_temps *t, aotrun_fb_long_sort_job *job,
                          cudaStream_t stream) {
  const int64_t total = job->rows * job->n;
  const int elem_bits = 8 * job->elems.elem_size;
  const int row_bits =
      job->rows > 1 ? aotrun_fb_key_bits((uint64_t)(job->rows - 1)) : 0;
  const int two_pass = elem_bits + row_bits > 64;
  job->pay_bytes = (uint64_t)total <= (1ull << 32) ? 4 : 8;
  job->row_bits = two_pass ? 0 : row_bits;
  const int end_bit = elem_bits + job->row_bits;
  job->key_bytes = end_bit <= 32 ? 4 : 8;

  void *keys, *skeys, *pay, *spay;
  AOTITorchError err = two_buffers(t, total, job->key_bytes, &keys, &skeys);
  if (!err) err = two_buffers(t, total, job->pay_bytes, &pay, &spay);
  if (err) return err;
  cudaError_t e = aotrun_fb_long_sort_keys(job, keys, pay, stream);
  if (e != cudaSuccess) return cuda_fail(t, "the sort-key kernel", e);
  err = sort_pairs(t, "the row keys", keys, skeys, job->key_bytes, pay, spay,
                   job->pay_bytes, total, end_bit, stream);
  if (err) return err;
  if (!two_pass) {
    e = aotrun_fb_long_sort_scatter(job, skeys, spay, NULL, stream);
    return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                            : cuda_fail(t, "the sorted-element scatter", e);
  }
  /* Second pass: stable by row, carrying positions in the first order. */
  const int rkey_bytes = (uint64_t)job->rows <= (1ull << 32) ? 4 : 8;
  void *rkey, *srkey, *perm, *sperm;
  err = two_buffers(t, total, rkey_bytes, &rkey, &srkey);
  if (!err) err = two_buffers(t, total, job->pay_bytes, &perm, &sperm);
  if (err) return err;
  e = aotrun_fb_long_sort_row_keys(job, spay, rkey, rkey_bytes, perm, stream);
  if (e != cudaSuccess) return cuda_fail(t, "the row-key kernel", e);
  err = sort_pairs(t, "the rows", rkey, srkey, rkey_bytes, perm, sperm,
                   job->pay_bytes, total, row_bits, stream);
  if (err) return err;
  e = aotrun_fb_long_sort_scatter(job, skeys, spay, sperm, stream);
  return e == cudaSuccess ? AOTI_TORCH_SUCCESS
                          : cuda_fail(t, "the sorted-element scatter", e);
}

AOTITorchError aotrun_fb_sort_rows_long(aotrun_fb_temps *t,
                                        const aotrun_fb_sort_rows_args *a,
                                        const aotrun_fb_sort_elems *e,
                                        cudaStream_t stream) {
  if (a->rows <= 0 || a->n <= 0 || a->k <= 0) return AOTI_TORCH_SUCCESS;
  aotrun_fb_long_sort_job job;
  memset(&job, 0, sizeof job);
  job.in = a->in;
  job.values = a->values;
  job.indices = a->indices;
  job.idx_map = a->idx_map;
  job.rows = a->rows;
  job.n = a->n;
  job.k = a->k;
  job.elems = *e;
  job.layout = a->layout;
  /* Own scratch, released (stream-ordered) before returning, so callers
   * that sort several times stay within their scratch budget. */
  aotrun_fb_temps local;
  aotrun_fb_temps_init(&local, t->op, t->device);
  AOTITorchError err = run(&local, &job, stream);
  aotrun_fb_temps_release(&local);
  return err;
}
