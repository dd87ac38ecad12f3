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

#include <curand_globals.h>
#include <curand_philox4x32_x.h>

#include "shim_lib/fallback/random_kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int kFusedThreads = 512;
constexpr int64_t kMaxGrid = 8192;  // a grid-stride loop covers the rest

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

// Offset of element k in out (and in p) for the strided case.
__device__ inline void element_offsets(const aotrun_fb_rand_job &j, int64_t k,
                                       int64_t *off, int64_t *poff) {
  if (j.ndim == 0) {
    *off = k;
    *poff = k;
    return;
  }
  int64_t rem = k, o = 0, po = 0;
  for (int d = j.ndim - 1; d >= 0; d--) {
    int64_t s = j.sizes[d];
    int64_t i = rem % s;
    rem /= s;
    o += i * j.strides[d];
    po += i * j.p_strides[d];
  }
  *off = o;
  *poff = po;
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

// ---- kernels ----

// uniform / normal into float dtype T; V values per Philox block.
template <int KIND, typename T>
__global__ void float_kernel(aotrun_fb_rand_job j,
                             const unsigned long long *ticket,
                             unsigned long long blocks) {
  using F = FloatT<T>;
  using op_t = typename F::op;
  constexpr bool kDouble = sizeof(op_t) == 8;
  constexpr int V = kDouble ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  const op_t a = static_cast<op_t>(j.a), b = static_cast<op_t>(j.b),
             c = static_cast<op_t>(j.c);
  T *out = static_cast<T *>(j.out);
  for (unsigned long long g = blockIdx.x * (unsigned long long)blockDim.x +
                              threadIdx.x;
       g < blocks; g += (unsigned long long)gridDim.x * blockDim.x) {
    uint4 r = philox_block(seed, base, g);
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
    for (int lane = 0; lane < V; lane++) {
      int64_t k = static_cast<int64_t>(g) * V + lane;
      if (k >= j.n) break;
      op_t x;
      if constexpr (KIND == AOTRUN_FB_RAND_UNIFORM) {
        // ATen: value = (scalar_t)(u * range + from); value == to ? from.
        x = F::round(v[lane] * c + a);
        if (x == b) x = a;
      } else {
        x = v[lane] * b + a;
      }
      int64_t off, poff;
      element_offsets(j, k, &off, &poff);
      out[off] = F::make(x);
    }
  }
}

// randint, bernoulli (scalar and tensor p) into any store dtype.
template <int KIND, bool WIDE>
__global__ void int_kernel(aotrun_fb_rand_job j,
                           const unsigned long long *ticket,
                           unsigned long long blocks) {
  constexpr int V = WIDE ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  for (unsigned long long g = blockIdx.x * (unsigned long long)blockDim.x +
                              threadIdx.x;
       g < blocks; g += (unsigned long long)gridDim.x * blockDim.x) {
    uint4 r = philox_block(seed, base, g);
#pragma unroll
    for (int lane = 0; lane < V; lane++) {
      int64_t k = static_cast<int64_t>(g) * V + lane;
      if (k >= j.n) break;
      int64_t off, poff;
      element_offsets(j, k, &off, &poff);
      int64_t v;
      if constexpr (KIND == AOTRUN_FB_RAND_INT) {
        unsigned long long d;
        if constexpr (WIDE) {
          unsigned long long bits =
              (static_cast<unsigned long long>(word(r, 2 * lane)) << 32) |
              word(r, 2 * lane + 1);
          d = __umul64hi(bits, j.range);
        } else {
          d = (static_cast<unsigned long long>(word(r, lane)) * j.range) >> 32;
        }
        v = static_cast<int64_t>(static_cast<unsigned long long>(j.low) + d);
      } else {
        double u = word(r, lane) * 2.3283064365386963e-10;  // [0, 1)
        double p = j.a;
        if constexpr (KIND == AOTRUN_FB_RAND_BERNOULLI_P) {
          p = load_p(j.p, j.p_dtype, poff);
          if (!(p >= 0.0 && p <= 1.0)) {
            report_bad_p(j, p, k);
            p = 0.0;
          }
        }
        v = u < p ? 1 : 0;
      }
      store_int(j.out, off, j.dtype, v);
    }
  }
}

// randperm: random keys and their positions 0..n-1 (dense).
template <typename K, typename I>
__global__ void perm_keys_kernel(aotrun_fb_rand_job j,
                                 const unsigned long long *ticket,
                                 unsigned long long blocks) {
  constexpr int V = sizeof(K) == 8 ? 2 : 4;
  const unsigned long long base = job_base(j.state, ticket, blocks);
  const unsigned long long seed = j.state->seed;
  K *keys = static_cast<K *>(j.out);
  I *pos = static_cast<I *>(j.out2);
  for (unsigned long long g = blockIdx.x * (unsigned long long)blockDim.x +
                              threadIdx.x;
       g < blocks; g += (unsigned long long)gridDim.x * blockDim.x) {
    uint4 r = philox_block(seed, base, g);
#pragma unroll
    for (int lane = 0; lane < V; lane++) {
      int64_t k = static_cast<int64_t>(g) * V + lane;
      if (k >= j.n) break;
      if constexpr (sizeof(K) == 8)
        keys[k] = (static_cast<unsigned long long>(word(r, 2 * lane)) << 32) |
                  word(r, 2 * lane + 1);
      else
        keys[k] = word(r, lane);
      pos[k] = static_cast<I>(k);
    }
  }
}

__global__ void convert_index_kernel(void *out, int32_t dtype,
                                     const int64_t *src, int64_t n) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n;
       k += (int64_t)gridDim.x * blockDim.x)
    store_int(out, k, dtype, src[k]);
}

using Kernel = void (*)(aotrun_fb_rand_job, const unsigned long long *,
                        unsigned long long);

template <int KIND>
Kernel float_kernel_for(int32_t dtype) {
  switch (dtype) {
    case 5: return float_kernel<KIND, __half>;
    case 6: return float_kernel<KIND, float>;
    case 7: return float_kernel<KIND, double>;
    case 15: return float_kernel<KIND, __nv_bfloat16>;
    default: return nullptr;
  }
}

Kernel kernel_for(const aotrun_fb_rand_job &j) {
  switch (j.kind) {
    case AOTRUN_FB_RAND_UNIFORM:
      return float_kernel_for<AOTRUN_FB_RAND_UNIFORM>(j.dtype);
    case AOTRUN_FB_RAND_NORMAL:
      return float_kernel_for<AOTRUN_FB_RAND_NORMAL>(j.dtype);
    case AOTRUN_FB_RAND_INT:
      return j.per_block == 2 ? int_kernel<AOTRUN_FB_RAND_INT, true>
                              : int_kernel<AOTRUN_FB_RAND_INT, false>;
    case AOTRUN_FB_RAND_BERNOULLI:
      return int_kernel<AOTRUN_FB_RAND_BERNOULLI, false>;
    case AOTRUN_FB_RAND_BERNOULLI_P:
      return int_kernel<AOTRUN_FB_RAND_BERNOULLI_P, false>;
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
