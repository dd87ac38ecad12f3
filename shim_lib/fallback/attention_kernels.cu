// attention_kernels.cu: fused attention forward (attention_kernels.h).
//
// Tensor-core kernel (float16 / bfloat16), FlashAttention-2 style:
// - a block owns BM = 16 * NW queries of one (batch, head); warp w the 16
//   rows [16w, 16w + 16); Q stays in shared memory (its A fragments in
//   registers for head dims <= 128);
// - K and V tiles of BN keys are double buffered in shared memory
//   (cp.async 16-byte copies when rows are 16-byte aligned, else element
//   loads), rows padded by 8 elements so ldmatrix is conflict free;
// - S = Q K^T and O += P V on mma.sync.m16n8k16 (float accumulators); the
//   S accumulators are re-packed in registers as P's A fragments;
// - online softmax in float with exp2 (scale * log2(e) folded in);
// - only tiles that reach past S or cross the causal diagonal test keys;
//   tiles wholly above the diagonal are never visited; blocks start with
//   the heaviest (last) query tiles.
// float32: a SIMT kernel with float math (32 queries x 32 keys per step,
// one lane per key, one warp per 4 query rows).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "shim_lib/fallback/attention_f32.h"
#include "shim_lib/fallback/attention_kernels.h"
#include "shim_lib/fallback/attention_tc.cuh"
#include "shim_lib/fallback/attention_wide.h"
#include "shim_lib/fallback/kernel_options.h"
#include "shim_lib/fallback/attention_launch.cuh"

namespace {

using aotrun_attn_launch::allow_smem;

// The shared device helpers (mma, ldmatrix, cp.async, tile loader).
using namespace aotrun_attn_tc;

template <typename T, int DP, int BN, int NW>
constexpr int tc_smem_bytes() {
  return (16 * NW + 4 * BN) * (DP + 8) * 2;
}

template <typename T, int DP, int BN, int NW, bool QREG, bool BIAS>
__global__ void __launch_bounds__(NW * 32)
    attn_fwd_tc(const aotrun_fb_attn_params p, int vec, int pair_store) {
  constexpr int BM = 16 * NW, NT = NW * 32, LDS = DP + 8;
  constexpr int NS = BN / 8;   // 8-key accumulator tiles of S
  constexpr int NO = DP / 8;   // 8-column accumulator tiles of O
  constexpr int KS = DP / 16;  // k steps of Q K^T
  extern __shared__ __align__(16) unsigned char smem_raw[];
  uint16_t *sQ = reinterpret_cast<uint16_t *>(smem_raw);
  uint16_t *sK = sQ + BM * LDS;
  uint16_t *sV = sK + 2 * BN * LDS;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int bh = blockIdx.x;
  const int b = bh / p.Hq, h = bh % p.Hq;
  const int hk = h / (p.Hq / p.Hkv);
  const int m0 = (gridDim.y - 1 - blockIdx.y) * BM;
  const int L = p.L, S = p.S, D = p.D;
  const T tag{};

  const uint16_t *gq = static_cast<const uint16_t *>(p.q) + b * p.q_sb +
                       h * p.q_sh;
  const uint16_t *gk = static_cast<const uint16_t *>(p.k) + b * p.k_sb +
                       hk * p.k_sh;
  const uint16_t *gv = static_cast<const uint16_t *>(p.v) + b * p.v_sb +
                       hk * p.v_sh;

  // Keys [0, n_end) can be seen by some row of this block.
  const int off = p.causal == AOTRUN_FB_ATTN_BOTTOM_RIGHT ? S - L : 0;
  int n_end = S;
  if (p.causal) {
    const long long lim = (long long)min(m0 + BM, L) - 1 + off + 1;
    n_end = (int)max(0LL, min((long long)S, lim));
  }
  const int ntiles = (n_end + BN - 1) / BN;

  load_tile<DP, BM, NT, LDS>(sQ, gq, p.q_sl, m0, L, D, vec, tid);
  if (ntiles > 0) {
    load_tile<DP, BN, NT, LDS>(sK, gk, p.k_sl, 0, S, D, vec, tid);
    load_tile<DP, BN, NT, LDS>(sV, gv, p.v_sl, 0, S, D, vec, tid);
  }
  cp_async_commit();

  float o[NO][4];
#pragma unroll
  for (int i = 0; i < NO; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m_r[2] = {-INFINITY, -INFINITY}, l_r[2] = {0.f, 0.f};
  uint32_t qf[QREG ? KS : 1][4];

  const int row_a = m0 + warp * 16 + g, row_b = row_a + 8;
  const float sl2 = p.scale * kLog2e;
  const uint16_t *brow[2] = {nullptr, nullptr};
  if (BIAS) {
    const uint16_t *bb = static_cast<const uint16_t *>(p.bias) + b * p.b_sb +
                         h * p.b_sh;
    brow[0] = bb + (int64_t)min(row_a, L - 1) * p.b_sl;
    brow[1] = bb + (int64_t)min(row_b, L - 1) * p.b_sl;
  }
  const uint16_t *q_warp = sQ + warp * 16 * LDS;

  for (int t = 0; t < ntiles; t++) {
    const int buf = t & 1;
    if (t + 1 < ntiles) {
      const int nb = buf ^ 1;
      load_tile<DP, BN, NT, LDS>(sK + nb * BN * LDS, gk, p.k_sl, (t + 1) * BN,
                                 S, D, vec, tid);
      load_tile<DP, BN, NT, LDS>(sV + nb * BN * LDS, gv, p.v_sl, (t + 1) * BN,
                                 S, D, vec, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (QREG && t == 0) {
#pragma unroll
      for (int kk = 0; kk < KS; kk++)
        ldsm_x4(qf[QREG ? kk : 0],
                q_warp + ((lane & 7) + ((lane >> 3) & 1) * 8) * LDS + kk * 16 +
                    (lane >> 4) * 8);
    }
    const uint16_t *ks = sK + buf * BN * LDS;
    const uint16_t *vs = sV + buf * BN * LDS;

    // S = Q K^T (16 rows x BN keys per warp).
    float s[NS][4];
#pragma unroll
    for (int j = 0; j < NS; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KS; kk++) {
      uint32_t a[4];
      if (QREG) {
#pragma unroll
        for (int e = 0; e < 4; e++) a[e] = qf[QREG ? kk : 0][e];
      } else {
        ldsm_x4(a, q_warp + ((lane & 7) + ((lane >> 3) & 1) * 8) * LDS +
                       kk * 16 + (lane >> 4) * 8);
      }
#pragma unroll
      for (int nn = 0; nn < BN / 16; nn++) {
        uint32_t r[4];
        ldsm_x4(r, ks + (nn * 16 + (lane & 7) + (lane >> 4) * 8) * LDS +
                       kk * 16 + ((lane >> 3) & 1) * 8);
        mma16816(tag, s[2 * nn], a, r[0], r[1]);
        mma16816(tag, s[2 * nn + 1], a, r[2], r[3]);
      }
    }

    // Scores in log2 units, bias, masks.
    const int n0 = t * BN;
    if (BIAS) {
#pragma unroll
      for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int col = n0 + j * 8 + 2 * tig + (e & 1);
          const float bv =
              col < S ? to_float(tag, brow[e >> 1][(int64_t)col * p.b_ss]) : 0.f;
          s[j][e] = s[j][e] * sl2 + bv * kLog2e;
        }
    } else {
#pragma unroll
      for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) s[j][e] *= sl2;
    }
    const bool need_mask =
        n0 + BN > S || (p.causal && n0 + BN - 1 > m0 + off);
    if (need_mask) {
#pragma unroll
      for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int col = n0 + j * 8 + 2 * tig + (e & 1);
          const int row = (e >> 1) ? row_b : row_a;
          if (col >= S || (p.causal && col > row + off)) s[j][e] = -INFINITY;
        }
    }

    // Online softmax: new running max, rescale, probabilities.
    float mx[2] = {m_r[0], m_r[1]};
#pragma unroll
    for (int j = 0; j < NS; j++) {
      mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
    }
    float alpha[2], base[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(kFull, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(kFull, mx[r], 2));
      base[r] = mx[r] == -INFINITY ? 0.f : mx[r];
      alpha[r] = exp2f(m_r[r] - base[r]);
      m_r[r] = mx[r];
    }
#pragma unroll
    for (int j = 0; j < NS; j++) {
      s[j][0] = exp2f(s[j][0] - base[0]);
      s[j][1] = exp2f(s[j][1] - base[0]);
      s[j][2] = exp2f(s[j][2] - base[1]);
      s[j][3] = exp2f(s[j][3] - base[1]);
      rs[0] += s[j][0] + s[j][1];
      rs[1] += s[j][2] + s[j][3];
    }
    l_r[0] = l_r[0] * alpha[0] + rs[0];
    l_r[1] = l_r[1] * alpha[1] + rs[1];
#pragma unroll
    for (int i = 0; i < NO; i++) {
      o[i][0] *= alpha[0];
      o[i][1] *= alpha[0];
      o[i][2] *= alpha[1];
      o[i][3] *= alpha[1];
    }

    // O += P V.
#pragma unroll
    for (int kc = 0; kc < BN / 16; kc++) {
      const uint32_t pa[4] = {pack2(tag, s[2 * kc][0], s[2 * kc][1]),
                              pack2(tag, s[2 * kc][2], s[2 * kc][3]),
                              pack2(tag, s[2 * kc + 1][0], s[2 * kc + 1][1]),
                              pack2(tag, s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
      for (int dn = 0; dn < DP / 16; dn++) {
        uint32_t r[4];
        ldsm_x4_t(r, vs + (kc * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LDS +
                         dn * 16 + (lane >> 4) * 8);
        mma16816(tag, o[2 * dn], pa, r[0], r[1]);
        mma16816(tag, o[2 * dn + 1], pa, r[2], r[3]);
      }
    }
    __syncthreads();  // the next iteration overwrites the other buffer
  }
  cp_async_wait<0>();

  // Epilogue: O / l, lse.
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    l_r[r] += __shfl_xor_sync(kFull, l_r[r], 1);
    l_r[r] += __shfl_xor_sync(kFull, l_r[r], 2);
    inv[r] = l_r[r] == 0.f ? 1.f : 1.f / l_r[r];
  }
  uint16_t *go = static_cast<uint16_t *>(p.out) + b * p.o_sb + h * p.o_sh;
#pragma unroll
  for (int r = 0; r < 2; r++) {
    const int row = r ? row_b : row_a;
    if (row >= L) continue;
    uint16_t *orow = go + (int64_t)row * p.o_sl;
#pragma unroll
    for (int i = 0; i < NO; i++) {
      const int col = i * 8 + 2 * tig;
      if (col >= D) continue;
      const float x0 = o[i][2 * r] * inv[r], x1 = o[i][2 * r + 1] * inv[r];
      if (pair_store && col + 1 < D) {
        *reinterpret_cast<uint32_t *>(orow + col) = pack2(tag, x0, x1);
      } else {
        orow[col] = from_float(tag, x0);
        if (col + 1 < D) orow[col + 1] = from_float(tag, x1);
      }
    }
  }
  if (p.lse && tig == 0) {
    float *gl = p.lse + b * p.lse_sb + h * p.lse_sh;
#pragma unroll
    for (int r = 0; r < 2; r++) {
      const int row = r ? row_b : row_a;
      if (row < L)
        gl[row] = l_r[r] == 0.f ? p.empty_lse
                                : m_r[r] * kLn2 + logf(l_r[r]);
      else if (row < p.lse_pad)
        gl[row] = INFINITY;
    }
  }
}

// ---- float32: SIMT, float math ----
constexpr int kFBM = 32, kFBN = 32, kFRows = 4, kFThreads = 256;

template <int DPW>  // head-dim values per lane: ceil(D / 32)
__global__ void __launch_bounds__(kFThreads)
    attn_fwd_f32(const aotrun_fb_attn_params p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int D = p.D, L = p.L, S = p.S;
  float *sQ = reinterpret_cast<float *>(smem_raw);  // kFBM x D
  float *sK = sQ + kFBM * D;                        // kFBN x (D + 1)
  float *sV = sK + kFBN * (D + 1);                  // kFBN x D
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int bh = blockIdx.x;
  const int b = bh / p.Hq, h = bh % p.Hq;
  const int hk = h / (p.Hq / p.Hkv);
  const int m0 = (gridDim.y - 1 - blockIdx.y) * kFBM;
  const float *gq = static_cast<const float *>(p.q) + b * p.q_sb + h * p.q_sh;
  const float *gk = static_cast<const float *>(p.k) + b * p.k_sb + hk * p.k_sh;
  const float *gv = static_cast<const float *>(p.v) + b * p.v_sb + hk * p.v_sh;
  const float *gb = p.bias ? static_cast<const float *>(p.bias) + b * p.b_sb +
                                 h * p.b_sh
                           : nullptr;

  const int off = p.causal == AOTRUN_FB_ATTN_BOTTOM_RIGHT ? S - L : 0;
  int n_end = S;
  if (p.causal) {
    const long long lim = (long long)min(m0 + kFBM, L) - 1 + off + 1;
    n_end = (int)max(0LL, min((long long)S, lim));
  }

  for (int i = tid; i < kFBM * D; i += kFThreads) {
    const int r = i / D, d = i % D;
    sQ[i] = m0 + r < L ? gq[(int64_t)(m0 + r) * p.q_sl + d] : 0.f;
  }
  float acc[kFRows][DPW];
  float m_r[kFRows], l_r[kFRows];
#pragma unroll
  for (int r = 0; r < kFRows; r++) {
    m_r[r] = -INFINITY;
    l_r[r] = 0.f;
#pragma unroll
    for (int c = 0; c < DPW; c++) acc[r][c] = 0.f;
  }
  const float sl2 = p.scale * kLog2e;

  for (int n0 = 0; n0 < n_end; n0 += kFBN) {
    __syncthreads();
    for (int i = tid; i < kFBN * D; i += kFThreads) {
      const int r = i / D, d = i % D;
      const bool ok = n0 + r < S;
      sK[r * (D + 1) + d] = ok ? gk[(int64_t)(n0 + r) * p.k_sl + d] : 0.f;
      sV[i] = ok ? gv[(int64_t)(n0 + r) * p.v_sl + d] : 0.f;
    }
    __syncthreads();
    const int j = n0 + lane;
#pragma unroll
    for (int r = 0; r < kFRows; r++) {
      const int lr = warp * kFRows + r, i = m0 + lr;
      if (i >= L) continue;  // warp-uniform
      const float *qrow = sQ + lr * D;
      const float *krow = sK + lane * (D + 1);
      float dot = 0.f;
      for (int d = 0; d < D; d++) dot = fmaf(qrow[d], krow[d], dot);
      float sc;
      if (gb)
        sc = (dot * p.scale +
              (j < S ? gb[(int64_t)i * p.b_sl + (int64_t)j * p.b_ss] : 0.f)) *
             kLog2e;
      else
        sc = dot * sl2;
      if (j >= S || (p.causal && j > i + off)) sc = -INFINITY;
      float mx = fmaxf(m_r[r], sc);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, o));
      const float base = mx == -INFINITY ? 0.f : mx;
      const float alpha = exp2f(m_r[r] - base);
      const float pj = exp2f(sc - base);
      float sum = pj;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(kFull, sum, o);
      l_r[r] = l_r[r] * alpha + sum;
      m_r[r] = mx;
#pragma unroll
      for (int c = 0; c < DPW; c++) acc[r][c] *= alpha;
      for (int jj = 0; jj < kFBN; jj++) {
        const float pjj = __shfl_sync(kFull, pj, jj);
#pragma unroll
        for (int c = 0; c < DPW; c++) {
          const int d = lane + 32 * c;
          if (d < D) acc[r][c] = fmaf(pjj, sV[jj * D + d], acc[r][c]);
        }
      }
    }
  }

  float *go = static_cast<float *>(p.out) + b * p.o_sb + h * p.o_sh;
  float *gl = p.lse ? p.lse + b * p.lse_sb + h * p.lse_sh : nullptr;
#pragma unroll
  for (int r = 0; r < kFRows; r++) {
    const int i = m0 + warp * kFRows + r;
    if (i >= L) {
      if (gl && lane == 0 && i < p.lse_pad) gl[i] = INFINITY;
      continue;
    }
    const float inv = l_r[r] == 0.f ? 1.f : 1.f / l_r[r];
#pragma unroll
    for (int c = 0; c < DPW; c++) {
      const int d = lane + 32 * c;
      if (d < D) go[(int64_t)i * p.o_sl + d] = acc[r][c] * inv;
    }
    if (gl && lane == 0)
      gl[i] = l_r[r] == 0.f ? p.empty_lse : m_r[r] * kLn2 + logf(l_r[r]);
  }
}

template <int DPW>
cudaError_t launch_f32(dim3 grid, size_t smem, cudaStream_t stream,
                       const aotrun_fb_attn_params &p) {
  static unsigned long long done = 0;  // one set of bits per DPW (smem max)
  auto kernel = attn_fwd_f32<DPW>;
  // The attribute is the largest smem this instantiation can ask for.
  const size_t max_smem =
      (size_t)(kFBM * 32 * DPW + kFBN * (32 * DPW + 1) + kFBN * 32 * DPW) *
      sizeof(float);
  cudaError_t e = allow_smem(kernel, max_smem, &done);
  if (e != cudaSuccess) return e;
  kernel<<<grid, kFThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <typename T, int DP, int BN, int NW, bool QREG, bool BIAS>
cudaError_t launch_tc(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  constexpr int BM = 16 * NW;
  static unsigned long long done = 0;
  const size_t smem = tc_smem_bytes<T, DP, BN, NW>();
  auto kernel = attn_fwd_tc<T, DP, BN, NW, QREG, BIAS>;
  cudaError_t e = allow_smem(kernel, smem, &done);
  if (e != cudaSuccess) return e;
  const bool vec = tc_vec_loads(p), pair = tc_pair_stores(p);
  dim3 grid((unsigned)(p.B * p.Hq), (unsigned)((p.L + BM - 1) / BM));
  kernel<<<grid, NW * 32, smem, stream>>>(p, vec ? 1 : 0, pair ? 1 : 0);
  return cudaGetLastError();
}

template <typename T, int DP, int BN, int NW, bool QREG>
cudaError_t launch_tc(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  return p.bias ? launch_tc<T, DP, BN, NW, QREG, true>(p, stream)
                : launch_tc<T, DP, BN, NW, QREG, false>(p, stream);
}

template <typename T>
cudaError_t dispatch_tc(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  // attention_wide.cu's 128-query tiles (D <= 128) unless
  // AOTRUN_ATTN_TC=narrow (kernel_options.h) or the device's shared memory
  // per block is too small for them.
  if (p.D <= AOTRUN_FB_ATTN_WIDE_MAX_D && aotrun_fb_attn_tc_wide_enabled() &&
      aotrun_fb_attention_wide_fits(&p))
    return aotrun_fb_attention_wide(&p, stream);
  if (p.D <= 64) return launch_tc<T, 64, 64, 4, true>(p, stream);
  if (p.D <= 128) return launch_tc<T, 128, 64, 4, true>(p, stream);
  return launch_tc<T, 256, 32, 4, false>(p, stream);
}

cudaError_t dispatch_f32(const aotrun_fb_attn_params &p, cudaStream_t stream) {
  const size_t smem = (size_t)(kFBM * p.D + kFBN * (p.D + 1) + kFBN * p.D) *
                      sizeof(float);
  dim3 grid((unsigned)(p.B * p.Hq), (unsigned)((p.L + kFBM - 1) / kFBM));
  switch ((p.D + 31) / 32) {
    case 1: return launch_f32<1>(grid, smem, stream, p);
    case 2: return launch_f32<2>(grid, smem, stream, p);
    case 3: return launch_f32<3>(grid, smem, stream, p);
    case 4: return launch_f32<4>(grid, smem, stream, p);
    case 5: return launch_f32<5>(grid, smem, stream, p);
    case 6: return launch_f32<6>(grid, smem, stream, p);
    case 7: return launch_f32<7>(grid, smem, stream, p);
    default: return launch_f32<8>(grid, smem, stream, p);
  }
}

}  // namespace

extern "C" cudaError_t aotrun_fb_attention(const aotrun_fb_attn_params *p,
                                           cudaStream_t stream) {
  if ((int64_t)p->B * p->Hq == 0 || p->L == 0) return cudaSuccess;
  if (p->D < 1 || p->D > AOTRUN_FB_ATTN_MAX_D || p->Hkv < 1 ||
      p->Hq % p->Hkv != 0 || (int64_t)p->B * p->Hq > 0x7fffffff ||
      (p->L + 31) / 32 > 65535)
    return cudaErrorInvalidValue;
  switch (p->dtype) {
    case 15: return dispatch_tc<Bf16>(*p, stream);
    case 5: return dispatch_tc<F16>(*p, stream);
    case 6:  // attention_f32.cu's register tiles unless AOTRUN_ATTN_F32=simt
             // or the device's shared memory per block is too small
      return aotrun_fb_attn_f32_tiled_enabled() &&
                     aotrun_fb_attention_f32_tiled_fits(p)
                 ? aotrun_fb_attention_f32_tiled(p, stream)
                 : dispatch_f32(*p, stream);
    default: return cudaErrorInvalidValue;
  }
}
