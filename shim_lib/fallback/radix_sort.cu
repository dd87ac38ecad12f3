// radix_sort.cu: the stable CUB radix sort behind radix_sort.h.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include "shim_lib/fallback/radix_sort.h"

namespace {

template <typename K, typename V>
cudaError_t sort_pairs(void *temp, size_t *bytes,
                       const aotrun_fb_sort_pairs_args &a,
                       cudaStream_t stream) {
  const K *ki = static_cast<const K *>(a.keys_in);
  K *ko = static_cast<K *>(a.keys_out);
  const V *vi = static_cast<const V *>(a.vals_in);
  V *vo = static_cast<V *>(a.vals_out);
  if (a.descending)
    return cub::DeviceRadixSort::SortPairsDescending(
        temp, *bytes, ki, ko, vi, vo, a.n, 0, a.end_bit, stream);
  return cub::DeviceRadixSort::SortPairs(temp, *bytes, ki, ko, vi, vo, a.n, 0,
                                         a.end_bit, stream);
}

template <typename K>
cudaError_t sort_keys(void *temp, size_t *bytes,
                      const aotrun_fb_sort_pairs_args &a,
                      cudaStream_t stream) {
  const K *ki = static_cast<const K *>(a.keys_in);
  K *ko = static_cast<K *>(a.keys_out);
  if (a.descending)
    return cub::DeviceRadixSort::SortKeysDescending(temp, *bytes, ki, ko, a.n,
                                                    0, a.end_bit, stream);
  return cub::DeviceRadixSort::SortKeys(temp, *bytes, ki, ko, a.n, 0,
                                        a.end_bit, stream);
}

}  // namespace

extern "C" cudaError_t aotrun_fb_radix_sort_pairs(
    void *temp, size_t *temp_bytes, const aotrun_fb_sort_pairs_args *a,
    cudaStream_t stream) {
  if (a->n < 0 || a->end_bit < 1 || a->end_bit > 8 * a->key_bytes)
    return cudaErrorInvalidValue;
  const bool k64 = a->key_bytes == 8, v64 = a->val_bytes == 8;
  if ((a->key_bytes != 4 && !k64) ||
      (a->vals_in != nullptr && a->val_bytes != 4 && !v64))
    return cudaErrorInvalidValue;
  if (a->vals_in == nullptr)
    return k64 ? sort_keys<unsigned long long>(temp, temp_bytes, *a, stream)
               : sort_keys<unsigned int>(temp, temp_bytes, *a, stream);
  if (k64)
    return v64 ? sort_pairs<unsigned long long, unsigned long long>(
                     temp, temp_bytes, *a, stream)
               : sort_pairs<unsigned long long, unsigned int>(
                     temp, temp_bytes, *a, stream);
  return v64 ? sort_pairs<unsigned int, unsigned long long>(temp, temp_bytes,
                                                            *a, stream)
             : sort_pairs<unsigned int, unsigned int>(temp, temp_bytes, *a,
                                                      stream);
}

extern "C" int aotrun_fb_key_bits(uint64_t max_key) {
  int bits = 1;
  while (bits < 64 && (max_key >> bits) != 0) bits++;
  return bits;
}
