// attention_wide.cu: the "wide" tensor-core attention forward, the default
// for float16 / bfloat16 with D <= 128 (attention_wide.h).
// Same results and contract as attention_kernels.cu's attn_fwd_tc; what
// differs is the work per warp and the pipeline:
// - a block owns BM = 128 queries of one (batch, head) with 4 warps; warp w
//   the 32 rows [32w, 32w + 32) as two m16 row groups, so each K / V
//   fragment read from shared memory (ldmatrix) feeds 4 mma instead of 2;
// - K, V (and, with a bias, a BM x BN bias tile) are double buffered, each
//   tile in its own cp.async group: K(t+1) is issued before S = Q K(t)^T
//   and V(t+1) (with the bias tile) before O += P V(t), so every load has a
//   whole iteration to land, with two barriers per key tile as before;
// - the bias is read from that shared-memory tile (conflict free 4-byte
//   pairs) instead of from global memory per score;
// - a warp masks only tiles that reach past S or its own rows' diagonal;
// - exp2 through ex2.approx.ftz (a flushed denormal is below what P, l or
//   the output can hold next to the row maximum's 1).
// Blocks start with the heaviest (last) query tiles, as attn_fwd_tc does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "shim_lib/fallback/attention_kernels.h"
#include "shim_lib/fallback/attention_launch.cuh"
#include "shim_lib/fallback/attention_tc.cuh"
#include "shim_lib/fallback/attention_wide.h"

namespace {

using namespace aotrun_attn_tc;

constexpr int kNW = 4;              // warps per block
constexpr int kRG = 2;              // m16 row groups per warp
constexpr int kWM = 16 * kRG;       // query rows per warp
constexpr int kBM = kWM * kNW;      // query rows per block
constexpr int kNT = 32 * kNW;       // threads per block

// Shared-memory layout in uint16 elements: Q [BM][LDS], K [2][BN][LDS],
// V [2][BN][LDS], bias [2][BM][LDB]. Rows padded by 8 elements (16 bytes)
// so that ldmatrix rows and the bias pairs fall in distinct banks.
template <int DP, int BN, bool BIAS>
struct WideSmem {
  static constexpr int LDS = DP + 8, LDB = BN + 8;
  static constexpr int kQ = 0, kK = kBM * LDS, kV = kK + 2 * BN * LDS,
                       kB = kV + 2 * BN * LDS;
  static constexpr int kElems = kB + (BIAS ? 2 * kBM * LDB : 0);
  static constexpr size_t kBytes = (size_t)kElems * 2;
};

__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Packs 8 elements into one 16-byte shared-memory store.
__device__ __forceinline__ void store8(uint16_t *dst, const uint16_t (&v)[8]) {
  uint4 w;
  w.x = v[0] | ((uint32_t)v[1] << 16);
  w.y = v[2] | ((uint32_t)v[3] << 16);
  w.z = v[4] | ((uint32_t)v[5] << 16);
  w.w = v[6] | ((uint32_t)v[7] << 16);
  *reinterpret_cast<uint4 *>(dst) = w;
}

// BM x BN bias tile (rows row0.., keys col0..) into shared memory (row
// stride LDB); zeros past L and S. bvec: 16-byte cp.async chunks (key
// stride 1, 16-byte aligned rows), a chunk cut at S copying only its keys;
// else element loads (any strides, 0 on broadcast dims). Same stepping as
// load_rows.
template <int BN, int LDB>
__device__ __forceinline__ void load_bias_tile(uint16_t *s, const uint16_t *g,
                                               int64_t sl, int64_t ss,
                                               int row0, int L, int col0,
                                               int S, bool bvec, int tid) {
  constexpr int CPR = BN / 8, RPP = kNT / CPR;
  static_assert(kNT % CPR == 0 && kBM % RPP == 0, "whole passes");
  const int gc = col0 + (tid % CPR) * 8;
  int gr = row0 + tid / CPR;
  const uint16_t *src = g + (int64_t)gr * sl + (int64_t)gc * ss;
  uint16_t *dst = s + (tid / CPR) * LDB + (tid % CPR) * 8;
  const int64_t step = (int64_t)RPP * sl;
  const int nk = min(max(S - gc, 0), 8);  // keys of the chunk below S
#pragma unroll 1
  for (int k = 0; k < kBM / RPP; k++) {
    const int n = gr < L ? nk : 0;
    if (bvec) {
      cp_async16(dst, n > 0 ? src : g, 2 * n);
    } else {
      uint16_t v[8];
#pragma unroll
      for (int e = 0; e < 8; e++) v[e] = e < n ? src[e * ss] : 0;
      store8(dst, v);
    }
    gr += RPP;
    src += step;
    dst += RPP * LDB;
  }
}

// ROWS x DP elements of a [nrows, D] matrix (row stride g_sl) from row0
// into shared memory (row stride LDS); zeros past nrows and D. Thread tid
// copies chunk column tid % CPR of rows tid / CPR + k * RPP, stepping one
// pointer: a loop the compiler does not unroll, so that it keeps no address
// per chunk live across the key loop (registers the accumulators need).
template <int DP, int ROWS, int LDS>
__device__ __forceinline__ void load_rows(uint16_t *s, const uint16_t *g,
                                          int64_t g_sl, int row0, int nrows,
                                          int D, bool vec, int tid) {
  constexpr int CPR = DP / 8, RPP = kNT / CPR;  // chunks per row, rows per pass
  static_assert(kNT % CPR == 0 && ROWS % RPP == 0, "whole passes");
  const int col = (tid % CPR) * 8;
  int gr = row0 + tid / CPR;
  const uint16_t *src = g + (int64_t)gr * g_sl + col;
  uint16_t *dst = s + (tid / CPR) * LDS + col;
  const int64_t step = (int64_t)RPP * g_sl;
  const bool col_ok = col < D;
#pragma unroll 1
  for (int k = 0; k < ROWS / RPP; k++) {
    const bool ok = gr < nrows && col_ok;
    if (vec) {
      cp_async16(dst, ok ? src : g, ok ? 16 : 0);
    } else {
      uint16_t v[8];
#pragma unroll
      for (int e = 0; e < 8; e++)
        v[e] = (gr < nrows && col + e < D) ? src[e] : 0;
      store8(dst, v);
    }
    gr += RPP;
    src += step;
    dst += RPP * LDS;
  }
}

// A fragment (16 rows x 16 d) of row group r at k step kk: ldmatrix x4
// matrices (rows 0-7 | 8-15) x (d 0-7 | 8-15) in the mma's a0..a3 order.
template <int LDS>
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const uint16_t *q_warp,
                                       int r, int kk, int lane) {
  ldsm_x4(a, q_warp + (16 * r + (lane & 7) + ((lane >> 3) & 1) * 8) * LDS +
                 kk * 16 + (lane >> 4) * 8);
}

// S = Q K^T for the warp's 2 x 16 rows and BN keys. Each K fragment
// (16 keys x 16 d) is read once and used by both row groups.
template <typename T, int DP, int BN, bool QREG>
__device__ __forceinline__ void qk_tile(
    float (&s)[kRG][BN / 8][4],
    const uint32_t (&qf)[QREG ? kRG : 1][QREG ? DP / 16 : 1][4],
    const uint16_t *q_warp, const uint16_t *ks, int lane) {
  constexpr int LDS = DP + 8;
  const T tag{};
#pragma unroll
  for (int r = 0; r < kRG; r++)
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
      s[r][j][0] = s[r][j][1] = s[r][j][2] = s[r][j][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < DP / 16; kk++) {
    uint32_t a[kRG][4];
#pragma unroll
    for (int r = 0; r < kRG; r++) {
      if (QREG) {
#pragma unroll
        for (int e = 0; e < 4; e++)
          a[r][e] = qf[QREG ? r : 0][QREG ? kk : 0][e];
      } else {
        load_a<LDS>(a[r], q_warp, r, kk, lane);
      }
    }
#pragma unroll
    for (int nn = 0; nn < BN / 16; nn++) {
      // matrices (keys 0-7 | 8-15) x (d 0-7 | 8-15): b0, b1 of key tile
      // 2nn, then of 2nn + 1.
      uint32_t b[4];
      ldsm_x4(b, ks + (nn * 16 + (lane & 7) + (lane >> 4) * 8) * LDS +
                     kk * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
      for (int r = 0; r < kRG; r++) {
        mma16816(tag, s[r][2 * nn], a[r], b[0], b[1]);
        mma16816(tag, s[r][2 * nn + 1], a[r], b[2], b[3]);
      }
    }
  }
}

// Scores to log2 units: s * scale * log2(e) (+ bias * log2(e)). The bias
// tile's warp rows start at bs; accumulator (r, j, e) is row 16r + g +
// 8(e >> 1), key 8j + 2 tig + (e & 1), so e = 0, 1 are one 4-byte pair.
template <typename T, int BN, bool BIAS>
__device__ __forceinline__ void to_log2(float (&s)[kRG][BN / 8][4],
                                        const uint16_t *bs, float sl2,
                                        int lane) {
  constexpr int LDB = BN + 8;
  const T tag{};
  const int g = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int r = 0; r < kRG; r++)
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float b0 = 0.f, b1 = 0.f;
        if (BIAS) {
          const uint32_t w = *reinterpret_cast<const uint32_t *>(
              bs + (16 * r + g + 8 * h) * LDB + j * 8 + 2 * tig);
          b0 = to_float(tag, (uint16_t)(w & 0xffffu));
          b1 = to_float(tag, (uint16_t)(w >> 16));
        }
        float &x0 = s[r][j][2 * h], &x1 = s[r][j][2 * h + 1];
        if (BIAS) {
          x0 = x0 * sl2 + b0 * kLog2e;
          x1 = x1 * sl2 + b1 * kLog2e;
        } else {
          x0 *= sl2;
          x1 *= sl2;
        }
      }
}

// Keys [0, result) are visible to some of rows [first, last] (causal).
__device__ __forceinline__ int visible_end(const aotrun_fb_attn_params &p,
                                           int last, int off) {
  if (!p.causal) return p.S;
  return (int)max(0LL, min((long long)p.S, (long long)last + off + 1));
}

// -inf for keys past S or past a row's diagonal; accumulator (r, j, e) is
// row row0 + 16r + 8(e >> 1) (row0: the warp's first row + g), key n0 + 8j
// + 2 tig + (e & 1). The limits are recomputed here (masked tiles are few)
// rather than kept in registers across the key loop.
template <int BN>
__device__ __forceinline__ void mask_tile(float (&s)[kRG][BN / 8][4],
                                          const aotrun_fb_attn_params &p,
                                          int n0, int row0, int off,
                                          int lane) {
  const int tig = lane & 3;
#pragma unroll
  for (int q = 0; q < 2 * kRG; q++) {
    const int r = q >> 1, h = q & 1;
    const int lim = visible_end(p, row0 + 16 * r + 8 * h, off) - 1;
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
      for (int e = 0; e < 2; e++)
        if (n0 + j * 8 + 2 * tig + e > lim) s[r][j][2 * h + e] = -INFINITY;
  }
}

// Online softmax over one tile: new running maxima (the 4 lanes of a row
// hold its keys), O and l rescaled, s turned into probabilities.
template <int BN, int DP>
__device__ __forceinline__ void softmax_tile(float (&s)[kRG][BN / 8][4],
                                             float (&m_r)[2 * kRG],
                                             float (&l_r)[2 * kRG],
                                             float (&o)[kRG][DP / 8][4]) {
#pragma unroll
  for (int r = 0; r < kRG; r++) {
    float mx[2] = {m_r[2 * r], m_r[2 * r + 1]};
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
      mx[0] = fmaxf(mx[0], fmaxf(s[r][j][0], s[r][j][1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[r][j][2], s[r][j][3]));
    }
    float alpha[2], base[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; h++) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 2));
      base[h] = mx[h] == -INFINITY ? 0.f : mx[h];
      alpha[h] = exp2_ftz(m_r[2 * r + h] - base[h]);
      m_r[2 * r + h] = mx[h];
    }
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
#pragma unroll
      for (int e = 0; e < 4; e++) {
        s[r][j][e] = exp2_ftz(s[r][j][e] - base[e >> 1]);
        rs[e >> 1] += s[r][j][e];
      }
    }
#pragma unroll
    for (int h = 0; h < 2; h++)
      l_r[2 * r + h] = l_r[2 * r + h] * alpha[h] + rs[h];
#pragma unroll
    for (int i = 0; i < DP / 8; i++) {
      o[r][i][0] *= alpha[0];
      o[r][i][1] *= alpha[0];
      o[r][i][2] *= alpha[1];
      o[r][i][3] *= alpha[1];
    }
  }
}

// O += P V. P's A fragment for keys [16kc, 16kc + 16) is the accumulator
// pair of key tiles 2kc, 2kc + 1 re-packed; each V fragment (ldmatrix
// .trans: (keys 0-7 | 8-15) x (d 0-7 | 8-15)) feeds both row groups.
template <typename T, int DP, int BN>
__device__ __forceinline__ void pv_tile(float (&o)[kRG][DP / 8][4],
                                        const float (&s)[kRG][BN / 8][4],
                                        const uint16_t *vs, int lane) {
  constexpr int LDS = DP + 8;
  const T tag{};
#pragma unroll
  for (int kc = 0; kc < BN / 16; kc++) {
    uint32_t pa[kRG][4];
#pragma unroll
    for (int r = 0; r < kRG; r++) {
      pa[r][0] = pack2(tag, s[r][2 * kc][0], s[r][2 * kc][1]);
      pa[r][1] = pack2(tag, s[r][2 * kc][2], s[r][2 * kc][3]);
      pa[r][2] = pack2(tag, s[r][2 * kc + 1][0], s[r][2 * kc + 1][1]);
      pa[r][3] = pack2(tag, s[r][2 * kc + 1][2], s[r][2 * kc + 1][3]);
    }
#pragma unroll
    for (int dn = 0; dn < DP / 16; dn++) {
      uint32_t b[4];
      ldsm_x4_t(b, vs + (kc * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDS +
                       dn * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int r = 0; r < kRG; r++) {
        mma16816(tag, o[r][2 * dn], pa[r], b[0], b[1]);
        mma16816(tag, o[r][2 * dn + 1], pa[r], b[2], b[3]);
      }
    }
  }
}

// O / l into out rows row0 + 16r + g + 8h (< L), columns < D: 4-byte pairs
// where pair_store allows, else elements.
template <typename T, int DP>
__device__ __forceinline__ void store_out(const float (&o)[kRG][DP / 8][4],
                                          const float (&l_r)[2 * kRG],
                                          uint16_t *go, int64_t o_sl,
                                          int row0, int L, int D,
                                          bool pair_store, int lane) {
  const T tag{};
  const int g = lane >> 2, tig = lane & 3;
#pragma unroll
  for (int r = 0; r < kRG; r++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int row = row0 + 16 * r + g + 8 * h;
      if (row >= L) continue;
      const float l = l_r[2 * r + h], inv = l == 0.f ? 1.f : 1.f / l;
      uint16_t *orow = go + (int64_t)row * o_sl;
#pragma unroll
      for (int i = 0; i < DP / 8; i++) {
        const int col = i * 8 + 2 * tig;
        if (col >= D) continue;
        const float x0 = o[r][i][2 * h] * inv, x1 = o[r][i][2 * h + 1] * inv;
        if (pair_store && col + 1 < D) {
          *reinterpret_cast<uint32_t *>(orow + col) = pack2(tag, x0, x1);
        } else {
          orow[col] = from_float(tag, x0);
          if (col + 1 < D) orow[col + 1] = from_float(tag, x1);
        }
      }
    }
}

// lse (natural log) of rows < L, +inf for rows [L, lse_pad); one lane of
// the 4 that hold a row writes it.
__device__ __forceinline__ void store_lse(const aotrun_fb_attn_params &p,
                                          const float (&m_r)[2 * kRG],
                                          const float (&l_r)[2 * kRG],
                                          int b, int h, int row0, int lane) {
  if (!p.lse || (lane & 3) != 0) return;
  float *gl = p.lse + b * p.lse_sb + h * p.lse_sh;
#pragma unroll
  for (int q = 0; q < 2 * kRG; q++) {
    const int row = row0 + 16 * (q >> 1) + (lane >> 2) + 8 * (q & 1);
    if (row < p.L)
      gl[row] = l_r[q] == 0.f ? p.empty_lse : m_r[q] * kLn2 + logf(l_r[q]);
    else if (row < p.lse_pad)
      gl[row] = INFINITY;
  }
}

template <typename T, int DP, int BN, bool QREG, bool BIAS>
__global__ void __launch_bounds__(kNT)
    attn_fwd_wide(const aotrun_fb_attn_params p, int vec, int pair_store,
                  int bias_vec) {
  using Sm = WideSmem<DP, BN, BIAS>;
  constexpr int LDS = Sm::LDS, LDB = Sm::LDB;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  uint16_t *sm = reinterpret_cast<uint16_t *>(smem_raw);
  uint16_t *sQ = sm + Sm::kQ, *sK = sm + Sm::kK, *sV = sm + Sm::kV;
  uint16_t *sB = sm + Sm::kB;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int bh = blockIdx.x;
  const int b = bh / p.Hq, h = bh % p.Hq;
  const int hk = h / (p.Hq / p.Hkv);
  const int m0 = (gridDim.y - 1 - blockIdx.y) * kBM;
  const int L = p.L, S = p.S, D = p.D;
  const int off = p.causal == AOTRUN_FB_ATTN_BOTTOM_RIGHT ? S - L : 0;

  const uint16_t *gq = static_cast<const uint16_t *>(p.q) + b * p.q_sb +
                       h * p.q_sh;
  const uint16_t *gk = static_cast<const uint16_t *>(p.k) + b * p.k_sb +
                       hk * p.k_sh;
  const uint16_t *gv = static_cast<const uint16_t *>(p.v) + b * p.v_sb +
                       hk * p.v_sh;
  const uint16_t *gb =
      BIAS ? static_cast<const uint16_t *>(p.bias) + b * p.b_sb + h * p.b_sh
           : nullptr;

  // Key tiles some row of the block sees; keys [0, nomask_end) every row
  // of the warp's [wr0, wr0 + 32) sees (the first row's, later rows see
  // more). Tiles the warp's rows cannot see are computed and masked anyway:
  // skipping them per warp (a branch around S = Q K^T) cost the D = 128
  // tile its last registers (spills).
  const int ntiles = (visible_end(p, min(m0 + kBM, L) - 1, off) + BN - 1) / BN;
  const int wr0 = m0 + warp * kWM;
  const int nomask_end = visible_end(p, wr0, off);

  // cp.async groups in order: (Q, K(0)), (V(0), bias(0)), then per tile t
  // K(t + 1), (V(t + 1), bias(t + 1)); empty groups keep the count.
  load_rows<DP, kBM, LDS>(sQ, gq, p.q_sl, m0, L, D, vec, tid);
  if (ntiles > 0) load_rows<DP, BN, LDS>(sK, gk, p.k_sl, 0, S, D, vec, tid);
  cp_async_commit();
  if (ntiles > 0) {
    load_rows<DP, BN, LDS>(sV, gv, p.v_sl, 0, S, D, vec, tid);
    if (BIAS)
      load_bias_tile<BN, LDB>(sB, gb, p.b_sl, p.b_ss, m0, L, 0, S, bias_vec,
                              tid);
  }
  cp_async_commit();

  float o[kRG][DP / 8][4];
#pragma unroll
  for (int r = 0; r < kRG; r++)
#pragma unroll
    for (int i = 0; i < DP / 8; i++)
      o[r][i][0] = o[r][i][1] = o[r][i][2] = o[r][i][3] = 0.f;
  float m_r[2 * kRG], l_r[2 * kRG];
#pragma unroll
  for (int q = 0; q < 2 * kRG; q++) m_r[q] = -INFINITY, l_r[q] = 0.f;
  uint32_t qf[QREG ? kRG : 1][QREG ? DP / 16 : 1][4];
  const uint16_t *q_warp = sQ + warp * kWM * LDS;
  const float sl2 = p.scale * kLog2e;

  for (int t = 0; t < ntiles; t++) {
    const int buf = t & 1, nb = buf ^ 1, n0 = t * BN;
    cp_async_wait<1>();  // K(t) (and Q) landed; V(t) may be in flight
    __syncthreads();     // ... for every thread; tile t - 1 fully used
    // Tile t + 1 into the buffers tile t - 1 used, K and V in separate
    // groups, issued before S is live (the element-load path needs
    // registers too).
    if (t + 1 < ntiles)
      load_rows<DP, BN, LDS>(sK + nb * BN * LDS, gk, p.k_sl, n0 + BN, S, D,
                             vec, tid);
    cp_async_commit();
    if (t + 1 < ntiles) {
      load_rows<DP, BN, LDS>(sV + nb * BN * LDS, gv, p.v_sl, n0 + BN, S, D,
                             vec, tid);
      if (BIAS)
        load_bias_tile<BN, LDB>(sB + nb * kBM * LDB, gb, p.b_sl, p.b_ss, m0,
                                L, n0 + BN, S, bias_vec, tid);
    }
    cp_async_commit();
    if (QREG && t == 0) {
#pragma unroll
      for (int r = 0; r < kRG; r++)
#pragma unroll
        for (int kk = 0; kk < DP / 16; kk++)
          load_a<LDS>(qf[QREG ? r : 0][QREG ? kk : 0], q_warp, r, kk, lane);
    }
    float s[kRG][BN / 8][4];
    qk_tile<T, DP, BN, QREG>(s, qf, q_warp, sK + buf * BN * LDS, lane);
    cp_async_wait<2>();  // V(t) and the bias tile landed (not tile t + 1)
    __syncthreads();
    to_log2<T, BN, BIAS>(s, sB + buf * kBM * LDB + warp * kWM * LDB, sl2,
                         lane);
    if (n0 + BN > nomask_end)  // warp-uniform
      mask_tile<BN>(s, p, n0, wr0 + (lane >> 2), off, lane);
    softmax_tile<BN, DP>(s, m_r, l_r, o);
    pv_tile<T, DP, BN>(o, s, sV + buf * BN * LDS, lane);
  }
  cp_async_wait<0>();

#pragma unroll
  for (int q = 0; q < 2 * kRG; q++) {
    l_r[q] += __shfl_xor_sync(kFull, l_r[q], 1);
    l_r[q] += __shfl_xor_sync(kFull, l_r[q], 2);
  }
  uint16_t *go = static_cast<uint16_t *>(p.out) + b * p.o_sb + h * p.o_sh;
  store_out<T, DP>(o, l_r, go, p.o_sl, wr0, L, D, pair_store != 0, lane);
  store_lse(p, m_r, l_r, b, h, wr0, lane);
}

// The bias tile's 16-byte loads: keys contiguous, rows 16-byte aligned.
bool bias_vec_loads(const aotrun_fb_attn_params &p) {
  return p.b_ss == 1 && ((uintptr_t)p.bias & 15) == 0 && p.b_sb % 8 == 0 &&
         p.b_sh % 8 == 0 && p.b_sl % 8 == 0;
}

template <typename T, int DP, int BN, bool QREG, bool BIAS>
cudaError_t launch_wide(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  static unsigned long long done = 0;
  constexpr size_t smem = WideSmem<DP, BN, BIAS>::kBytes;
  auto kernel = attn_fwd_wide<T, DP, BN, QREG, BIAS>;
  // Two blocks of up to 102 KiB per SM: the largest carveout.
  cudaError_t e = aotrun_attn_launch::allow_smem(kernel, smem, &done, true);
  if (e != cudaSuccess) return e;
  const int vec = tc_vec_loads(p) ? 1 : 0, pair = tc_pair_stores(p) ? 1 : 0;
  const int bvec = BIAS && bias_vec_loads(p) ? 1 : 0;
  dim3 grid((unsigned)(p.B * p.Hq), (unsigned)((p.L + kBM - 1) / kBM));
  kernel<<<grid, kNT, smem, stream>>>(p, vec, pair, bvec);
  return cudaGetLastError();
}

// Tiles per head-dim class (registers and shared memory in the report of
// `-Xptxas -v`, docs/fallback-ops.md): D <= 64: 64 keys per step, Q's
// fragments in registers; D <= 128: Q read from shared memory per step, 64
// keys (32 with a bias, so two blocks still fit an SM).
template <typename T>
cudaError_t dispatch_wide(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  if (p.D <= 64)
    return p.bias ? launch_wide<T, 64, 64, true, true>(p, stream)
                  : launch_wide<T, 64, 64, true, false>(p, stream);
  return p.bias ? launch_wide<T, 128, 32, false, true>(p, stream)
                : launch_wide<T, 128, 64, false, false>(p, stream);
}

// The shared memory the tiles of p's head-dim class take (dispatch_wide's
// choice).
size_t wide_smem_bytes(const aotrun_fb_attn_params &p) {
  if (p.D <= 64)
    return p.bias ? WideSmem<64, 64, true>::kBytes
                  : WideSmem<64, 64, false>::kBytes;
  return p.bias ? WideSmem<128, 32, true>::kBytes
                : WideSmem<128, 64, false>::kBytes;
}

}  // namespace

extern "C" int aotrun_fb_attention_wide_fits(const aotrun_fb_attn_params *p) {
  return wide_smem_bytes(*p) <= aotrun_attn_launch::device_smem_limit();
}

extern "C" cudaError_t aotrun_fb_attention_wide(const aotrun_fb_attn_params *p,
                                                cudaStream_t stream) {
  if (p->D < 1 || p->D > AOTRUN_FB_ATTN_WIDE_MAX_D)
    return cudaErrorInvalidValue;
  switch (p->dtype) {
    case 15: return dispatch_wide<Bf16>(*p, stream);
    case 5: return dispatch_wide<F16>(*p, stream);
    default: return cudaErrorInvalidValue;
  }
}
