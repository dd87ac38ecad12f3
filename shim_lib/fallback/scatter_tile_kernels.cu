// scatter_tile_kernels.cu: the tile engine of scatter_reduce sum/prod/mean
// (aotrun_fb_scatter_tiles in scatter_kernels.h).
//
// Why: the sort engine radix-sorts every item through global memory (four
// passes over 32 MB for 4M items). When a whole line (all positions along
// dim) fits in one block, the order-dependent reduction needs no global
// sort: a block loads L whole lines (the tile), sorts its items by
// (line, target) with CUB's block radix sort in shared memory — stable, so
// each target's items stay in index order — and the first item of each run
// folds the run in that order from out's value (include_self) or the
// identity, then writes the target once. One read of index and src, one
// write per target, deterministic (the fold order is the index order).
#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>

#include "shim_lib/fallback/scatter_device.cuh"
#include "shim_lib/fallback/scatter_kinds.cuh"

namespace aotrun_scatter {
namespace {

constexpr int kThreads = AOTRUN_FB_SCATTER_TILE_THREADS;
constexpr int kItems = AOTRUN_FB_SCATTER_TILE_ITEMS / kThreads;
constexpr int kTile = kThreads * kItems;
static_assert(kTile == AOTRUN_FB_SCATTER_TILE_ITEMS, "tile size");

template <int BITS>
using TileSort = cub::BlockRadixSort<unsigned, kThreads, kItems, unsigned, BITS>;

template <int BITS>
union TileSmem {
  typename TileSort<BITS>::TempStorage sort;
  struct {
    unsigned key[kTile];
    unsigned val[kTile];
  } runs;
};

__device__ __forceinline__ unsigned load_small(const char *p, int elem) {
  switch (elem) {
    case 1: return *reinterpret_cast<const unsigned char *>(p);
    case 2: return *reinterpret_cast<const unsigned short *>(p);
    default: return *reinterpret_cast<const unsigned int *>(p);
  }
}

// Thread t holds line t % L, positions (t / L) * kItems + k: for one line
// the blocked order (t, k) is the order along dim, which the stable sort
// keeps; a warp reads L neighbouring lines of 32 / L rows at a time.
template <class K, int BITS, int MINB>
__global__ void __launch_bounds__(kThreads, MINB)
    tile_kernel(aotrun_fb_scatter_items it, K kind, int lines, int64_t nlines,
                int key_bits, aotrun_fb_scatter_report r) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  TileSmem<BITS> &sm = *reinterpret_cast<TileSmem<BITS> *>(smem_raw);
  __shared__ int64_t base_index[AOTRUN_FB_SCATTER_TILE_MAX_LINES];
  __shared__ int64_t base_src[AOTRUN_FB_SCATTER_TILE_MAX_LINES];
  __shared__ int64_t base_out[AOTRUN_FB_SCATTER_TILE_MAX_LINES];
  const int64_t first = (int64_t)blockIdx.x * lines;
  if (threadIdx.x < (unsigned)lines && first + threadIdx.x < nlines) {
    ItemOffsets b = line_base(it, first + threadIdx.x);
    base_index[threadIdx.x] = b.index;
    base_src[threadIdx.x] = b.src;
    base_out[threadIdx.x] = b.out;
  }
  __syncthreads();

  const int64_t len = it.sizes[it.dim];
  const int64_t istep = it.index_strides[it.dim];
  const int64_t sstep = it.src_strides[it.dim];
  const unsigned dim_size = (unsigned)it.dim_size;
  const unsigned sentinel = (unsigned)lines * dim_size;
  const int elem = (int)kind.elem;
  const int l = (int)(threadIdx.x % (unsigned)lines);
  const int64_t pos0 = (int64_t)(threadIdx.x / (unsigned)lines) * kItems;
  const bool line_ok = first + l < nlines;
  unsigned keys[kItems], vals[kItems];
#pragma unroll
  for (int k = 0; k < kItems; k++) {
    const int64_t pos = pos0 + k;
    keys[k] = sentinel;
    vals[k] = 0;
    if (line_ok && pos < len) {
      int64_t v = read_index(it, base_index[l] + pos * istep);
      if (index_ok(it, r, v)) {
        keys[k] = (unsigned)l * dim_size + (unsigned)v;
        vals[k] = load_small(it.src + (base_src[l] + pos * sstep) * elem,
                             elem);
      }
    }
  }
  TileSort<BITS>(sm.sort).Sort(keys, vals, 0, key_bits);
  __syncthreads();  // the sort's storage becomes the runs
#pragma unroll
  for (int k = 0; k < kItems; k++) {
    sm.runs.key[threadIdx.x * kItems + k] = keys[k];
    sm.runs.val[threadIdx.x * kItems + k] = vals[k];
  }
  __syncthreads();

  const int64_t ostep = it.out_strides[it.dim];
  for (int k = 0; k < kItems; k++) {
    const int i = threadIdx.x * kItems + k;
    const unsigned key = sm.runs.key[i];  // not keys[k]: no local memory
    if (key >= sentinel) break;  // sorted: the rest are padding
    if (i > 0 && sm.runs.key[i - 1] == key) continue;  // not a run's first
    const unsigned line = key / dim_size;
    const unsigned v = key - line * dim_size;
    char *t = it.out + (base_out[line] + (int64_t)v * ostep) * elem;
    typename K::acc_t acc = kind.include_self ? kind.load(t)
                                              : kind.identity();
    int64_t n = 0;
    for (int e = i; e < kTile && sm.runs.key[e] == key; e++, n++)
      acc = kind.combine(acc, kind.from_bits(sm.runs.val[e]));
    kind.store(t, acc, n);
  }
}

template <class K, int BITS, int MINB>
cudaError_t launch_v(const aotrun_fb_scatter_items &it, K kind, int lines,
                     const aotrun_fb_scatter_report &r, cudaStream_t stream) {
  const int64_t nlines = it.numel / it.sizes[it.dim];
  const int64_t blocks = (nlines + lines - 1) / lines;
  const unsigned last = (unsigned)lines * (unsigned)it.dim_size;  // sentinel
  int key_bits = 1;
  while (key_bits < 32 && (last >> key_bits) != 0) key_bits++;
  const size_t smem = sizeof(TileSmem<BITS>);
  // Above 48 KiB a kernel must opt in; an attribute set, not a sync, so a
  // capture may record the launch (the first call of a shape is not
  // captured in aotrun, but either way it is safe).
  cudaError_t e = cudaFuncSetAttribute(
      tile_kernel<K, BITS, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
      (int)smem);
  if (e != cudaSuccess) return e;
  tile_kernel<K, BITS, MINB><<<(unsigned)blocks, kThreads, smem, stream>>>(
      it, kind, lines, nlines, key_bits, r);
  return cudaGetLastError();
}

// Four radix bits per pass and two blocks per SM (64 registers, a few
// spilled): measured on the H200 against 6 and 5 bits and one block per SM
// (512x1024 <- 4096x1024 float32 sum: 149 us vs 158-180 us).
template <class K>
cudaError_t launch(const aotrun_fb_scatter_items &it, K kind, int lines,
                   const aotrun_fb_scatter_report &r, cudaStream_t stream) {
  return launch_v<K, 4, 2>(it, kind, lines, r, stream);
}

template <int OP>
cudaError_t run_op(const aotrun_fb_scatter_items &it, int32_t dtype,
                   int64_t elem, int include_self, int lines,
                   const aotrun_fb_scatter_report &r, cudaStream_t stream) {
  switch (dtype) {
    case AOTRUN_SM_U8:
    case AOTRUN_SM_I8:
    case AOTRUN_SM_I16:
    case AOTRUN_SM_I32:
      return launch(it, IntKind<OP>{dtype, elem, include_self}, lines, r,
                    stream);
    case AOTRUN_SM_F16:
    case AOTRUN_SM_BF16:
    case AOTRUN_SM_F32:
      return launch(it, FloatKind<OP>{dtype, elem, include_self}, lines, r,
                    stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace
}  // namespace aotrun_scatter

using namespace aotrun_scatter;

extern "C" cudaError_t aotrun_fb_scatter_tiles(
    const aotrun_fb_scatter_items *it, int32_t reduce, int32_t dtype,
    int64_t elem_size, int include_self, int lines,
    const aotrun_fb_scatter_report *r, cudaStream_t stream) {
  if (it->numel <= 0) return cudaSuccess;
  const int64_t groups = (it->sizes[it->dim] + kItems - 1) / kItems;
  if (lines < 1 || lines > AOTRUN_FB_SCATTER_TILE_MAX_LINES ||
      elem_size > 4 || (int64_t)lines * groups > kThreads ||
      it->dim_size < 1 || (int64_t)lines * it->dim_size >= ((int64_t)1 << 30))
    return cudaErrorInvalidValue;
  switch (reduce) {
    case AOTRUN_FB_SEG_SUM:
      return run_op<AOTRUN_FB_SEG_SUM>(*it, dtype, elem_size, include_self,
                                       lines, *r, stream);
    case AOTRUN_FB_SEG_PROD:
      return run_op<AOTRUN_FB_SEG_PROD>(*it, dtype, elem_size, include_self,
                                        lines, *r, stream);
    case AOTRUN_FB_SEG_MEAN:
      return run_op<AOTRUN_FB_SEG_MEAN>(*it, dtype, elem_size, include_self,
                                        lines, *r, stream);
    default: return cudaErrorInvalidValue;
  }
}
