/* tensor_layout.c: output strides, broadcasting and dim merging (see
 * tensor_layout.h). The two permutation sorts follow torch 2.11's
 * torch/_prims_common (meta functions) and ATen's infer_dense_strides. */
#include "shim_lib/fallback/tensor_layout.h"

/* ge() of compute_elementwise_output_logical_to_physical_perm (a, b >= 0). */
static int meta_ge(int64_t a, int64_t b) {
  if (b == 0) return 1;
  if (a == 0) return 0;
  return a >= b || a % b == 0;
}

/* The meta's should_swap: > 0 when dim a must move outside dim b, < 0 when
 * the order is right, 0 when ambiguous (a 0 stride, or equal strides and
 * sizes that do not decide). */
static int meta_should_swap(const int64_t *sizes, const int64_t *strides,
                            int64_t a, int64_t b) {
  int64_t sa = strides[a], sb = strides[b];
  if (sa == 0 || sb == 0) return 0;
  if (sa == sb) return meta_ge(sizes[b], sizes[a]) ? 0 : 1;
  if (meta_ge(sb, sa)) return -1;
  if (meta_ge(sa, sb)) return 1;
  return 0;
}

static int dense_should_swap(const int64_t *sizes, const int64_t *strides,
                             int64_t a, int64_t b) {
  int64_t sa = strides[a], sb = strides[b];
  if (sa == 0 || sb == 0) return 0;
  if (sa < sb) return -1;
  if (sa > sb) return 1;
  return sizes[a] > sizes[b] ? 1 : 0;
}

/* The insertion sort both rules use: perm starts innermost-first
 * (ndim-1, ..., 0); ambiguous comparisons (0) neither swap nor stop. */
static void sort_perm(const int64_t *sizes, const int64_t *strides,
                      int64_t ndim, int meta, int64_t *perm) {
  for (int64_t i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int64_t i = 1; i < ndim; i++) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; dim0--) {
      int c = meta ? meta_should_swap(sizes, strides, perm[dim0], perm[dim1])
                   : dense_should_swap(sizes, strides, perm[dim0], perm[dim1]);
      if (c > 0) {
        int64_t t = perm[dim0];
        perm[dim0] = perm[dim1];
        perm[dim1] = t;
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
}

/* Dense strides laid out innermost-first along perm. */
static void strides_from_perm(const int64_t *sizes, const int64_t *perm,
                              int64_t ndim, int64_t *out) {
  int64_t cur = 1;
  for (int64_t i = 0; i < ndim; i++) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
}

static void contiguous(const int64_t *sizes, int64_t ndim, int64_t *out) {
  int64_t cur = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    out[d] = cur;
    if (sizes[d] > 1) cur *= sizes[d];
  }
}

/* torch._prims_common.is_contiguous (eager: numel < 2 is contiguous). */
static int meta_is_contiguous(const int64_t *sizes, const int64_t *strides,
                              int64_t ndim) {
  int64_t numel = 1;
  for (int64_t d = 0; d < ndim; d++) numel *= sizes[d];
  if (numel < 2) return 1;
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return 0;
    expected *= sizes[d];
  }
  return 1;
}

/* is_channels_last_contiguous_2d (4-D only; no numel shortcut). */
static int meta_is_channels_last(const int64_t *sizes, const int64_t *strides,
                                 int64_t ndim) {
  static const int order[4] = {1, 3, 2, 0};
  if (ndim != 4) return 0;
  int64_t expected = 1;
  for (int i = 0; i < 4; i++) {
    int64_t len = sizes[order[i]];
    if (len == 1) continue;
    if (strides[order[i]] != expected) return 0;
    expected *= len;
  }
  return 1;
}

void aotrun_fb_elementwise_strides(const int64_t *sizes,
                                   const int64_t *strides, int64_t ndim,
                                   int64_t *out) {
  int64_t perm[AOTRUN_FB_MAX_DIMS];
  if (ndim <= 1) {
    if (ndim == 1) out[0] = 1;
    return;
  }
  int c = meta_is_contiguous(sizes, strides, ndim);
  int cl = meta_is_channels_last(sizes, strides, ndim);
  if (c && !cl) {
    contiguous(sizes, ndim, out);
    return;
  }
  if (cl && !c) {
    /* logical-to-physical [0, 2, 3, 1], i.e. innermost-first [1, 3, 2, 0] */
    static const int64_t nhwc[4] = {1, 3, 2, 0};
    strides_from_perm(sizes, nhwc, 4, out);
    return;
  }
  sort_perm(sizes, strides, ndim, 1, perm);
  strides_from_perm(sizes, perm, ndim, out);
}

int aotrun_fb_is_non_overlapping_and_dense(const int64_t *sizes,
                                           const int64_t *strides,
                                           int64_t ndim) {
  /* c10 checks is_contiguous first, which holds without elements. */
  for (int64_t d = 0; d < ndim; d++)
    if (sizes[d] == 0) return 1;
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  /* Dims of size >= 2 by increasing stride; smaller dims do not matter. */
  int64_t perm[AOTRUN_FB_MAX_DIMS], n = 0;
  for (int64_t d = 0; d < ndim; d++) {
    if (sizes[d] < 2) continue;
    int64_t j = n++;
    while (j > 0 && strides[perm[j - 1]] > strides[d]) {
      perm[j] = perm[j - 1];
      j--;
    }
    perm[j] = d;
  }
  int64_t require = 1;
  for (int64_t i = 0; i < n; i++) {
    if (strides[perm[i]] != require) return 0;
    require *= sizes[perm[i]];
  }
  return 1;
}

void aotrun_fb_infer_dense_strides(const int64_t *sizes,
                                   const int64_t *strides, int64_t ndim,
                                   int64_t *out) {
  if (ndim <= 0) return;
  if (ndim == 1) {
    out[0] = 1;
    return;
  }
  int64_t perm[AOTRUN_FB_MAX_DIMS];
  sort_perm(sizes, strides, ndim, 0, perm);
  strides_from_perm(sizes, perm, ndim, out);
}

void aotrun_fb_empty_like_strides(const int64_t *sizes, const int64_t *strides,
                                  int64_t ndim, int64_t *out) {
  if (aotrun_fb_is_non_overlapping_and_dense(sizes, strides, ndim)) {
    for (int64_t d = 0; d < ndim; d++) out[d] = strides[d];
    return;
  }
  aotrun_fb_infer_dense_strides(sizes, strides, ndim, out);
}

int aotrun_fb_broadcast_into(int64_t *nd, int64_t *sizes, const int64_t *b,
                             int64_t nb) {
  if (nb > AOTRUN_FB_MAX_DIMS) return -1;
  int64_t n = *nd > nb ? *nd : nb;
  int64_t out[AOTRUN_FB_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = i - (n - *nd), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? sizes[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) return -1;
    out[i] = sa == 1 ? sb : sa;
  }
  for (int64_t i = 0; i < n; i++) sizes[i] = out[i];
  *nd = n;
  return 0;
}

int aotrun_fb_expand_strides(const int64_t *sizes, const int64_t *strides,
                             int64_t ndim, const int64_t *to, int64_t to_ndim,
                             int64_t *out) {
  if (ndim > to_ndim) return -1;
  for (int64_t i = 0; i < to_ndim; i++) {
    int64_t j = i - (to_ndim - ndim);
    if (j < 0 || sizes[j] == 1) {
      out[i] = 0;
    } else if (sizes[j] == to[i]) {
      out[i] = strides[j];
    } else {
      return -1;
    }
  }
  return 0;
}

void aotrun_fb_collapse_dims(int32_t *nd, int64_t *sizes,
                             int64_t *const *strides, int nops) {
  int32_t n = 0;
  for (int32_t d = 0; d < *nd; d++) {
    if (sizes[d] == 1) continue;
    int merge = n > 0;
    for (int k = 0; k < nops && merge; k++)
      merge = strides[k][n - 1] == strides[k][d] * sizes[d];
    if (merge) {
      sizes[n - 1] *= sizes[d];
      for (int k = 0; k < nops; k++) strides[k][n - 1] = strides[k][d];
      continue;
    }
    sizes[n] = sizes[d];
    for (int k = 0; k < nops; k++) strides[k][n] = strides[k][d];
    n++;
  }
  *nd = n;
}
