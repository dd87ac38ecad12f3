// random_kernels.cu: the kernels of the random ops (random_kernels.h).
//
// Raw bits: cuRAND's counter-based curand_Philox4x32_10 (header-only device
// API, no libcurand). Conversions: cuRAND's own formulas and constants
// (curand_globals.h), written out below because curand_uniform.h and
// curand_normal.h cannot be included without curand_kernel.h, whose
// precomputed XORWOW/MRG/MTGP tables add ~400 KB of device data per
// architecture to the library: uniform float in (0, 1] as _curand_uniform
// (the conversion ATen's curand_uniform4 uses), uniform double in (0, 1] as
// _curand_uniform_double_hq (53 bits), normals as _curand_box_muller(_double).
// Nothing here synchronises; every launch reads the generator state on the
// device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>

#include <curand_globals.h>
#include <curand_philox4x32_x.h>

#include "shim_lib/fallback/random_kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int kFusedThreads = 512;
// One thread per Philox block: ceil(blocks / kThreads) thread blocks, at
// most kMaxGrid (2^28 Philox blocks, 2^30 values); a grid-stride loop
// covers larger jobs. Plenty of small blocks keep the last wave short.
constexpr int64_t kMaxGrid = 1 << 20;

// The job's first Philox block: reserved by thread 0 of the only thread
// block (ticket == nullptr) or read from the ticket the reservation kernel
// wrote. Every thread must call it (it may __syncthreads).
__device__ unsigned long long job_base(aotrun_fb_rng_state *state,
                                       const unsigned long long *ticket,
                                       unsigned long long blocks) {
  if (ticket != nullptr) return *ticket;
  __shared__ unsigned long long s_base;
  if (threadIdx.x == 0)
    s_base = atomicAdd(reinterpret_cast<unsigned long long *>(&state->offset),
                       blocks);
  __syncthreads();
  return s_base;
}

__global__ void reserve_kernel(aotrun_fb_rng_state *state,
                               unsigned long long blocks,
                               unsigned long long *ticket) {
  *ticket = atomicAdd(reinterpret_cast<unsigned long long *>(&state->offset),
                      blocks);
}

// Four random words of Philox block g of a job starting at `base`: the
// 128-bit counter is base + g (carry into the third word), the key the seed.
__device__ inline uint4 philox_block(unsigned long long seed,
                                     unsigned long long base,
                                     unsigned long long g) {
  unsigned long long lo = base + g;
  uint4 c = make_uint4(static_cast<unsigned>(lo),
                       static_cast<unsigned>(lo >> 32), lo < base ? 1u : 0u,
                       0u);
  uint2 k = make_uint2(static_cast<unsigned>(seed),
                       static_cast<unsigned>(seed >> 32));
  return curand_Philox4x32_10(c, k);
}

// ---- cuRAND's conversions (curand_uniform.h, curand_normal.h) ----

// _curand_uniform: (0, 1] (the largest words round to 1.0f).
__device__ inline float uniform_f(unsigned x) {
  return x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2.0f);
}

// _curand_uniform_double_hq: 53 bits, (0, 1].
__device__ inline double uniform_d(unsigned x, unsigned y) {
  unsigned long long z = (unsigned long long)x ^
                         ((unsigned long long)y << (53 - 32));
  return z * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
}

// _curand_box_muller: two standard normals from two words.
__device__ inline float2 box_muller_f(unsigned x, unsigned y) {
  float2 result;
  float u = x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2);
  float v = y * CURAND_2POW32_INV_2PI + (CURAND_2POW32_INV_2PI / 2);
  float s = sqrtf(-2.0f * logf(u));
  __sincosf(v, &result.x, &result.y);
  result.x *= s;
  result.y *= s;
  return result;
}

// _curand_box_muller_double: two standard normals from four words.
__device__ inline double2 box_muller_d(unsigned x0, unsigned x1, unsigned y0,
                                       unsigned y1) {
  double2 result;
  unsigned long long zx = (unsigned long long)x0 ^
                          ((unsigned long long)x1 << (53 - 32));
  double u = zx * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
  unsigned long long zy = (unsigned long long)y0 ^
                          ((unsigned long long)y1 << (53 - 32));
  double v = zy * (CURAND_2POW53_INV_DOUBLE * 2.0) + CURAND_2POW53_INV_DOUBLE;
  double s = sqrt(-2.0 * log(u));
  sincospi(v, &result.x, &result.y);
  result.x *= s;
  result.y *= s;
  return result;
}

__device__ inline unsigned word(const uint4 &r, int i) {
  return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w;
}

// ---- stores ----

// An integer value (randint, bernoulli, randperm) stored as the dtype
// (float dtypes round to nearest; int64 -> half/bfloat16 goes through
// float, as c10's conversions do).
__device__ inline void store_int(void *out, int64_t off, int32_t dtype,
                                 int64_t v) {
  switch (dtype) {
    case 0: static_cast<uint8_t *>(out)[off] = static_cast<uint8_t>(v); break;
    case 1: static_cast<int8_t *>(out)[off] = static_cast<int8_t>(v); break;
    case 2: static_cast<int16_t *>(out)[off] = static_cast<int16_t>(v); break;
    case 3: static_cast<int32_t *>(out)[off] = static_cast<int32_t>(v); break;
    case 4: static_cast<int64_t *>(out)[off] = v; break;
    case 5:
      static_cast<__half *>(out)[off] = __float2half_rn(static_cast<float>(v));
      break;
    case 6: static_cast<float *>(out)[off] = static_cast<float>(v); break;
    case 7: static_cast<double *>(out)[off] = static_cast<double>(v); break;
    case 11: static_cast<bool *>(out)[off] = v != 0; break;
    case 15:
      static_cast<__nv_bfloat16 *>(out)[off] =
          __float2bfloat16_rn(static_cast<float>(v));
      break;
    case 27:
      static_cast<uint16_t *>(out)[off] = static_cast<uint16_t>(v);
      break;
    case 28:
      static_cast<uint32_t *>(out)[off] = static_cast<uint32_t>(v);
      break;
    case 29:
      static_cast<uint64_t *>(out)[off] = static_cast<uint64_t>(v);
      break;
    default: break;  // refused on the host
  }
}

// Float dtypes: the opmath type (float, or double for float64) and the
// rounding to the stored type.
template <typename T> struct FloatT;
template <> struct FloatT<float> {
  using op = float;
  __device__ static float round(float v) { return v; }
  __device__ static float make(float v) { return v; }
};
template <> struct FloatT<double> {
  using op = double;
  __device__ static double round(double v) { return v; }
  __device__ static double make(double v) { return v; }
};
template <> struct FloatT<__half> {
  using op = float;
  __device__ static float round(float v) {
    return __half2float(__float2half_rn(v));
  }
  __device__ static __half make(float v) { return __float2half_rn(v); }
};
template <> struct FloatT<__nv_bfloat16> {
  using op = float;
  __device__ static float round(float v) {
    return __bfloat162float(__float2bfloat16_rn(v));
  }
  __device__ static __nv_bfloat16 make(float v) {
    return __float2bfloat16_rn(v);
  }
};

__device__ inline double load_p(const void *p, int32_t dtype, int64_t off) {
  switch (dtype) {
    case 5: return __half2float(static_cast<const __half *>(p)[off]);
    case 6: return static_cast<const float *>(p)[off];
    case 7: return static_cast<const double *>(p)[off];
    case 15:
      return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[off]);
    default: return 0.0;
  }
}

__device__ inline void report_bad_p(const aotrun_fb_rand_job &j, double p,
                                    int64_t k) {
  aotrun_device_error *e = j.err;
  if (e == nullptr) return;
  if (atomicCAS(reinterpret_cast<int *>(&e->code), 0,
                AOTRUN_DEVERR_PROBABILITY) != 0)
    return;
  e->dim = 0;
  e->value = __double_as_longlong(p);
  e->bound = k;
  e->op = j.op;
  e->arg = j.arg;
}

// ---- where values go ----
//
// Element k of a job is the k-th element of out in storage order (dense
// outputs) or in row-major order of the merged dims (strided outputs and
// every BERNOULLI_P job). The V values of Philox block g land in chunks of
// W consecutive elements of at most 16 bytes: chunk c of block g starts at
// element c * blocks * W + g * W. That is one chunk, elements V*g ..
// V*g + V-1, except for four 8-byte values (randint / bernoulli into int64,
// uint64, float64), which are two chunks of two: the first two values of
// every block fill elements [0, 2 * blocks), the last two [2 * blocks,
// 4 * blocks). So in a dense output consecutive threads store consecutive
// 16-byte (or smaller) chunks, each with one vector store.
template <typename T, int V> struct Chunks {
  static constexpr int kBytes =
      V * static_cast<int>(sizeof(T)) <= 16 ? V * static_cast<int>(sizeof(T))
                                            : 16;
  static constexpr int W = kBytes / static_cast<int>(sizeof(T));
  static constexpr int C = V / W;
};

template <int BYTES> struct Vec;
template <> struct Vec<1> { using type = unsigned char; };
template <> struct Vec<2> { using type = unsigned short; };
template <> struct Vec<4> { using type = unsigned int; };
template <> struct Vec<8> { using type = uint2; };
template <> struct Vec<16> { using type = uint4; };

__device__ inline bool aligned_to(const void *p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) & static_cast<uintptr_t>(bytes - 1)) ==
         0;
}

// out[k0 .. k0+W) = v (the elements below n): one vector store when the
// chunk is whole and out is aligned to W elements, else element by element.
template <typename T, int W>
__device__ inline void store_chunk(T *out, unsigned long long k0,
                                   unsigned long long n, const T *v,
                                   bool aligned) {
  using V = typename Vec<W * sizeof(T)>::type;
  if (aligned && k0 + W <= n) {
    V pack;
    memcpy(&pack, v, sizeof pack);
    *reinterpret_cast<V *>(out + k0) = pack;
  } else {
#pragma unroll
    for (int i = 0; i < W; i++)
      if (k0 + i < n) out[k0 + i] = v[i];
  }
}

// The values of Philox block g into a dense out (the chunks above).
template <typename T, int V>
__device__ inline void store_block(T *out, unsigned long long n,
                                   unsigned long long blocks,
                                   unsigned long long g, const T (&v)[V],
                                   bool aligned) {
  using L = Chunks<T, V>;
#pragma unroll
  for (int c = 0; c < L::C; c++)
    store_chunk<T, L::W>(out, c * blocks * L::W + g * L::W, n, v + c * L::W,
                         aligned);
}

// R consecutive values at out[k0 ..) in vector stores of at most 16 bytes.
template <typename T, int R>
__device__ inline void store_run(T *out, unsigned long long k0,
                                 unsigned long long n, const T (&v)[R],
                                 bool aligned) {
  using L = Chunks<T, R>;
#pragma unroll
  for (int c = 0; c < L::C; c++)
    store_chunk<T, L::W>(out, k0 + c * L::W, n, v + c * L::W, aligned);
}

// Strided outputs: offsets of element k in out (and p), walked in
// row-major order. locate() divides once per dim (32-bit when the job has
// fewer than 2^32 elements); next() steps along the last dim and divides
// again only when it wraps.
struct Walk {
  int64_t off, poff, inner;
};

template <bool P>
__device__ inline void locate(const aotrun_fb_rand_job &j,
                              unsigned long long k, Walk &w) {
  int64_t o = 0, po = 0, inner = 0;
  const int last = j.ndim - 1;
  if (j.n <= 0xffffffffLL) {
    unsigned rem = static_cast<unsigned>(k);
    for (int d = last; d >= 0; d--) {
      const unsigned s = static_cast<unsigned>(j.sizes[d]);
      const unsigned i = rem % s;
      rem /= s;
      if (d == last) inner = i;
      o += static_cast<int64_t>(i) * j.strides[d];
      if (P) po += static_cast<int64_t>(i) * j.p_strides[d];
    }
  } else {
    unsigned long long rem = k;
    for (int d = last; d >= 0; d--) {
      const unsigned long long s = static_cast<unsigned long long>(j.sizes[d]);
      const unsigned long long i = rem % s;
      rem /= s;
      if (d == last) inner = static_cast<int64_t>(i);
      o += static_cast<int64_t>(i) * j.strides[d];
      if (P) po += static_cast<int64_t>(i) * j.p_strides[d];
    }
  }
  w.off = o;
  w.poff = po;
  w.inner = inner;
}

// Moves w from element k - 1 to element k.
template <bool P>
__device__ inline void next(const aotrun_fb_rand_job &j, unsigned long long k,
                            Walk &w) {
  const int last = j.ndim - 1;
  if (last >= 0 && w.inner + 1 < j.sizes[last]) {
    w.inner++;
    w.off += j.strides[last];
    if (P) w.poff += j.p_strides[last];
  } else {
    locate<P>(j, k, w);
  }
}

// Calls put(value index, element k, offsets) for each element of Philox
// block g of a strided job (W: the chunk width of the dense layout, so a
// strided output gets the values a dense one would).
template <int V, int W, bool P, typename Put>
__device__ inline void walk_block(const aotrun_fb_rand_job &j,
                                  unsigned long long blocks,
                                  unsigned long long g, Put put) {
  const unsigned long long n = static_cast<unsigned long long>(j.n);
#pragma unroll
  for (int c = 0; c < V / W; c++) {
    const unsigned long long k0 = c * blocks * W + g * W;
    Walk w;
#pragma unroll
    for (int i = 0; i < W; i++) {
      const unsigned long long k = k0 + i;
      if (k >= n) break;
      if (i == 0)
        locate<P>(j, k, w);
      else
        next<P>(j, k, w);
      put(c * W + i, k, w);
    }
  }
}

// ---- values ----

// uniform / normal: the V opmath values of a Philox block, transformed
// (uniform: ATen's value = (scalar_t)(u * range + from); value == to ?
// from; normal: z * std + mean) and rounded to T.
template <int KIND, typename T>
__device__ inline void float_values(const uint4 &r,
                                    typename FloatT<T>::op a,
                                    typename FloatT<T>::op b,
                                    typename FloatT<T>::op c,
                                    T (&out)[sizeof(typename FloatT<T>::op) == 8
                                                 ? 2
                                                 : 4]) {
  using F = FloatT<T>;
  using op_t = typename F::op;
  constexpr bool kDouble = sizeof(op_t) == 8;
  constexpr int V = kDouble ? 2 : 4;
  op_t v[V];
  if constexpr (KIND == AOTRUN_FB_RAND_UNIFORM) {
    if constexpr (kDouble) {
      v[0] = uniform_d(r.x, r.y);
      v[1] = uniform_d(r.z, r.w);
    } else {
      v[0] = uniform_f(r.x);
      v[1] = uniform_f(r.y);
      v[2] = uniform_f(r.z);
      v[3] = uniform_f(r.w);
    }
  } else {
    if constexpr (kDouble) {
      double2 z = box_muller_d(r.x, r.y, r.z, r.w);
      v[0] = z.x;
      v[1] = z.y;
    } else {
      float2 z0 = box_muller_f(r.x, r.y);
      float2 z1 = box_muller_f(r.z, r.w);
      v[0] = z0.x;
      v[1] = z0.y;
      v[2] = z1.x;
      v[3] = z1.y;
    }
  }
#pragma unroll
  for (int i = 0; i < V; i++) {
    op_t x;
    if constexpr (KIND == AOTRUN_FB_RAND_UNIFORM) {
      x = F::round(v[i] * c + a);
      if (x == b) x = a;
    } else {
      x = v[i] * b + a;
    }
    out[i] = F::make(x);
  }
}

// randint's value i of a Philox block: low + floor(r * range / 2^w).
// Narrow (range <= 2^32): one 32-bit multiply-high of word i (range32 is
// range mod 2^32: 0 stands for 2^32, where the value is the word itself).
// Wide: 64 bits (words 2i, 2i+1) times the 64-bit range.
template <bool WIDE>
__device__ inline int64_t int_value(const uint4 &r, int i,
                                    unsigned long long low,
                                    unsigned long long range,
                                    unsigned range32) {
  unsigned long long d;
  if constexpr (WIDE) {
    unsigned long long bits =
        (static_cast<unsigned long long>(word(r, 2 * i)) << 32) |
        word(r, 2 * i + 1);
    d = __umul64hi(bits, range);
  } else {
    const unsigned w = word(r, i);
    d = range32 == 0 ? w : __umulhi(w, range32);
  }
  return static_cast<int64_t>(low + d);
}

// bernoulli with a scalar p: u < p for u = word / 2^32 is word < ceil(p *
// 2^32) (both sides exact in double; p in [0, 1] checked on the host).
__device__ inline unsigned long long bernoulli_threshold(double p) {
  return static_cast<unsigned long long>(ceil(p * 4294967296.0));
}

template <typename T> __device__ inline T int_to(int64_t v) {
  return static_cast<T>(v);
}
template <> __device__ inline bool int_to<bool>(int64_t v) { return v != 0; }
template <> __device__ inline __half int_to<__half>(int64_t v) {
  return __float2half_rn(static_cast<float>(v));
}
template <> __device__ inline __nv_bfloat16 int_to<__nv_bfloat16>(int64_t v) {
  return __float2bfloat16_rn(static_cast<float>(v));
}

// ---- kernels ----
//
// One thread per Philox block (a grid-stride loop past kMaxGrid thread
// blocks). DENSE kernels store in vector chunks; the others walk strides.

#define RAND_GRID_LOOP(g, blocks)                                        \
  for (unsigned long long g = blockIdx.x * static_cast<unsigned long long>( \
                                               blockDim.x) +               \
                              threadIdx.x;                                 \
       g < (blocks);                                                       \
       g += static_cast<unsigned long long>(gridDim.x) * blockDim.x)

// uniform / normal into float dtype T.
template <int KIND, typename T, bool DENSE>
__global__ void float_kernel(const __grid_constant__ aotrun_fb_rand_job j,
                             const unsigned long long *ticket,
                             unsigned long long blocks) {
  using F = FloatT<T>;
  using op_t = typename F::op;
  constexpr int V = sizeof(op_t) == 8 ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  const op_t a = static_cast<op_t>(j.a), b = static_cast<op_t>(j.b),
             c = static_cast<op_t>(j.c);
  T *out = static_cast<T *>(j.out);
  const unsigned long long n = static_cast<unsigned long long>(j.n);
  const bool aligned = aligned_to(out, Chunks<T, V>::kBytes);
  RAND_GRID_LOOP(g, blocks) {
    T x[V];
    float_values<KIND, T>(philox_block(seed, base, g), a, b, c, x);
    if constexpr (DENSE) {
      store_block<T, V>(out, n, blocks, g, x, aligned);
    } else {
      walk_block<V, Chunks<T, V>::W, false>(
          j, blocks, g, [&](int i, unsigned long long, const Walk &w) {
            out[w.off] = x[i];
          });
    }
  }
}

// randint and bernoulli (scalar p) into a dense out of type T.
template <int KIND, typename T, bool WIDE>
__global__ void int_dense_kernel(const __grid_constant__ aotrun_fb_rand_job j,
                                 const unsigned long long *ticket,
                                 unsigned long long blocks) {
  constexpr int V = WIDE ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  const unsigned long long low = static_cast<unsigned long long>(j.low);
  const unsigned long long range = j.range;
  const unsigned range32 = static_cast<unsigned>(j.range);
  const unsigned long long thr =
      KIND == AOTRUN_FB_RAND_BERNOULLI ? bernoulli_threshold(j.a) : 0;
  T *out = static_cast<T *>(j.out);
  const unsigned long long n = static_cast<unsigned long long>(j.n);
  const bool aligned = aligned_to(out, Chunks<T, V>::kBytes);
  RAND_GRID_LOOP(g, blocks) {
    const uint4 r = philox_block(seed, base, g);
    T x[V];
#pragma unroll
    for (int i = 0; i < V; i++) {
      if constexpr (KIND == AOTRUN_FB_RAND_INT)
        x[i] = int_to<T>(int_value<WIDE>(r, i, low, range, range32));
      else
        x[i] = int_to<T>(word(r, i) < thr ? 1 : 0);
    }
    store_block<T, V>(out, n, blocks, g, x, aligned);
  }
}

// randint, bernoulli (scalar and tensor p) into a strided out of any store
// dtype (W: 2 for four 8-byte values, else V; see "where values go").
template <int KIND, bool WIDE, int W>
__global__ void int_strided_kernel(
    const __grid_constant__ aotrun_fb_rand_job j,
    const unsigned long long *ticket, unsigned long long blocks) {
  constexpr int V = WIDE ? 2 : 4;
  constexpr bool kP = KIND == AOTRUN_FB_RAND_BERNOULLI_P;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  const unsigned long long low = static_cast<unsigned long long>(j.low);
  const unsigned long long range = j.range;
  const unsigned range32 = static_cast<unsigned>(j.range);
  const unsigned long long thr =
      KIND == AOTRUN_FB_RAND_BERNOULLI ? bernoulli_threshold(j.a) : 0;
  RAND_GRID_LOOP(g, blocks) {
    const uint4 r = philox_block(seed, base, g);
    walk_block<V, W, kP>(
        j, blocks, g, [&](int i, unsigned long long k, const Walk &w) {
          int64_t v;
          if constexpr (KIND == AOTRUN_FB_RAND_INT) {
            v = int_value<WIDE>(r, i, low, range, range32);
          } else if constexpr (KIND == AOTRUN_FB_RAND_BERNOULLI) {
            v = word(r, i) < thr ? 1 : 0;
          } else {
            double p = load_p(j.p, j.p_dtype, w.poff);
            if (!(p >= 0.0 && p <= 1.0)) {
              report_bad_p(j, p, static_cast<int64_t>(k));
              p = 0.0;
            }
            v = word(r, i) * 2.3283064365386963e-10 < p ? 1 : 0;  // [0, 1)
          }
          store_int(j.out, w.off, j.dtype, v);
        });
  }
}

// randperm: random keys (dense, block g's values at V*g ..) and their
// positions 0..n-1 at the same elements.
template <typename K, typename I>
__global__ void perm_keys_kernel(const __grid_constant__ aotrun_fb_rand_job j,
                                 const unsigned long long *ticket,
                                 unsigned long long blocks) {
  constexpr int V = sizeof(K) == 8 ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  K *keys = static_cast<K *>(j.out);
  I *pos = static_cast<I *>(j.out2);
  const unsigned long long n = static_cast<unsigned long long>(j.n);
  const bool keys_aligned = aligned_to(keys, Chunks<K, V>::kBytes);
  const bool pos_aligned = aligned_to(pos, Chunks<I, V>::kBytes);
  RAND_GRID_LOOP(g, blocks) {
    const uint4 r = philox_block(seed, base, g);
    K key[V];
    I at[V];
#pragma unroll
    for (int i = 0; i < V; i++) {
      if constexpr (sizeof(K) == 8)
        key[i] = (static_cast<unsigned long long>(word(r, 2 * i)) << 32) |
                 word(r, 2 * i + 1);
      else
        key[i] = word(r, i);
      at[i] = static_cast<I>(g * V + i);
    }
    store_run<K, V>(keys, g * V, n, key, keys_aligned);
    store_run<I, V>(pos, g * V, n, at, pos_aligned);
  }
}

#undef RAND_GRID_LOOP

__global__ void convert_index_kernel(void *out, int32_t dtype,
                                     const int64_t *src, int64_t n) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n;
       k += (int64_t)gridDim.x * blockDim.x)
    store_int(out, k, dtype, src[k]);
}

using Kernel = void (*)(aotrun_fb_rand_job, const unsigned long long *,
                        unsigned long long);

// Store dtypes of the integer kinds (ScalarType code, C++ type).
#define RAND_STORE_DTYPES(X)                                             \
  X(0, uint8_t) X(1, int8_t) X(2, int16_t) X(3, int32_t) X(4, int64_t) \
  X(5, __half) X(6, float) X(7, double) X(11, bool)                    \
  X(15, __nv_bfloat16) X(27, uint16_t) X(28, uint32_t) X(29, uint64_t)

template <int KIND, bool WIDE>
Kernel int_dense_kernel_for(int32_t dtype) {
  switch (dtype) {
#define RAND_CASE(code, T) \
  case code: return int_dense_kernel<KIND, T, WIDE>;
    RAND_STORE_DTYPES(RAND_CASE)
#undef RAND_CASE
    default: return nullptr;
  }
}

int store_bytes(int32_t dtype) {
  switch (dtype) {
#define RAND_CASE(code, T) \
  case code: return static_cast<int>(sizeof(T));
    RAND_STORE_DTYPES(RAND_CASE)
#undef RAND_CASE
    default: return 0;
  }
}

template <int KIND>
Kernel int_strided_kernel_for(bool wide, int32_t dtype) {
  if (wide) return int_strided_kernel<KIND, true, 2>;
  return store_bytes(dtype) == 8 ? int_strided_kernel<KIND, false, 2>
                                 : int_strided_kernel<KIND, false, 4>;
}

template <int KIND>
Kernel float_kernel_for(int32_t dtype, bool dense) {
  switch (dtype) {
    case 5:
      return dense ? float_kernel<KIND, __half, true>
                   : float_kernel<KIND, __half, false>;
    case 6:
      return dense ? float_kernel<KIND, float, true>
                   : float_kernel<KIND, float, false>;
    case 7:
      return dense ? float_kernel<KIND, double, true>
                   : float_kernel<KIND, double, false>;
    case 15:
      return dense ? float_kernel<KIND, __nv_bfloat16, true>
                   : float_kernel<KIND, __nv_bfloat16, false>;
    default: return nullptr;
  }
}

Kernel kernel_for(const aotrun_fb_rand_job &j) {
  const bool dense = j.ndim == 0;
  const bool wide = j.per_block == 2;
  switch (j.kind) {
    case AOTRUN_FB_RAND_UNIFORM:
      return float_kernel_for<AOTRUN_FB_RAND_UNIFORM>(j.dtype, dense);
    case AOTRUN_FB_RAND_NORMAL:
      return float_kernel_for<AOTRUN_FB_RAND_NORMAL>(j.dtype, dense);
    case AOTRUN_FB_RAND_INT:
      if (!dense)
        return int_strided_kernel_for<AOTRUN_FB_RAND_INT>(wide, j.dtype);
      return wide ? int_dense_kernel_for<AOTRUN_FB_RAND_INT, true>(j.dtype)
                  : int_dense_kernel_for<AOTRUN_FB_RAND_INT, false>(j.dtype);
    case AOTRUN_FB_RAND_BERNOULLI:
      if (!dense)
        return int_strided_kernel_for<AOTRUN_FB_RAND_BERNOULLI>(false,
                                                                 j.dtype);
      return int_dense_kernel_for<AOTRUN_FB_RAND_BERNOULLI, false>(j.dtype);
    case AOTRUN_FB_RAND_BERNOULLI_P:
      // p is broadcast: always walked (ndim 0 only for one element).
      return int_strided_kernel_for<AOTRUN_FB_RAND_BERNOULLI_P>(false,
                                                                 j.dtype);
    case AOTRUN_FB_RAND_PERM_KEYS:
      if (j.key_bytes == 8)
        return j.val_bytes == 8 ? perm_keys_kernel<unsigned long long, int64_t>
                                : perm_keys_kernel<unsigned long long, int32_t>;
      return j.val_bytes == 8 ? perm_keys_kernel<unsigned int, int64_t>
                              : perm_keys_kernel<unsigned int, int32_t>;
    default: return nullptr;
  }
}

}  // namespace

extern "C" int64_t aotrun_fb_rand_blocks(const aotrun_fb_rand_job *j) {
  if (j->n <= 0 || j->per_block <= 0) return 0;
  return (j->n - 1) / j->per_block + 1;
}

extern "C" int aotrun_fb_rand_needs_ticket(const aotrun_fb_rand_job *j) {
  return aotrun_fb_rand_blocks(j) > AOTRUN_FB_RAND_FUSED_BLOCKS;
}

extern "C" cudaError_t aotrun_fb_rand_launch(const aotrun_fb_rand_job *j,
                                             unsigned long long *ticket,
                                             cudaStream_t stream) {
  const int64_t blocks = aotrun_fb_rand_blocks(j);
  if (blocks == 0) return cudaSuccess;
  Kernel k = kernel_for(*j);
  if (k == nullptr || j->state == nullptr) return cudaErrorInvalidValue;
  const bool fused = blocks <= AOTRUN_FB_RAND_FUSED_BLOCKS;
  if (fused) {
    int threads = blocks >= kFusedThreads
                      ? kFusedThreads
                      : static_cast<int>((blocks + 31) / 32 * 32);
    k<<<1, threads, 0, stream>>>(*j, nullptr,
                                 static_cast<unsigned long long>(blocks));
    return cudaGetLastError();
  }
  if (ticket == nullptr) return cudaErrorInvalidValue;
  reserve_kernel<<<1, 1, 0, stream>>>(
      j->state, static_cast<unsigned long long>(blocks), ticket);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  int64_t grid = (blocks + kThreads - 1) / kThreads;
  if (grid > kMaxGrid) grid = kMaxGrid;
  k<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(
      *j, ticket, static_cast<unsigned long long>(blocks));
  return cudaGetLastError();
}

extern "C" cudaError_t aotrun_fb_rand_convert_index(void *out, int32_t dtype,
                                                    const int64_t *src,
                                                    int64_t n,
                                                    cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  int64_t grid = (n + kThreads - 1) / kThreads;
  if (grid > kMaxGrid) grid = kMaxGrid;
  convert_index_kernel<<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(
      out, dtype, src, n);
  return cudaGetLastError();
}
