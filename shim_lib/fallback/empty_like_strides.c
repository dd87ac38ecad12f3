/* empty_like_strides.c: the stride rules of torch.empty_like (c10's
 * TensorImpl::compute_non_overlapping_and_dense and ATen's
 * infer_dense_strides, re-implemented from their documented behaviour). */
#include "shim_lib/fallback/empty_like_strides.h"

#include "shim_lib/fallback/fallback_tensor.h"

int aotrun_fb_is_non_overlapping_and_dense(const int64_t *sizes,
                                           const int64_t *strides,
                                           int64_t ndim) {
  /* c10 checks is_contiguous_ first, which is true without elements. */
  for (int64_t d = 0; d < ndim; d++)
    if (sizes[d] == 0) return 1;
  if (aotrun_fb_is_contiguous(sizes, strides, ndim)) return 1;
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  /* Dims of size >= 2 by increasing stride must nest exactly; the answer
   * does not depend on how equal strides are ordered (two such dims can
   * never both match). */
  int64_t perm[AOTRUN_FB_MAX_DIMS];
  int64_t m = 0;
  for (int64_t d = 0; d < ndim; d++)
    if (sizes[d] >= 2) perm[m++] = d;
  for (int64_t i = 1; i < m; i++) /* insertion sort by stride */
    for (int64_t j = i; j > 0 && strides[perm[j]] < strides[perm[j - 1]]; j--) {
      int64_t tmp = perm[j];
      perm[j] = perm[j - 1];
      perm[j - 1] = tmp;
    }
  int64_t want = 1;
  for (int64_t i = 0; i < m; i++) {
    if (strides[perm[i]] != want) return 0;
    want *= sizes[perm[i]];
  }
  return 1;
}

/* -1: dim a goes inside dim b, 1: outside, 0: ambiguous (keep order). */
static int compare_dims(const int64_t *sizes, const int64_t *strides,
                        int64_t a, int64_t b) {
  if (strides[a] == 0 || strides[b] == 0) return 0;
  if (strides[a] < strides[b]) return -1;
  if (strides[a] > strides[b]) return 1;
  return sizes[a] > sizes[b] ? 1 : 0;
}

void aotrun_fb_infer_dense_strides(const int64_t *sizes,
                                   const int64_t *strides, int64_t ndim,
                                   int64_t *out) {
  if (ndim <= 0) return;
  if (ndim == 1) {
    out[0] = 1;
    return;
  }
  /* perm[0] is the innermost dim; starts as ndim-1, ..., 0 and is
   * insertion-sorted exactly as ATen (and TensorIterator) do it. */
  int64_t perm[AOTRUN_FB_MAX_DIMS];
  for (int64_t i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int64_t i = 1; i < ndim; i++) {
    int64_t d1 = i;
    for (int64_t j = 1; j <= i; j++) {
      int64_t d0 = i - j;
      int c = compare_dims(sizes, strides, perm[d0], perm[d1]);
      if (c > 0) {
        int64_t tmp = perm[d0];
        perm[d0] = perm[d1];
        perm[d1] = tmp;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  int64_t s = 1;
  for (int64_t i = 0; i < ndim; i++) {
    out[perm[i]] = s;
    if (sizes[perm[i]] > 1) s *= sizes[perm[i]];
  }
}

void aotrun_fb_empty_like_strides(const int64_t *sizes, const int64_t *strides,
                                  int64_t ndim, int64_t *out) {
  if (aotrun_fb_is_non_overlapping_and_dense(sizes, strides, ndim)) {
    for (int64_t d = 0; d < ndim; d++) out[d] = strides[d];
    return;
  }
  aotrun_fb_infer_dense_strides(sizes, strides, ndim, out);
}
