// attention_f32.cu: the register-tiled float32 attention forward
// (attention_f32.h), plain float math (no TF32: the model asked for
// float32). Same results as attention_kernels.cu's SIMT float32 kernel,
// which reads shared memory for every FMA; here each shared-memory float4
// feeds at least 8 FMAs (16 in the main loops at 64 keys per step).
//
// A block owns BM = 64 queries of one (batch, head) and walks tiles of BN
// keys (64; 32 for head dims over 128, to fit sm_80's shared memory), with
// 256 threads as a 16 x 16 grid (ty, tx):
// - S = Q K^T: thread (ty, tx) holds the 4 x BN/16 scores of rows 4ty + r
//   and keys tx + 16c, summed over float4 chunks of the head dim;
// - online softmax in float (exp2, scale * log2 e folded in): a row's 16
//   threads are one half-warp, so its max is 4 xor-shuffles; each thread
//   keeps its share of the row sum, reduced once at the end;
// - P goes to shared memory transposed (P^T[key][row]: one float4 holds a
//   thread's 4 rows), then O += P V with the thread's 4 rows x DP/16
//   columns (64g + 4tx + e) of O in registers;
// - Q and K rows are XOR-swizzled by 16-byte chunk (chunk q of row r at
//   q ^ 3 bits of r) so the S loop's float4 reads are conflict-free with
//   unpadded rows; P^T rows are padded by 4 for the same reason;
// - tiles come in with cp.async 16-byte copies when rows are 16-byte
//   aligned, else element loads; V[t] loads while S of tile t is computed,
//   K[t + 1] while P V of tile t is;
// - causal: tiles wholly above the diagonal are never visited; only tiles
//   that reach past S or cross the diagonal test keys; blocks start with
//   the heaviest (last) query tiles.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "shim_lib/fallback/attention_f32.h"
#include "shim_lib/fallback/attention_launch.cuh"
#include "shim_lib/fallback/attention_tc.cuh"

namespace {

using aotrun_attn_launch::allow_smem;

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kBM = 64;         // queries per block
constexpr int kThreads = 256;   // a 16 x 16 grid of threads
constexpr int kLdP = kBM + 4;   // P^T row stride: conflict-free float4 stores

// Dynamic shared memory of a block in floats: Q, K, V tiles, then P^T.
template <int DP, int BN>
constexpr int smem_floats() {
  return kBM * DP + 2 * BN * DP + BN * kLdP;
}

// cp.async, shared with the tensor-core kernels (attention_tc.cuh).
using aotrun_attn_tc::cp_async16;
using aotrun_attn_tc::cp_async_wait_all;

__device__ __forceinline__ void fma4(float4 &acc, float a, const float4 &b) {
  acc.x = fmaf(a, b.x, acc.x);
  acc.y = fmaf(a, b.y, acc.y);
  acc.z = fmaf(a, b.z, acc.z);
  acc.w = fmaf(a, b.w, acc.w);
}

__device__ __forceinline__ float dot4(const float4 &a, const float4 &b,
                                      float acc) {
  acc = fmaf(a.x, b.x, acc);
  acc = fmaf(a.y, b.y, acc);
  acc = fmaf(a.z, b.z, acc);
  return fmaf(a.w, b.w, acc);
}

// Swizzle key of tile row r: chunk q of the row is stored at q ^ key. SH
// picks the row bits that differ between the rows one warp-wide float4
// read touches (Q: 4ty and 4ty + 4, K: tx + 16c); SH < 0: unswizzled (V).
template <int SH>
__device__ __forceinline__ int swizzle_key(int r) {
  return SH < 0 ? 0 : (r >> (SH < 0 ? 0 : SH)) & 7;
}

// ROWS x DP floats of a [nrows, D] matrix (row stride g_sl), rows from
// row0, into shared memory (row stride DP, swizzled by SH); zeros past
// nrows and past D. vec: 16-byte cp.async copies (D % 4 == 0 and rows
// 16-byte aligned), else element loads.
template <int DP, int ROWS, int SH>
__device__ __forceinline__ void load_tile(float *s, const float *g,
                                          int64_t g_sl, int row0, int nrows,
                                          int D, bool vec) {
  constexpr int CPR = DP / 4;           // 16-byte chunks per row
  constexpr int RPP = kThreads / CPR;   // rows per pass
  static_assert(kThreads % CPR == 0 && ROWS % RPP == 0, "whole passes");
  // A thread keeps its chunk q: one column of addresses, few registers.
  const int q = threadIdx.x % CPR, d = q * 4;
#pragma unroll
  for (int r = threadIdx.x / CPR; r < ROWS; r += RPP) {
    float *dst = s + r * DP + ((q ^ swizzle_key<SH>(r)) << 2);
    const int gr = row0 + r;
    const bool row_ok = gr < nrows;
    if (vec) {
      const bool ok = row_ok && d < D;
      cp_async16(dst, ok ? g + (int64_t)gr * g_sl + d : g, ok ? 16 : 0);
    } else {
      const float *src = row_ok ? g + (int64_t)gr * g_sl : g;
      float4 v;
      v.x = row_ok && d < D ? src[d] : 0.f;
      v.y = row_ok && d + 1 < D ? src[d + 1] : 0.f;
      v.z = row_ok && d + 2 < D ? src[d + 2] : 0.f;
      v.w = row_ok && d + 3 < D ? src[d + 3] : 0.f;
      *reinterpret_cast<float4 *>(dst) = v;
    }
  }
}

// s[r][c] = Q row 4ty + r . K row tx + 16c over the first nq chunks of
// the head dim (chunks past D are zeros in both tiles).
template <int DP, int NC>
__device__ __forceinline__ void qk_tile(float (&s)[4][NC], const float *sQ,
                                        const float *sK, int ty, int tx,
                                        int nq) {
#pragma unroll
  for (int r = 0; r < 4; r++)
#pragma unroll
    for (int c = 0; c < NC; c++) s[r][c] = 0.f;
  const float *qa = sQ + ty * 4 * DP;
  const float *kb = sK + tx * DP;
  const int qkey = swizzle_key<2>(ty * 4), kkey = swizzle_key<0>(tx);
#pragma unroll 1  // unrolling spills at 128 registers (DP 128)
  for (int q = 0; q < nq; q++) {
    float4 a[4], k[NC];
#pragma unroll
    for (int r = 0; r < 4; r++)
      a[r] = *reinterpret_cast<const float4 *>(qa + r * DP + ((q ^ qkey) << 2));
#pragma unroll
    for (int c = 0; c < NC; c++)
      k[c] = *reinterpret_cast<const float4 *>(kb + c * 16 * DP +
                                               ((q ^ kkey) << 2));
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
      for (int c = 0; c < NC; c++) s[r][c] = dot4(a[r], k[c], s[r][c]);
  }
}

// Scores to log2 units: scale * log2 e, plus bias * log2 e. The bias row
// of a padding row (>= L) is row L - 1's; keys past S read no bias.
template <int NC, bool BIAS>
__device__ __forceinline__ void to_log2(float (&s)[4][NC],
                                        const aotrun_fb_attn_params &p,
                                        const float *bq, int row0, int n0,
                                        int tx, float sl2) {
  if (!BIAS) {
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
      for (int c = 0; c < NC; c++) s[r][c] *= sl2;
    return;
  }
  const bool all_keys = n0 + 16 * NC <= p.S;
#pragma unroll
  for (int r = 0; r < 4; r++) {
    const float *br = bq + (int64_t)min(row0 + r, p.L - 1) * p.b_sl;
#pragma unroll
    for (int c = 0; c < NC; c++) {
      const int j = n0 + tx + 16 * c;
      const float bv = all_keys || j < p.S ? br[(int64_t)j * p.b_ss] : 0.f;
      s[r][c] = fmaf(s[r][c], sl2, bv * kLog2e);
    }
  }
}

// Keys past S and, with a causal mask, keys right of row i's diagonal
// (j > i + off) get -inf.
template <int NC>
__device__ __forceinline__ void mask_keys(float (&s)[4][NC], int row0, int n0,
                                          int tx, int S, int causal,
                                          int off) {
#pragma unroll
  for (int r = 0; r < 4; r++)
#pragma unroll
    for (int c = 0; c < NC; c++) {
      const int j = n0 + tx + 16 * c;
      if (j >= S || (causal && j > row0 + r + off)) s[r][c] = -INFINITY;
    }
}

// Online softmax of the tile: new running max m (a row with no key yet
// keeps -inf and exponentiates against 0), l and O rescaled by
// exp2(m_old - m), s turned into exp2(s - m) and added to this thread's
// share of l.
template <int NC, int NG>
__device__ __forceinline__ void softmax_tile(float (&s)[4][NC], float (&m)[4],
                                             float (&l)[4],
                                             float4 (&o)[4][NG]) {
#pragma unroll
  for (int r = 0; r < 4; r++) {
    float mx = m[r];
#pragma unroll
    for (int c = 0; c < NC; c++) mx = fmaxf(mx, s[r][c]);
#pragma unroll
    for (int w = 1; w < 16; w <<= 1)  // the row's half-warp
      mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, w));
    const float base = mx == -INFINITY ? 0.f : mx;
    const float alpha = exp2f(m[r] - base);
    m[r] = mx;
    float rs = 0.f;
#pragma unroll
    for (int c = 0; c < NC; c++) {
      s[r][c] = exp2f(s[r][c] - base);
      rs += s[r][c];
    }
    l[r] = l[r] * alpha + rs;
#pragma unroll
    for (int g = 0; g < NG; g++) {
      o[r][g].x *= alpha;
      o[r][g].y *= alpha;
      o[r][g].z *= alpha;
      o[r][g].w *= alpha;
    }
  }
}

// P^T[key][row]: the thread's 4 rows of key tx + 16c as one float4.
template <int NC>
__device__ __forceinline__ void store_p(float *sP, const float (&s)[4][NC],
                                        int ty, int tx) {
#pragma unroll
  for (int c = 0; c < NC; c++)
    *reinterpret_cast<float4 *>(sP + (tx + 16 * c) * kLdP + ty * 4) =
        make_float4(s[0][c], s[1][c], s[2][c], s[3][c]);
}

// O[4ty + r][64g + 4tx + e] += sum over the tile's keys of P * V.
template <int DP, int BN, int NG>
__device__ __forceinline__ void pv_tile(float4 (&o)[4][NG], const float *sP,
                                        const float *sV, int ty, int tx) {
  const float *pt = sP + ty * 4;
  const float *vb = sV + tx * 4;
#pragma unroll 4
  for (int j = 0; j < BN; j++) {
    const float4 pr = *reinterpret_cast<const float4 *>(pt + j * kLdP);
#pragma unroll
    for (int g = 0; g < NG; g++) {
      const float4 v = *reinterpret_cast<const float4 *>(vb + j * DP + 64 * g);
      fma4(o[0][g], pr.x, v);
      fma4(o[1][g], pr.y, v);
      fma4(o[2][g], pr.z, v);
      fma4(o[3][g], pr.w, v);
    }
  }
}

// Keys [0, n) that some row of the block starting at m0 sees.
__device__ __forceinline__ int visible_keys(const aotrun_fb_attn_params &p,
                                            int m0, int off) {
  if (!p.causal) return p.S;
  const long long lim = (long long)min(m0 + kBM, p.L) + off;  // last row + 1
  return (int)max(0LL, min((long long)p.S, lim));
}

// O / l into out (rows < L, columns < D), lse (natural log; empty_lse for
// a row without keys, +inf for rows [L, lse_pad)). Every lane of the warp
// must call it (the l shuffles).
template <int NG>
__device__ __forceinline__ void store_rows(const aotrun_fb_attn_params &p,
                                           float4 (&o)[4][NG],
                                           const float (&m)[4], float (&l)[4],
                                           int b, int h, int row0, int tx,
                                           bool vec_out) {
#pragma unroll
  for (int r = 0; r < 4; r++)
#pragma unroll
    for (int w = 1; w < 16; w <<= 1) l[r] += __shfl_xor_sync(kFull, l[r], w);
  float *go = static_cast<float *>(p.out) + b * p.o_sb + h * p.o_sh;
#pragma unroll
  for (int r = 0; r < 4; r++) {
    const int row = row0 + r;
    if (row >= p.L) continue;
    float *orow = go + (int64_t)row * p.o_sl;
    const float inv = l[r] == 0.f ? 1.f : 1.f / l[r];
#pragma unroll
    for (int g = 0; g < NG; g++) {
      const int col = 64 * g + 4 * tx;
      if (col >= p.D) continue;
      const float4 x = make_float4(o[r][g].x * inv, o[r][g].y * inv,
                                   o[r][g].z * inv, o[r][g].w * inv);
      if (vec_out) {  // D % 4 == 0: the whole float4 is inside the row
        *reinterpret_cast<float4 *>(orow + col) = x;
      } else {
        orow[col] = x.x;
        if (col + 1 < p.D) orow[col + 1] = x.y;
        if (col + 2 < p.D) orow[col + 2] = x.z;
        if (col + 3 < p.D) orow[col + 3] = x.w;
      }
    }
  }
  if (p.lse == nullptr || tx != 0) return;
  float *gl = p.lse + b * p.lse_sb + h * p.lse_sh;
#pragma unroll
  for (int r = 0; r < 4; r++) {
    const int row = row0 + r;
    if (row < p.L)
      gl[row] = l[r] == 0.f ? p.empty_lse : m[r] * kLn2 + logf(l[r]);
    else if (row < p.lse_pad)
      gl[row] = INFINITY;
  }
}

template <int DP, int BN, bool BIAS>
__global__ void __launch_bounds__(kThreads, DP > 128 ? 1 : 2)
    attn_f32_tiled(const aotrun_fb_attn_params p, int vec, int vec_out) {
  constexpr int NC = BN / 16;  // key columns of S per thread
  constexpr int NG = DP / 64;  // float4 column groups of O per thread
  extern __shared__ __align__(16) float smem_f[];
  float *sQ = smem_f;
  float *sK = sQ + kBM * DP;
  float *sV = sK + BN * DP;
  float *sP = sV + BN * DP;

  const int tid = threadIdx.x, ty = tid >> 4, tx = tid & 15;
  const int bh = blockIdx.x;
  const int b = bh / p.Hq, h = bh % p.Hq;
  const int hk = h / (p.Hq / p.Hkv);
  const int m0 = (gridDim.y - 1 - blockIdx.y) * kBM;  // heaviest first
  const int L = p.L, S = p.S, D = p.D;
  const int off = p.causal == AOTRUN_FB_ATTN_BOTTOM_RIGHT ? S - L : 0;
  const int ntiles = (visible_keys(p, m0, off) + BN - 1) / BN;
  const int row0 = m0 + ty * 4, nq = (D + 3) >> 2;
  const float sl2 = p.scale * kLog2e;

  const float *gq = static_cast<const float *>(p.q) + b * p.q_sb + h * p.q_sh;
  const float *gk =
      static_cast<const float *>(p.k) + b * p.k_sb + hk * p.k_sh;
  const float *gv =
      static_cast<const float *>(p.v) + b * p.v_sb + hk * p.v_sh;
  const float *bq = BIAS ? static_cast<const float *>(p.bias) + b * p.b_sb +
                               h * p.b_sh
                         : nullptr;

  float4 o[4][NG];
  float m[4], l[4];
#pragma unroll
  for (int r = 0; r < 4; r++) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int g = 0; g < NG; g++) o[r][g] = make_float4(0.f, 0.f, 0.f, 0.f);
  }

  if (ntiles > 0) {
    load_tile<DP, kBM, 2>(sQ, gq, p.q_sl, m0, L, D, vec);
    load_tile<DP, BN, 0>(sK, gk, p.k_sl, 0, S, D, vec);
  }
  for (int t = 0; t < ntiles; t++) {
    const int n0 = t * BN;
    cp_async_wait_all();
    __syncthreads();  // K[t] (and Q) in; every thread done with P V of t - 1
    load_tile<DP, BN, -1>(sV, gv, p.v_sl, n0, S, D, vec);
    float s[4][NC];
    qk_tile<DP, NC>(s, sQ, sK, ty, tx, nq);
    to_log2<NC, BIAS>(s, p, bq, row0, n0, tx, sl2);
    if (n0 + BN > S || (p.causal && n0 + BN - 1 > m0 + off))
      mask_keys<NC>(s, row0, n0, tx, S, p.causal, off);
    softmax_tile<NC, NG>(s, m, l, o);
    store_p<NC>(sP, s, ty, tx);
    cp_async_wait_all();
    __syncthreads();  // V[t] and P in; every thread done with K[t]
    if (t + 1 < ntiles)
      load_tile<DP, BN, 0>(sK, gk, p.k_sl, n0 + BN, S, D, vec);
    pv_tile<DP, BN, NG>(o, sP, sV, ty, tx);
  }
  store_rows<NG>(p, o, m, l, b, h, row0, tx, vec_out != 0);
}

bool aligned16(const void *x) { return ((uintptr_t)x & 15) == 0; }

// cp.async 16-byte copies need every row of q, k, v 16-byte aligned.
bool rows_aligned16(const aotrun_fb_attn_params &p) {
  return p.D % 4 == 0 && aligned16(p.q) && aligned16(p.k) &&
         aligned16(p.v) && p.q_sb % 4 == 0 && p.q_sh % 4 == 0 &&
         p.q_sl % 4 == 0 && p.k_sb % 4 == 0 && p.k_sh % 4 == 0 &&
         p.k_sl % 4 == 0 && p.v_sb % 4 == 0 && p.v_sh % 4 == 0 &&
         p.v_sl % 4 == 0;
}

bool out_rows_aligned16(const aotrun_fb_attn_params &p) {
  return p.D % 4 == 0 && aligned16(p.out) && p.o_sb % 4 == 0 &&
         p.o_sh % 4 == 0 && p.o_sl % 4 == 0;
}

template <int DP, int BN, bool BIAS>
cudaError_t launch(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  static unsigned long long done = 0;
  constexpr size_t smem = smem_floats<DP, BN>() * sizeof(float);
  auto kernel = attn_f32_tiled<DP, BN, BIAS>;
  cudaError_t e = allow_smem(kernel, smem, &done);
  if (e != cudaSuccess) return e;
  dim3 grid((unsigned)(p.B * p.Hq), (unsigned)((p.L + kBM - 1) / kBM));
  kernel<<<grid, kThreads, smem, stream>>>(p, rows_aligned16(p) ? 1 : 0,
                                           out_rows_aligned16(p) ? 1 : 0);
  return cudaGetLastError();
}

template <int DP, int BN>
cudaError_t launch_dp(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  return p.bias ? launch<DP, BN, true>(p, stream)
                : launch<DP, BN, false>(p, stream);
}

}  // namespace

extern "C" int aotrun_fb_attention_f32_tiled_fits(
    const aotrun_fb_attn_params *p) {
  const size_t floats = p->D <= 64    ? smem_floats<64, 64>()
                        : p->D <= 128 ? smem_floats<128, 64>()
                                      : smem_floats<256, 32>();
  return floats * sizeof(float) <= aotrun_attn_launch::device_smem_limit();
}

extern "C" cudaError_t aotrun_fb_attention_f32_tiled(
    const aotrun_fb_attn_params *p, cudaStream_t stream) {
  // The same checks, in the same order, as aotrun_fb_attention.
  if ((int64_t)p->B * p->Hq == 0 || p->L == 0) return cudaSuccess;
  if (p->D < 1 || p->D > AOTRUN_FB_ATTN_MAX_D || p->Hkv < 1 ||
      p->Hq % p->Hkv != 0 || (int64_t)p->B * p->Hq > 0x7fffffff ||
      ((int64_t)p->L + 31) / 32 > 65535 || p->dtype != 6)
    return cudaErrorInvalidValue;
  if (p->D <= 64) return launch_dp<64, 64>(*p, stream);
  if (p->D <= 128) return launch_dp<128, 64>(*p, stream);
  return launch_dp<256, 32>(*p, stream);  // BN 32: 137 KiB fits sm_80
}
