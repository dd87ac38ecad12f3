// sort_keys.cuh: element bits <-> unsigned radix keys whose ascending
// order is the element order of aotrun_fb_sort_elems (ATen's orders, see
// sort_kernels.h), and the row/element addressing of a sort job. Device
// code shared by segmented_sort.cu and sort_keys.cu.
//
// Floats: CUB's float radix traits flip every bit of a negative value and
// only the sign bit of a positive one (sign-magnitude to two's order), so
// -NaN < -inf < ... < +inf < +NaN; its digit extractor then maps the key of
// -0.0 onto +0.0's (radix_rank_sort_operations.cuh, ProcessFloatMinusZero),
// which makes them equal (stable: input order). We sort plain unsigned keys
// with the same transform done here. ATen's topk instead maps every NaN to
// the largest key and keeps -0.0 < +0.0 (TensorTopK's convert()).
//
// Descending sorts sort the complemented key ascending: a stable ascending
// sort of ~key is a stable descending sort of key.
#ifndef AOTRUN_FALLBACK_SORT_KEYS_CUH
#define AOTRUN_FALLBACK_SORT_KEYS_CUH

#include <stdint.h>

#include "shim_lib/fallback/sort_kernels.h"

namespace aotrun_sort {

// Element bits and keys are handled in T: unsigned int for elements of up
// to 4 bytes (fewer registers in the block sort), unsigned long long for 8.

// All-ones in the low `bytes` * 8 bits.
template <typename T>
__device__ __forceinline__ T low_mask(int bytes) {
  return bytes == static_cast<int>(sizeof(T)) ? ~T(0)
                                               : ((T(1) << (8 * bytes)) - 1);
}

template <typename T>
__device__ __forceinline__ T load_bits(const void *base, int64_t off,
                                       int bytes) {
  switch (bytes) {
    case 1: return static_cast<const uint8_t *>(base)[off];
    case 2: return static_cast<const uint16_t *>(base)[off];
    case 4: return static_cast<T>(static_cast<const uint32_t *>(base)[off]);
    default: return static_cast<T>(static_cast<const uint64_t *>(base)[off]);
  }
}

template <typename T>
__device__ __forceinline__ void store_bits(void *base, int64_t off, int bytes,
                                           T v) {
  switch (bytes) {
    case 1: static_cast<uint8_t *>(base)[off] = uint8_t(v); break;
    case 2: static_cast<uint16_t *>(base)[off] = uint16_t(v); break;
    case 4: static_cast<uint32_t *>(base)[off] = uint32_t(v); break;
    default: static_cast<uint64_t *>(base)[off] = uint64_t(v); break;
  }
}

// The key of element bits u (ascending key order = ascending element order,
// then complemented for a descending sort). Only the low 8 * elem_size bits
// are ever set.
template <typename T>
__device__ __forceinline__ T key_of(T u, const aotrun_fb_sort_elems &e) {
  const T all = low_mask<T>(e.elem_size);
  const T sign = T(1) << (8 * e.elem_size - 1);
  T k;
  if (e.kind == AOTRUN_FB_KIND_UNSIGNED) {
    k = u;
  } else if (e.kind == AOTRUN_FB_KIND_SIGNED) {
    k = u ^ sign;
  } else if (e.order != AOTRUN_FB_ORDER_SORT &&
             (u & ~sign) > static_cast<T>(e.inf_bits)) {
    k = all;  // any NaN: the largest key
  } else {
    if (e.order != AOTRUN_FB_ORDER_TOPK && u == sign) u = 0;  // -0.0 == +0.0
    k = (u & sign) ? (~u & all) : (u | sign);
  }
  return e.descending ? (~k & all) : k;
}

// True when key (as produced by key_of) does not determine the element's
// bits: then they must be read back from the input. That is +-0.0 where
// they share a key, and NaN where every NaN shares one.
template <typename T>
__device__ __forceinline__ bool key_is_lossy(T key,
                                             const aotrun_fb_sort_elems &e) {
  if (e.kind != AOTRUN_FB_KIND_FLOAT) return false;
  const T all = low_mask<T>(e.elem_size);
  const T sign = T(1) << (8 * e.elem_size - 1);
  if (e.descending) key = ~key & all;
  if (e.order != AOTRUN_FB_ORDER_SORT && key == all) return true;
  return e.order != AOTRUN_FB_ORDER_TOPK && key == sign;
}

// Inverse of key_of for keys that are not lossy.
template <typename T>
__device__ __forceinline__ T bits_of(T key, const aotrun_fb_sort_elems &e) {
  const T all = low_mask<T>(e.elem_size);
  const T sign = T(1) << (8 * e.elem_size - 1);
  if (e.descending) key = ~key & all;
  if (e.kind == AOTRUN_FB_KIND_UNSIGNED) return key;
  if (e.kind == AOTRUN_FB_KIND_SIGNED) return key ^ sign;
  return (key & sign) ? (key & ~sign) : (~key & all);
}

// Offset (in elements) of row r's first element: r unravelled row-major
// over the layout's sizes, dotted with `strides`.
__device__ __forceinline__ int64_t row_offset(int64_t r,
                                              const aotrun_fb_rows_layout &l,
                                              const int64_t *strides) {
  int64_t off = 0;
  for (int d = l.ndim - 1; d >= 0; d--) {
    const int64_t s = l.sizes[d];
    const int64_t q = r / s;
    off += (r - q * s) * strides[d];
    r = q;
  }
  return off;
}

}  // namespace aotrun_sort

#endif  // AOTRUN_FALLBACK_SORT_KEYS_CUH
