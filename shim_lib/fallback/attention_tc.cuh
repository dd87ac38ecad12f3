// attention_tc.cuh: device helpers of the tensor-core attention kernels
// (attention_kernels.cu's attn_fwd_tc and attention_wide.cu's
// attn_fwd_wide): dtype tags and conversions, mma.sync m16n8k16, ldmatrix,
// cp.async (also used by attention_f32.cu) and the Q/K/V tile loader. CUDA
// C++; included only by .cu files.
#ifndef AOTRUN_ATTENTION_TC_CUH
#define AOTRUN_ATTENTION_TC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "shim_lib/fallback/attention_kernels.h"

namespace aotrun_attn_tc {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr unsigned kFull = 0xffffffffu;

struct Bf16 {};
struct F16 {};

__device__ __forceinline__ float to_float(Bf16, uint16_t x) {
  return __uint_as_float(((uint32_t)x) << 16);
}
__device__ __forceinline__ float to_float(F16, uint16_t x) {
  return __half2float(__ushort_as_half(x));
}
__device__ __forceinline__ uint32_t pack2(Bf16, float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ uint32_t pack2(F16, float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ uint16_t from_float(Bf16, float x) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
__device__ __forceinline__ uint16_t from_float(F16, float x) {
  return __half_as_ushort(__float2half_rn(x));
}

// D (16x8, f32) += A (16x16, row) * B (16x8, col).
__device__ __forceinline__ void mma16816(Bf16, float (&c)[4],
                                         const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma16816(F16, float (&c)[4],
                                         const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smem_addr(p)));
}
// 16 bytes global -> shared; src_bytes 0 writes zeros.
__device__ __forceinline__ void cp_async16(void *dst, const void *src,
                                           int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(src_bytes));
}
// Waits for every cp.async of this thread (a no-op when none was issued).
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// rows x DP elements of a [nrows, D] matrix (row stride g_sl) starting at
// row0 into shared memory (row stride LDS); zeros past nrows and past D.
template <int DP, int ROWS, int NT, int LDS>
__device__ __forceinline__ void load_tile(uint16_t *s, const uint16_t *g,
                                          int64_t g_sl, int row0, int nrows,
                                          int D, bool vec, int tid) {
  constexpr int CPR = DP / 8;  // 16-byte chunks per row
#pragma unroll 4
  for (int c = tid; c < ROWS * CPR; c += NT) {
    const int r = c / CPR, col = (c % CPR) * 8;
    uint16_t *dst = s + r * LDS + col;
    const int gr = row0 + r;
    const bool row_ok = gr < nrows;
    if (vec) {
      const bool ok = row_ok && col < D;
      cp_async16(dst, ok ? g + (int64_t)gr * g_sl + col : g, ok ? 16 : 0);
    } else {
      uint16_t v[8];
#pragma unroll
      for (int e = 0; e < 8; e++)
        v[e] = (row_ok && col + e < D) ? g[(int64_t)gr * g_sl + col + e] : 0;
      uint4 w;
      w.x = v[0] | ((uint32_t)v[1] << 16);
      w.y = v[2] | ((uint32_t)v[3] << 16);
      w.z = v[4] | ((uint32_t)v[5] << 16);
      w.w = v[6] | ((uint32_t)v[7] << 16);
      *reinterpret_cast<uint4 *>(dst) = w;
    }
  }
}

// 16-byte row loads need 16-byte aligned bases and strides that are
// multiples of 8 elements (and D % 8 == 0: whole chunks inside D).
inline bool tc_vec_loads(const aotrun_fb_attn_params &p) {
  auto al16 = [](const void *x) { return ((uintptr_t)x & 15) == 0; };
  return p.D % 8 == 0 && al16(p.q) && al16(p.k) && al16(p.v) &&
         p.q_sb % 8 == 0 && p.q_sh % 8 == 0 && p.q_sl % 8 == 0 &&
         p.k_sb % 8 == 0 && p.k_sh % 8 == 0 && p.k_sl % 8 == 0 &&
         p.v_sb % 8 == 0 && p.v_sh % 8 == 0 && p.v_sl % 8 == 0;
}

// 4-byte pair stores of the output need even D, strides and a 4-byte base.
inline bool tc_pair_stores(const aotrun_fb_attn_params &p) {
  return p.D % 2 == 0 && ((uintptr_t)p.out & 3) == 0 && p.o_sb % 2 == 0 &&
         p.o_sh % 2 == 0 && p.o_sl % 2 == 0;
}

}  // namespace aotrun_attn_tc

#endif  // AOTRUN_ATTENTION_TC_CUH
