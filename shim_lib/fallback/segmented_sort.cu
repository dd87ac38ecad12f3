// segmented_sort.cu: the block path of the row sorts (sort_kernels.h):
// each thread block sorts one row piece of at most 4096 elements in shared
// memory with cub::BlockRadixSort, stable, on the keys of sort_keys.cuh,
// carrying the element's position in the piece (16 bits).
//
// Why a block per row rather than cub::DeviceSegmentedRadixSort: a row of
// <= 4096 elements is read once from global memory, sorted in shared memory
// and written once (values and int64 indices), with no scratch memory and
// one launch; ATen's in-place kernel for the same sizes runs 32 threads per
// block. Padding keys (all ones) fill the tile past the row's end; being at
// the end of the blocked input of a stable sort they stay behind every real
// element, even one with the same key.
#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>

#include "shim_lib/fallback/sort_keys.cuh"

namespace {

using aotrun_sort::bits_of;
using aotrun_sort::key_is_lossy;
using aotrun_sort::key_of;
using aotrun_sort::load_bits;
using aotrun_sort::row_offset;
using aotrun_sort::store_bits;

// Blocks per SM asked of the compiler: 1024 threads per SM (64 registers a
// thread) keeps enough warps in flight to hide the shared-memory latency of
// the rank/scatter passes; without the bound CUB's sort takes 72-100.
constexpr int min_blocks(int threads) {
  return 1024 / threads > 16 ? 16 : 1024 / threads;
}

template <typename KeyT, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, min_blocks(THREADS))
    block_sort_kernel(const aotrun_fb_block_sort_job job) {
  static_assert(THREADS * ITEMS <= AOTRUN_FB_BLOCK_SORT_MAX, "tile too big");
  using Sort = cub::BlockRadixSort<KeyT, THREADS, ITEMS, uint16_t>;
  __shared__ typename Sort::TempStorage tmp;
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
    const int64_t in_base =
        row_offset(r, l, l.in_strides) + start * l.in_dim_stride;

    // Blocked arrangement: thread t holds positions t*ITEMS .. t*ITEMS+ITEMS-1.
    KeyT keys[ITEMS];
    uint16_t pos[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
      pos[i] = static_cast<uint16_t>(j);
      keys[i] = j < len ? key_of<KeyT>(
                              load_bits<KeyT>(
                                  job.in, in_base + j * l.in_dim_stride, bytes),
                              e)
                        : ~KeyT(0);
    }
    Sort(tmp).SortBlockedToStriped(keys, pos, 0, 8 * bytes);

    // Striped arrangement: item i of thread t has rank i*THREADS + t.
    const int kk = static_cast<int>(job.k < len ? job.k : len);
    const int64_t out_base = row_offset(r, l, l.out_strides);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int q = i * THREADS + static_cast<int>(threadIdx.x);
      if (q >= kk) continue;
      const int j = pos[i];
      const KeyT key = keys[i];
      const KeyT bits =
          key_is_lossy<KeyT>(key, e)
              ? load_bits<KeyT>(job.in, in_base + j * l.in_dim_stride, bytes)
              : bits_of<KeyT>(key, e);
      const int64_t o = out_base + (c * job.k + q) * l.out_dim_stride;
      store_bits<KeyT>(job.values, o, bytes, bits);
      job.indices[o] =
          job.idx_map ? job.idx_map[r * job.n + start + j] : start + j;
    }
    __syncthreads();  // tmp is reused by this block's next piece
  }
}

template <typename KeyT, int THREADS, int ITEMS>
cudaError_t launch(const aotrun_fb_block_sort_job &job, cudaStream_t stream) {
  const int64_t pieces = job.rows * job.chunks;
  const int64_t max_grid = 1ll << 24;  // a grid-stride loop covers the rest
  const unsigned grid =
      static_cast<unsigned>(pieces < max_grid ? pieces : max_grid);
  block_sort_kernel<KeyT, THREADS, ITEMS><<<grid, THREADS, 0, stream>>>(job);
  return cudaGetLastError();
}

// Tile = THREADS * ITEMS >= the piece length; 8 items per thread from 512
// elements on amortise the per-pass block scan over more keys.
template <typename KeyT>
cudaError_t launch_for_span(const aotrun_fb_block_sort_job &job, int64_t span,
                            cudaStream_t stream) {
  if (span <= 32) return launch<KeyT, 32, 1>(job, stream);
  if (span <= 64) return launch<KeyT, 32, 2>(job, stream);
  if (span <= 128) return launch<KeyT, 32, 4>(job, stream);
  if (span <= 256) return launch<KeyT, 64, 4>(job, stream);
  if (span <= 512) return launch<KeyT, 64, 8>(job, stream);
  if (span <= 1024) return launch<KeyT, 128, 8>(job, stream);
  if (span <= 2048) return launch<KeyT, 256, 8>(job, stream);
  return launch<KeyT, 512, 8>(job, stream);
}

}  // namespace

extern "C" cudaError_t aotrun_fb_block_sort_rows(
    const aotrun_fb_block_sort_job *job, cudaStream_t stream) {
  const int64_t span = job->chunks > 1 ? job->chunk_len : job->n;
  if (job->rows <= 0 || job->n <= 0 || job->k <= 0) return cudaSuccess;
  if (span > AOTRUN_FB_BLOCK_SORT_MAX || job->chunks < 1 ||
      job->chunk_len < 1 || (job->chunks > 1 && job->k > job->chunk_len))
    return cudaErrorInvalidValue;
  switch (job->elems.elem_size) {
    case 1:
    case 2:
    case 4: return launch_for_span<unsigned int>(*job, span, stream);
    case 8: return launch_for_span<unsigned long long>(*job, span, stream);
    default: return cudaErrorInvalidValue;
  }
}
