// sort_keys.cu: the kernels around cub::DeviceRadixSort on the long path of
// the row sorts (rows of more than 4096 elements; sort_kernels.h): element
// -> (row, key) radix keys with their positions, the row keys of a second
// (stable) pass, and the scatter of the sorted keys back to elements,
// indices and the output layout.
#include <cuda_runtime.h>

#include "shim_lib/fallback/sort_keys.cuh"

namespace {

using aotrun_sort::bits_of;
using aotrun_sort::key_is_lossy;
using aotrun_sort::key_of;
using aotrun_sort::load_bits;
using aotrun_sort::low_mask;
using aotrun_sort::row_offset;
using aotrun_sort::store_bits;

unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  const int64_t cap = 65535ll * 16;  // grid-stride loops cover the rest
  return static_cast<unsigned>(blocks < cap ? blocks : cap);
}

template <typename K, typename P>
__global__ void keys_kernel(const aotrun_fb_long_sort_job job, K *keys,
                            P *pay) {
  const aotrun_fb_rows_layout &l = job.layout;
  const int64_t total = job.rows * job.n;
  const int shift = 8 * job.elems.elem_size;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       p < total; p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = p / job.n;
    const int64_t j = p - r * job.n;
    const int64_t off = row_offset(r, l, l.in_strides) + j * l.in_dim_stride;
    uint64_t k = key_of<uint64_t>(
        load_bits<uint64_t>(job.in, off, job.elems.elem_size), job.elems);
    if (job.row_bits > 0) k |= static_cast<uint64_t>(r) << shift;
    keys[p] = static_cast<K>(k);
    pay[p] = static_cast<P>(p);
  }
}

template <typename R, typename P>
__global__ void row_keys_kernel(const aotrun_fb_long_sort_job job,
                                const P *sorted_pay, R *rkey, P *perm) {
  const int64_t total = job.rows * job.n;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       q < total; q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    rkey[q] = static_cast<R>(static_cast<int64_t>(sorted_pay[q]) / job.n);
    perm[q] = static_cast<P>(q);
  }
}

template <typename K, typename P>
__global__ void scatter_kernel(const aotrun_fb_long_sort_job job,
                               const K *keys, const P *pay, const P *perm) {
  const aotrun_fb_rows_layout &l = job.layout;
  const aotrun_fb_sort_elems &e = job.elems;
  const int bytes = e.elem_size;
  const uint64_t key_mask = low_mask<uint64_t>(bytes);  // drops the row bits
  const int64_t total = job.rows * job.k;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       t < total; t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / job.k;
    const int64_t q = t - r * job.k;
    int64_t s = r * job.n + q;  // row r's sorted elements fill [r*n, r*n+n)
    if (perm) s = static_cast<int64_t>(perm[s]);
    const uint64_t key = static_cast<uint64_t>(keys[s]) & key_mask;
    const int64_t j = static_cast<int64_t>(pay[s]) - r * job.n;
    const uint64_t bits =
        key_is_lossy<uint64_t>(key, e)
            ? load_bits<uint64_t>(
                  job.in, row_offset(r, l, l.in_strides) + j * l.in_dim_stride,
                  bytes)
            : bits_of<uint64_t>(key, e);
    const int64_t o = row_offset(r, l, l.out_strides) + q * l.out_dim_stride;
    store_bits<uint64_t>(job.values, o, bytes, bits);
    job.indices[o] = job.idx_map ? job.idx_map[r * job.n + j] : j;
  }
}

template <typename K, typename P>
cudaError_t keys_as(const aotrun_fb_long_sort_job &job, void *keys, void *pay,
                    cudaStream_t stream) {
  keys_kernel<K, P><<<grid_for(job.rows * job.n), 256, 0, stream>>>(
      job, static_cast<K *>(keys), static_cast<P *>(pay));
  return cudaGetLastError();
}

template <typename R, typename P>
cudaError_t row_keys_as(const aotrun_fb_long_sort_job &job,
                        const void *sorted_pay, void *rkey, void *perm,
                        cudaStream_t stream) {
  row_keys_kernel<R, P><<<grid_for(job.rows * job.n), 256, 0, stream>>>(
      job, static_cast<const P *>(sorted_pay), static_cast<R *>(rkey),
      static_cast<P *>(perm));
  return cudaGetLastError();
}

template <typename K, typename P>
cudaError_t scatter_as(const aotrun_fb_long_sort_job &job, const void *keys,
                       const void *pay, const void *perm, cudaStream_t stream) {
  scatter_kernel<K, P><<<grid_for(job.rows * job.k), 256, 0, stream>>>(
      job, static_cast<const K *>(keys), static_cast<const P *>(pay),
      static_cast<const P *>(perm));
  return cudaGetLastError();
}

bool valid(const aotrun_fb_long_sort_job *job) {
  return (job->key_bytes == 4 || job->key_bytes == 8) &&
         (job->pay_bytes == 4 || job->pay_bytes == 8) && job->n > 0 &&
         job->rows > 0 && job->k >= 0 && job->k <= job->n;
}

// Calls f(K{}, P{}) with K, P = unsigned int (4 bytes) or unsigned long
// long (8 bytes), the widths of the job's two arrays.
template <typename F>
cudaError_t by_widths(int k_bytes, int p_bytes, F f) {
  using U32 = unsigned int;
  using U64 = unsigned long long;
  if (k_bytes == 8) return p_bytes == 8 ? f(U64{}, U64{}) : f(U64{}, U32{});
  return p_bytes == 8 ? f(U32{}, U64{}) : f(U32{}, U32{});
}

}  // namespace

extern "C" cudaError_t aotrun_fb_long_sort_keys(
    const aotrun_fb_long_sort_job *job, void *keys, void *pay,
    cudaStream_t stream) {
  if (!valid(job)) return cudaErrorInvalidValue;
  return by_widths(job->key_bytes, job->pay_bytes, [&](auto k, auto p) {
    return keys_as<decltype(k), decltype(p)>(*job, keys, pay, stream);
  });
}

extern "C" cudaError_t aotrun_fb_long_sort_row_keys(
    const aotrun_fb_long_sort_job *job, const void *sorted_pay, void *rkey,
    int rkey_bytes, void *perm, cudaStream_t stream) {
  if (!valid(job) || (rkey_bytes != 4 && rkey_bytes != 8))
    return cudaErrorInvalidValue;
  return by_widths(rkey_bytes, job->pay_bytes, [&](auto r, auto p) {
    return row_keys_as<decltype(r), decltype(p)>(*job, sorted_pay, rkey, perm,
                                                 stream);
  });
}

extern "C" cudaError_t aotrun_fb_long_sort_scatter(
    const aotrun_fb_long_sort_job *job, const void *sorted_keys,
    const void *sorted_pay, const void *perm, cudaStream_t stream) {
  if (!valid(job)) return cudaErrorInvalidValue;
  if (job->k == 0) return cudaSuccess;
  return by_widths(job->key_bytes, job->pay_bytes, [&](auto k, auto p) {
    return scatter_as<decltype(k), decltype(p)>(*job, sorted_keys, sorted_pay,
                                                perm, stream);
  });
}
