// scatter_segment_kernels.cu: the folding of the sort engine's runs (see
// aotrun_fb_segments in scatter_kernels.h).
//
// Three steps, all with a fixed association, so results are deterministic:
//  1. fold_chunks: one thread per (chunk, column) folds, in order, the
//     pieces of runs inside its chunk. A run that starts and ends in the
//     chunk is finished and written. The piece that continues a run from an
//     earlier chunk becomes the chunk's partial (level 0); a run that starts
//     here and goes on leaves its accumulator in `tail`.
//  2. fold_level: partials of `fan` consecutive entries are folded into one
//     entry of the next level (up to the first entry whose run stops there).
//  3. finish_runs: the owner of each open run folds its tail with the
//     partials that follow, climbing a level at every block boundary, so a
//     run of any length takes at most levels * fan steps.
#include <cuda_runtime.h>

#include "shim_lib/fallback/scatter_device.cuh"
#include "shim_lib/fallback/scatter_kinds.cuh"
#include "shim_lib/fallback/scatter_math.h"

namespace aotrun_scatter {
namespace {

__device__ __forceinline__ uint64_t get(const void *a, int wide, int64_t i) {
  return wide ? static_cast<const unsigned long long *>(a)[i]
              : static_cast<const unsigned int *>(a)[i];
}

// ---- the sorted items ----

template <class K>
__device__ __forceinline__ typename K::acc_t value_at(
    const aotrun_fb_segments &a, const K &k, int64_t s, int64_t q) {
  uint64_t v = get(a.vals, a.val64, s);
  if (a.carried) return k.from_bits(v);
  int64_t off = (a.qsrc ? a.qsrc[q] : 0) + (int64_t)v * a.src_step;
  return k.load(a.src + off * a.elem_size);
}

__device__ __forceinline__ char *target(const aotrun_fb_segments &a,
                                        uint64_t key, int64_t q) {
  int64_t off = (a.qout ? a.qout[q] : 0) + (int64_t)key * a.out_step;
  return a.out + off * a.elem_size;
}

__device__ __forceinline__ uint64_t key_at(const aotrun_fb_segments &a,
                                           int64_t s) {
  return get(a.keys, a.key64, s);
}

template <class K>
__global__ void fold_chunks(aotrun_fb_segments a, K k) {
  using acc_t = typename K::acc_t;
  acc_t *part = static_cast<acc_t *>(a.part[0]);
  acc_t *tail = static_cast<acc_t *>(a.tail);
  const int64_t total = a.count[0] * a.q;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = t / a.q, q = t - c * a.q;
    const int64_t s0 = c * a.chunk;
    const int64_t s1 = s0 + a.chunk < a.n ? s0 + a.chunk : a.n;
    const uint64_t k0 = key_at(a, s0);
    int64_t s = s0, cont_n = 0;
    bool more = false;
    acc_t acc = k.identity();
    if (s0 > 0 && k0 != a.sentinel && key_at(a, s0 - 1) == k0) {
      // The chunk starts inside a run: its piece becomes the partial.
      acc = value_at(a, k, s, q);
      for (s++; s < s1 && key_at(a, s) == k0; s++)
        acc = k.combine(acc, value_at(a, k, s, q));
      cont_n = s - s0;
      more = s == s1 && s1 < a.n && key_at(a, s1) == k0;
    }
    part[t] = acc;
    if (q == 0) {
      a.part_n[0][c] = cont_n;
      a.part_more[0][c] = more;
    }
    int64_t open_n = 0;
    while (s < s1) {
      const uint64_t key = key_at(a, s);
      if (key == a.sentinel) break;  // bad indices sort last
      char *dst = target(a, key, q);
      const int64_t head = s;
      acc_t r = a.include_self ? k.load(dst) : k.identity();
      do {
        r = k.combine(r, value_at(a, k, s, q));
        s++;
      } while (s < s1 && key_at(a, s) == key);
      if (s == s1 && s1 < a.n && key_at(a, s1) == key) {
        tail[t] = r;  // finish_runs completes it
        open_n = s - head;
      } else {
        k.store(dst, r, s - head);
      }
    }
    if (q == 0) a.tail_n[c] = open_n;
  }
}

template <class K>
__global__ void fold_level(aotrun_fb_segments a, K k, int level) {
  using acc_t = typename K::acc_t;
  const acc_t *below = static_cast<const acc_t *>(a.part[level - 1]);
  acc_t *above = static_cast<acc_t *>(a.part[level]);
  const int64_t nbelow = a.count[level - 1];
  const int64_t *below_n = a.part_n[level - 1];
  const uint8_t *below_more = a.part_more[level - 1];
  const int64_t total = a.count[level] * a.q;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = t / a.q, q = t - b * a.q;
    int64_t j = b * a.fan;
    const int64_t j1 = j + a.fan < nbelow ? j + a.fan : nbelow;
    acc_t acc = below[j * a.q + q];
    int64_t n = below_n[j];
    bool more = below_more[j] != 0;
    while (more && ++j < j1) {
      acc = k.combine(acc, below[j * a.q + q]);
      n += below_n[j];
      more = below_more[j] != 0;
    }
    above[t] = acc;
    if (q == 0) {
      a.part_n[level][b] = n;
      a.part_more[level][b] = more;
    }
  }
}

template <class K>
__global__ void finish_runs(aotrun_fb_segments a, K k) {
  using acc_t = typename K::acc_t;
  const acc_t *tail = static_cast<const acc_t *>(a.tail);
  const int64_t total = a.count[0] * a.q;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = t / a.q, q = t - c * a.q;
    const int64_t open_n = a.tail_n[c];
    if (open_n == 0) continue;
    // The open run ends chunk c, which therefore is not the last chunk.
    char *dst = target(a, key_at(a, (c + 1) * a.chunk - 1), q);
    acc_t acc = tail[t];
    int64_t n = open_n, m = c + 1;
    int level = 0;
    for (;;) {
      while (level + 1 < a.levels && m % a.fan == 0) {
        m /= a.fan;
        level++;
      }
      acc = k.combine(acc, static_cast<const acc_t *>(a.part[level])[m * a.q + q]);
      n += a.part_n[level][m];
      if (!a.part_more[level][m]) break;
      m++;
    }
    k.store(dst, acc, n);
  }
}

template <class K>
cudaError_t run(const aotrun_fb_segments &a, cudaStream_t stream) {
  K k{a.dtype, a.elem_size, a.include_self};
  const int64_t total0 = a.count[0] * a.q;
  fold_chunks<K><<<grid_for(total0, 256), 256, 0, stream>>>(a, k);
  cudaError_t e = cudaGetLastError();
  for (int level = 1; e == cudaSuccess && level < a.levels; level++) {
    fold_level<K><<<grid_for(a.count[level] * a.q, 256), 256, 0, stream>>>(
        a, k, level);
    e = cudaGetLastError();
  }
  if (e != cudaSuccess) return e;
  finish_runs<K><<<grid_for(total0, 256), 256, 0, stream>>>(a, k);
  return cudaGetLastError();
}

template <int OP>
cudaError_t run_numeric(const aotrun_fb_segments &a, cudaStream_t stream) {
  switch (a.dtype) {
    case AOTRUN_SM_U8:
    case AOTRUN_SM_I8:
    case AOTRUN_SM_I16:
    case AOTRUN_SM_I32:
    case AOTRUN_SM_I64: return run<IntKind<OP>>(a, stream);
    case AOTRUN_SM_F16:
    case AOTRUN_SM_BF16:
    case AOTRUN_SM_F32: return run<FloatKind<OP>>(a, stream);
    case AOTRUN_SM_F64: return run<DoubleKind<OP>>(a, stream);
    case AOTRUN_SM_BOOL:
      if (OP == AOTRUN_FB_SEG_SUM) return run<BoolKind>(a, stream);
      return cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

size_t numeric_acc_size(int32_t reduce, int32_t dtype) {
  switch (dtype) {
    case AOTRUN_SM_U8:
    case AOTRUN_SM_I8:
    case AOTRUN_SM_I16:
    case AOTRUN_SM_I32:
    case AOTRUN_SM_I64: return sizeof(IntKind<AOTRUN_FB_SEG_SUM>::acc_t);
    case AOTRUN_SM_F16:
    case AOTRUN_SM_BF16:
    case AOTRUN_SM_F32: return sizeof(FloatKind<AOTRUN_FB_SEG_SUM>::acc_t);
    case AOTRUN_SM_F64: return sizeof(DoubleKind<AOTRUN_FB_SEG_SUM>::acc_t);
    case AOTRUN_SM_BOOL:
      return reduce == AOTRUN_FB_SEG_SUM ? sizeof(BoolKind::acc_t) : 0;
    default: return 0;
  }
}

}  // namespace
}  // namespace aotrun_scatter

using namespace aotrun_scatter;

extern "C" size_t aotrun_fb_segment_acc_size(int32_t reduce, int32_t dtype,
                                             int64_t elem_size) {
  switch (reduce) {
    case AOTRUN_FB_SEG_ASSIGN:
      return elem_size == 1 || elem_size == 2 || elem_size == 4 ||
                     elem_size == 8 || elem_size == 16
                 ? (size_t)elem_size
                 : 0;
    case AOTRUN_FB_SEG_SUM:
    case AOTRUN_FB_SEG_PROD:
    case AOTRUN_FB_SEG_MEAN: return numeric_acc_size(reduce, dtype);
    default: return 0;
  }
}

extern "C" cudaError_t aotrun_fb_scatter_segments(const aotrun_fb_segments *a,
                                                  cudaStream_t stream) {
  if (a->n <= 0) return cudaSuccess;
  if (a->levels < 1 || a->levels > AOTRUN_FB_SEG_MAX_LEVELS || a->fan < 2 ||
      a->chunk < 1 || a->q < 1)
    return cudaErrorInvalidValue;
  switch (a->reduce) {
    case AOTRUN_FB_SEG_ASSIGN:
      switch (a->elem_size) {
        case 1: return run<AssignKind<unsigned char>>(*a, stream);
        case 2: return run<AssignKind<unsigned short>>(*a, stream);
        case 4: return run<AssignKind<unsigned int>>(*a, stream);
        case 8: return run<AssignKind<unsigned long long>>(*a, stream);
        case 16: return run<AssignKind<Bytes16>>(*a, stream);
        default: return cudaErrorInvalidValue;
      }
    case AOTRUN_FB_SEG_SUM: return run_numeric<AOTRUN_FB_SEG_SUM>(*a, stream);
    case AOTRUN_FB_SEG_PROD: return run_numeric<AOTRUN_FB_SEG_PROD>(*a, stream);
    case AOTRUN_FB_SEG_MEAN: return run_numeric<AOTRUN_FB_SEG_MEAN>(*a, stream);
    default: return cudaErrorInvalidValue;
  }
}
