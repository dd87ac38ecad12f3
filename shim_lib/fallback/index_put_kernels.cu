// index_put_kernels.cu: the device side of index_put with integer indices.
//
// 1. keys: each item's target as a pick-linear key (an out-of-range item
//    gets the key `invalid`, which sorts last and is skipped);
// 2. the shared stable radix sort orders (key, item) pairs, so equal
//    targets keep index order;
// 3. without accumulate the last item of each run of equal keys writes its
//    row; with accumulate each chunk of AOTRUN_FB_ACC_CHUNK sorted items is
//    summed in index order by one thread per column (runs starting and
//    ending in the chunk are written at once), and runs that cross chunks
//    are finished from per-chunk partial sums by the thread of their first
//    chunk boundary. The order of additions depends only on the sorted
//    positions, so results are the same bits on every run.
#include <cuda_runtime.h>

#include "shim_lib/fallback/acc_ops.cuh"
#include "shim_lib/fallback/index_device.cuh"
#include "shim_lib/fallback/index_kernels.h"

namespace {

using aotrun_fb::Units;
constexpr int64_t kChunk = AOTRUN_FB_ACC_CHUNK;

// V contiguous elements of a row, moved as one aligned load or store: with
// V > 1 lane q owns columns [q * V, q * V + V) (vec_width checks that the
// columns are contiguous and every row starts on a 16-byte boundary).
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Offsets of (vector) column q in values and out.
template <int V>
__device__ __forceinline__ void vec_col(const aotrun_fb_ix_cols &cols,
                                        int64_t q, int64_t *so, int64_t *qd) {
  if (V == 1) {
    aotrun_fb::col_offsets(cols, q, so, qd);
  } else {
    *so = q * V;
    *qd = q * V;
  }
}

template <typename K>
__global__ void keys_kernel(K *keys, K *iota, aotrun_fb_ix_items it,
                            K invalid, aotrun_device_error *err) {
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       b < it.b_numel; b += int64_t(gridDim.x) * blockDim.x) {
    bool bad;
    int64_t p = aotrun_fb::item_pick(it, b, nullptr, nullptr, err, &bad);
    keys[b] = bad ? invalid : static_cast<K>(p);
    iota[b] = static_cast<K>(b);
  }
}

template <typename T, typename K, int V>
__global__ void put_last_kernel(T *out, const T *values, const K *keys,
                                const K *items, int64_t n, K invalid,
                                aotrun_fb_ix_items it, aotrun_fb_ix_cols cols,
                                Units u) {
  const int64_t g = int64_t(1) << u.lg;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t lane = tid & (g - 1);
  const int64_t groups = (int64_t(gridDim.x) * blockDim.x) >> u.lg;
  for (int64_t unit = tid >> u.lg; unit < u.n_units; unit += groups) {
    int64_t j = u.nchunks == 1 ? unit : unit / u.nchunks;
    int64_t c = unit - j * u.nchunks;
    K k = keys[j];
    if (k == invalid || (j + 1 < n && keys[j + 1] == k)) continue;
    int64_t vb = aotrun_fb::b_offset(it, static_cast<int64_t>(items[j]),
                                     cols.item_src);
    int64_t ot = aotrun_fb::key_offset(it, k, cols.pick_dst);
    const int64_t ncols = cols.numel / V;
    int64_t q_end = (c + 1) * u.chunk;
    if (q_end > ncols) q_end = ncols;
    for (int64_t q = c * u.chunk + lane; q < q_end; q += g) {
      int64_t so, oo;
      vec_col<V>(cols, q, &so, &oo);
      *reinterpret_cast<Vec<T, V> *>(out + ot + oo) =
          *reinterpret_cast<const Vec<T, V> *>(values + vb + so);
    }
  }
}

// One unit: AOTRUN_FB_ACC_CHUNK sorted items x G (vector) columns, one per
// lane.
template <typename Op, typename K, int V>
__global__ void acc_chunks_kernel(typename Op::T *out,
                                  const typename Op::T *__restrict__ values,
                                  const K *__restrict__ keys,
                                  const K *__restrict__ items, int64_t n,
                                  K invalid,
                                  aotrun_fb_ix_items it, aotrun_fb_ix_cols cols,
                                  typename Op::Acc *head,
                                  typename Op::Acc *tail, int64_t colgroups,
                                  int lg, int64_t n_units) {
  using T = typename Op::T;
  using Acc = typename Op::Acc;
  using W = Vec<T, V>;
  const int64_t g = int64_t(1) << lg;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t lane = tid & (g - 1);
  const int64_t groups = (int64_t(gridDim.x) * blockDim.x) >> lg;
  const int64_t ncols = cols.numel / V;
  for (int64_t unit = tid >> lg; unit < n_units; unit += groups) {
    int64_t c = unit / colgroups;
    int64_t q = (unit - c * colgroups) * g + lane;
    if (q >= ncols) continue;
    int64_t so, qd;
    vec_col<V>(cols, q, &so, &qd);
    const int64_t part = c * cols.numel + q * V;  // first partial column
    int64_t start = c * kChunk, end = start + kChunk;
    if (end > n) end = n;
    Acc acc[V];
    bool here = false;  // the current run starts inside this chunk
    int64_t tgt = 0;
    for (int64_t j = start; j < end; j++) {
      K k = keys[j];
      if (k == invalid) break;
      bool first = j == 0 || keys[j - 1] != k;
      if (first || j == start) {
        here = first;
        tgt = aotrun_fb::key_offset(it, k, cols.pick_dst) + qd;
        if (here) {
          W cur = *reinterpret_cast<const W *>(out + tgt);
#pragma unroll
          for (int i = 0; i < V; i++) acc[i] = Op::load(cur.v[i]);
        } else {
#pragma unroll
          for (int i = 0; i < V; i++) acc[i] = Op::zero();
        }
      }
      int64_t vb = aotrun_fb::b_offset(it, static_cast<int64_t>(items[j]),
                                       cols.item_src);
      W x = *reinterpret_cast<const W *>(values + vb + so);
#pragma unroll
      for (int i = 0; i < V; i++) acc[i] = Op::add(acc[i], Op::load(x.v[i]));
      bool last = j + 1 == n || keys[j + 1] != k;
      if (last) {
        if (here) {
          W r;
#pragma unroll
          for (int i = 0; i < V; i++) r.v[i] = Op::store(acc[i]);
          *reinterpret_cast<W *>(out + tgt) = r;
        } else {
#pragma unroll
          for (int i = 0; i < V; i++)
            head[part + i] = acc[i];  // end piece of an earlier run
        }
      } else if (j + 1 == end) {
#pragma unroll
        for (int i = 0; i < V; i++)
          tail[part + i] = acc[i];  // the run goes on after this chunk
      }
    }
  }
}

// Runs crossing a chunk boundary: the unit of the first boundary a run
// crosses adds its start chunk's tail, the tails of the chunks it covers
// and the head of its end chunk, in that order.
template <typename Op, typename K>
__global__ void acc_cross_kernel(typename Op::T *out, const K *keys, int64_t n,
                                 K invalid, aotrun_fb_ix_items it,
                                 aotrun_fb_ix_cols cols,
                                 const typename Op::Acc *head,
                                 const typename Op::Acc *tail,
                                 int64_t colgroups, int lg, int64_t n_units) {
  using Acc = typename Op::Acc;
  const int64_t g = int64_t(1) << lg;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t lane = tid & (g - 1);
  const int64_t groups = (int64_t(gridDim.x) * blockDim.x) >> lg;
  for (int64_t unit = tid >> lg; unit < n_units; unit += groups) {
    int64_t cb = unit / colgroups + 1;  // boundary before chunk cb
    int64_t q = (unit - (cb - 1) * colgroups) * g + lane;
    if (q >= cols.numel) continue;
    int64_t s = cb * kChunk;
    K k = keys[s];
    if (k == invalid || keys[s - 1] != k) continue;          // not crossed
    if (cb >= 2 && keys[(cb - 1) * kChunk - 1] == k) continue;  // not first
    int64_t lo = s, hi = n;  // first position with a larger key
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] <= k)
        lo = mid + 1;
      else
        hi = mid;
    }
    int64_t c_end = (lo - 1) / kChunk;
    Acc acc = tail[(cb - 1) * cols.numel + q];
#pragma unroll 4
    for (int64_t cc = cb; cc < c_end; cc++)
      acc = Op::add(acc, tail[cc * cols.numel + q]);
    acc = Op::add(acc, head[c_end * cols.numel + q]);
    int64_t so, qd;
    aotrun_fb::col_offsets(cols, q, &so, &qd);
    out[aotrun_fb::key_offset(it, k, cols.pick_dst) + qd] = Op::store(acc);
  }
}

// Elements per lane: 16 bytes when the columns are one contiguous run in
// values and out, and every row of both starts 16-byte aligned (all the
// item and pick strides are multiples of the width); 1 otherwise.
template <typename T>
int vec_width(const aotrun_fb_put_rows_args &a, const aotrun_fb_ix_items &it,
              const aotrun_fb_ix_cols &cols) {
  constexpr int V = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
  if constexpr (V == 1) {
    return 1;
  } else {
    if (cols.ndim != 1 || cols.src[0] != 1 || cols.dst[0] != 1 ||
        cols.numel % V != 0 || reinterpret_cast<uintptr_t>(a.out) % 16 != 0 ||
        reinterpret_cast<uintptr_t>(a.values) % 16 != 0)
      return 1;
    for (int d = 0; d < it.b_ndim; d++)
      if (cols.item_src[d] % V != 0) return 1;
    for (int d = 0; d < it.pick_ndim; d++)
      if (cols.pick_dst[d] % V != 0) return 1;
    return V;
  }
}

template <typename T, typename K, int V>
cudaError_t launch_put_last_v(const aotrun_fb_put_rows_args &a,
                              const aotrun_fb_ix_items &it,
                              const aotrun_fb_ix_cols &cols,
                              cudaStream_t stream) {
  Units u = aotrun_fb::plan_units(a.n, cols.numel / V, V == 1 ? 4 : 1);
  if (u.n_units == 0) return cudaSuccess;
  put_last_kernel<T, K, V><<<aotrun_fb::grid_for_units(u),
                             aotrun_fb::kThreads, 0, stream>>>(
      static_cast<T *>(a.out), static_cast<const T *>(a.values),
      static_cast<const K *>(a.keys), static_cast<const K *>(a.items), a.n,
      static_cast<K>(a.invalid), it, cols, u);
  return cudaGetLastError();
}

template <typename T, typename K>
cudaError_t launch_put_last(const aotrun_fb_put_rows_args &a,
                            const aotrun_fb_ix_items &it,
                            const aotrun_fb_ix_cols &cols,
                            cudaStream_t stream) {
  constexpr int V = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
  if constexpr (V > 1) {
    if (vec_width<T>(a, it, cols) == V)
      return launch_put_last_v<T, K, V>(a, it, cols, stream);
  }
  return launch_put_last_v<T, K, 1>(a, it, cols, stream);
}

template <typename K>
struct AccLauncher {
  const aotrun_fb_put_rows_args &a;
  const aotrun_fb_ix_items &it;
  const aotrun_fb_ix_cols &cols;
  cudaStream_t stream;

  template <typename Op>
  cudaError_t run() {
    using T = typename Op::T;
    constexpr int V = sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
    if (sizeof(T) != a.elem_size) return cudaErrorInvalidValue;
    if constexpr (V > 1) {
      if (vec_width<T>(a, it, cols) == V) return run_v<Op, V>();
    }
    return run_v<Op, 1>();
  }

  template <typename Op, int V>
  cudaError_t run_v() {
    using T = typename Op::T;
    using Acc = typename Op::Acc;
    const int64_t ncols = cols.numel / V;
    Units u = aotrun_fb::plan_units(1, ncols, 1);
    int64_t g = int64_t(1) << u.lg;
    int64_t colgroups = (ncols + g - 1) / g;
    int64_t chunks = (a.n + kChunk - 1) / kChunk;
    Units ua = u;
    ua.n_units = chunks * colgroups;
    acc_chunks_kernel<Op, K, V><<<aotrun_fb::grid_for_units(ua),
                                  aotrun_fb::kThreads, 0, stream>>>(
        static_cast<T *>(a.out), static_cast<const T *>(a.values),
        static_cast<const K *>(a.keys), static_cast<const K *>(a.items), a.n,
        static_cast<K>(a.invalid), it, cols, static_cast<Acc *>(a.partial_head),
        static_cast<Acc *>(a.partial_tail), colgroups, u.lg, ua.n_units);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || chunks < 2) return e;
    // Runs crossing chunks are finished element by element (they are few).
    Units ub = aotrun_fb::plan_units(1, cols.numel, 1);
    const int64_t gb = int64_t(1) << ub.lg;
    const int64_t colgroups_b = (cols.numel + gb - 1) / gb;
    ub.n_units = (chunks - 1) * colgroups_b;
    acc_cross_kernel<Op, K><<<aotrun_fb::grid_for_units(ub),
                              aotrun_fb::kThreads, 0, stream>>>(
        static_cast<T *>(a.out), static_cast<const K *>(a.keys), a.n,
        static_cast<K>(a.invalid), it, cols,
        static_cast<const Acc *>(a.partial_head),
        static_cast<const Acc *>(a.partial_tail), colgroups_b, ub.lg,
        ub.n_units);
    return cudaGetLastError();
  }
};

template <typename K>
cudaError_t put_rows(const aotrun_fb_put_rows_args &a, const aotrun_fb_ix_items &it,
                     const aotrun_fb_ix_cols &cols, cudaStream_t stream) {
  if (a.accumulate)
    return aotrun_fb::dispatch_acc(a.acc_kind,
                                   AccLauncher<K>{a, it, cols, stream});
  switch (a.elem_size) {
    case 1: return launch_put_last<unsigned char, K>(a, it, cols, stream);
    case 2: return launch_put_last<unsigned short, K>(a, it, cols, stream);
    case 4: return launch_put_last<unsigned int, K>(a, it, cols, stream);
    case 8: return launch_put_last<unsigned long long, K>(a, it, cols, stream);
    case 16: return launch_put_last<aotrun_fb::Bytes16, K>(a, it, cols, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

extern "C" cudaError_t aotrun_fb_index_keys(void *keys, void *iota,
                                            int key_bytes, uint64_t invalid,
                                            const aotrun_fb_ix_items *items,
                                            aotrun_device_error *err,
                                            cudaStream_t stream) {
  if (items->b_numel == 0) return cudaSuccess;
  unsigned grid = aotrun_fb::grid_for(items->b_numel);
  if (key_bytes == 4)
    keys_kernel<unsigned int><<<grid, aotrun_fb::kThreads, 0, stream>>>(
        static_cast<unsigned int *>(keys), static_cast<unsigned int *>(iota),
        *items, static_cast<unsigned int>(invalid), err);
  else if (key_bytes == 8)
    keys_kernel<unsigned long long><<<grid, aotrun_fb::kThreads, 0, stream>>>(
        static_cast<unsigned long long *>(keys),
        static_cast<unsigned long long *>(iota), *items,
        static_cast<unsigned long long>(invalid), err);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" size_t aotrun_fb_acc_bytes(int acc_kind) {
  switch (acc_kind) {
    case AOTRUN_FB_ACC_F16:
    case AOTRUN_FB_ACC_BF16:
    case AOTRUN_FB_ACC_F32: return 4;
    case AOTRUN_FB_ACC_F64:
    case AOTRUN_FB_ACC_I8:
    case AOTRUN_FB_ACC_I16:
    case AOTRUN_FB_ACC_I32:
    case AOTRUN_FB_ACC_I64:
    case AOTRUN_FB_ACC_BOOL:
    case AOTRUN_FB_ACC_C64: return 8;
    case AOTRUN_FB_ACC_C128: return 16;
    default: return 0;
  }
}

extern "C" cudaError_t aotrun_fb_index_put_rows(const aotrun_fb_put_rows_args *a,
                                                const aotrun_fb_ix_items *items,
                                                const aotrun_fb_ix_cols *cols,
                                                cudaStream_t stream) {
  if (a->n == 0 || cols->numel == 0) return cudaSuccess;
  if (a->key_bytes == 4)
    return put_rows<unsigned int>(*a, *items, *cols, stream);
  if (a->key_bytes == 8)
    return put_rows<unsigned long long>(*a, *items, *cols, stream);
  return cudaErrorInvalidValue;
}
