// radix_select.cu: the first k elements of row pieces of at most 4096
// elements without sorting them (sort_kernels.h, topk's selection rounds):
// one thread block per piece finds the k-th smallest key T (sort_keys.cuh
// keys, so "smallest" is the requested order) with one 256-bin shared-memory
// histogram per 8-bit digit, most significant first, then keeps every
// element with key < T and the first ones (by index) with key == T. That is
// exactly the first k of a stable sort, written in index order; the caller
// sorts the (few) kept elements afterwards.
//
// Why: a block radix sort of a 1024-element row makes 8 passes of ranking
// and shared-memory exchange; the selection makes 4 histogram passes over
// keys that stay in registers, and the sort that follows has only k items.
#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>

#include "shim_lib/fallback/sort_keys.cuh"

namespace {

using aotrun_sort::key_of;
using aotrun_sort::load_bits;
using aotrun_sort::row_offset;
using aotrun_sort::store_bits;

constexpr int kBins = 256;

// Given the block's digit histogram and `remaining` (1 <= remaining <= the
// number of counted keys), the first warp finds the digit whose bin holds
// the remaining-th smallest counted key; sets *digit and *left (how many
// keys of that bin are still wanted).
__device__ void find_digit(const int *hist, int remaining, int *digit,
                           int *left) {
  const int lane = static_cast<int>(threadIdx.x);
  int c[kBins / 32];
  int sum = 0;
#pragma unroll
  for (int b = 0; b < kBins / 32; b++) {
    c[b] = hist[lane * (kBins / 32) + b];
    sum += c[b];
  }
  int incl = sum;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int t = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += t;
  }
  const int excl = incl - sum;
  if (excl < remaining && remaining <= incl) {  // exactly one lane
    int acc = excl;
#pragma unroll
    for (int b = 0; b < kBins / 32; b++) {
      if (acc + c[b] >= remaining) {
        *digit = lane * (kBins / 32) + b;
        *left = remaining - acc;
        break;
      }
      acc += c[b];
    }
  }
}

// 1024 resident threads per SM at most 64 registers each (as the block
// sort): enough warps to overlap the loads and the histogram atomics.
constexpr int min_blocks(int threads) {
  return 1024 / threads > 16 ? 16 : 1024 / threads;
}

template <typename KeyT, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, min_blocks(THREADS))
    block_select_kernel(const aotrun_fb_block_sort_job job) {
  static_assert(THREADS * ITEMS <= AOTRUN_FB_BLOCK_SORT_MAX, "tile too big");
  static_assert(THREADS >= 32, "find_digit needs a full warp");
  using Scan = cub::BlockScan<int, THREADS>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int hist[kBins];
  __shared__ int s_digit, s_left;
  const aotrun_fb_sort_elems &e = job.elems;
  const aotrun_fb_rows_layout &l = job.layout;
  const int bytes = e.elem_size;
  const int64_t pieces = job.rows * job.chunks;
  for (int64_t v = blockIdx.x; v < pieces; v += gridDim.x) {
    const int64_t r = v / job.chunks;
    const int64_t c = v - r * job.chunks;
    const int64_t start = c * job.chunk_len;
    const int64_t rest = job.n - start;
    const int len =
        static_cast<int>(rest < job.chunk_len ? rest : job.chunk_len);
    const int kk = static_cast<int>(job.k < len ? job.k : len);
    const int64_t in_base =
        row_offset(r, l, l.in_strides) + start * l.in_dim_stride;

    // Blocked arrangement (thread t: positions t*ITEMS ..), so thread order
    // is index order for the scans below.
    KeyT keys[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
      keys[i] = j < len ? key_of<KeyT>(
                              load_bits<KeyT>(
                                  job.in, in_base + j * l.in_dim_stride, bytes),
                              e)
                        : KeyT(0);
    }

    // Digits of T, most significant first, among keys matching the prefix.
    KeyT prefix = 0, known = 0;
    int remaining = kk;
    for (int shift = 8 * bytes - 8; shift >= 0; shift -= 8) {
      for (int b = static_cast<int>(threadIdx.x); b < kBins; b += THREADS)
        hist[b] = 0;
      __syncthreads();
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
        if (j < len && (keys[i] & known) == prefix)
          atomicAdd(&hist[static_cast<int>((keys[i] >> shift) & 0xff)], 1);
      }
      __syncthreads();
      if (threadIdx.x < 32) find_digit(hist, remaining, &s_digit, &s_left);
      __syncthreads();
      prefix |= static_cast<KeyT>(s_digit) << shift;
      known |= static_cast<KeyT>(0xff) << shift;
      remaining = s_left;
      __syncthreads();  // s_digit/s_left and hist are rewritten next pass
    }
    const KeyT t = prefix;  // the kk-th smallest key; take `remaining` == t

    // Rank of each key equal to t among them, in index order.
    int eq = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
      eq += (j < len && keys[i] == t) ? 1 : 0;
    }
    int eq_before = 0;
    Scan(scan).ExclusiveSum(eq, eq_before);
    __syncthreads();
    // Kept: key < t, or key == t among the first `remaining` such keys.
    int mine = 0;
    {
      int eq_rank = eq_before;
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
        if (j >= len) continue;
        if (keys[i] < t) {
          mine++;
        } else if (keys[i] == t) {
          mine += eq_rank < remaining ? 1 : 0;
          eq_rank++;
        }
      }
    }
    int before = 0;
    Scan(scan).ExclusiveSum(mine, before);
    __syncthreads();  // scan storage is reused by the next piece

    const int64_t out_base = row_offset(r, l, l.out_strides);
    int eq_rank = eq_before;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
      if (j >= len) continue;
      bool take = keys[i] < t;
      if (keys[i] == t) take = eq_rank++ < remaining;
      if (!take) continue;
      const int64_t o = out_base + (c * job.k + before) * l.out_dim_stride;
      before++;
      store_bits<KeyT>(job.values, o, bytes,
                       load_bits<KeyT>(job.in,
                                       in_base + j * l.in_dim_stride, bytes));
      job.indices[o] =
          job.idx_map ? job.idx_map[r * job.n + start + j] : start + j;
    }
  }
}

template <typename KeyT, int THREADS, int ITEMS>
cudaError_t launch(const aotrun_fb_block_sort_job &job, cudaStream_t stream) {
  const int64_t pieces = job.rows * job.chunks;
  const int64_t max_grid = 1ll << 24;  // a grid-stride loop covers the rest
  const unsigned grid =
      static_cast<unsigned>(pieces < max_grid ? pieces : max_grid);
  block_select_kernel<KeyT, THREADS, ITEMS><<<grid, THREADS, 0, stream>>>(job);
  return cudaGetLastError();
}

template <typename KeyT>
cudaError_t launch_for_span(const aotrun_fb_block_sort_job &job, int64_t span,
                            cudaStream_t stream) {
  if (span <= 256) return launch<KeyT, 32, 8>(job, stream);
  if (span <= 512) return launch<KeyT, 64, 8>(job, stream);
  if (span <= 1024) return launch<KeyT, 128, 8>(job, stream);
  if (span <= 2048) return launch<KeyT, 256, 8>(job, stream);
  return launch<KeyT, 256, 16>(job, stream);
}

}  // namespace

extern "C" cudaError_t aotrun_fb_block_select_rows(
    const aotrun_fb_block_sort_job *job, cudaStream_t stream) {
  const int64_t span = job->chunks > 1 ? job->chunk_len : job->n;
  if (job->rows <= 0 || job->n <= 0 || job->k <= 0) return cudaSuccess;
  if (span > AOTRUN_FB_BLOCK_SORT_MAX || job->chunks < 1 ||
      job->chunk_len < 1 || job->k > job->chunk_len)
    return cudaErrorInvalidValue;
  switch (job->elems.elem_size) {
    case 1:
    case 2:
    case 4: return launch_for_span<unsigned int>(*job, span, stream);
    case 8: return launch_for_span<unsigned long long>(*job, span, stream);
    default: return cudaErrorInvalidValue;
  }
}
