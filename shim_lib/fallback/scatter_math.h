/*
 * scatter_math.h: the element arithmetic of the scatter ops, shared by the
 * host (argument conversion, CPU tests) and the CUDA kernels, so both round
 * and order values identically. Plain C11 that nvcc also compiles as C++17
 * (functions become __host__ __device__ there). The nvcc genrules see only
 * the headers listed in CU_HDRS (scalar_convert.h and dtype.h included).
 */
#ifndef AOTRUN_FALLBACK_SCATTER_MATH_H
#define AOTRUN_FALLBACK_SCATTER_MATH_H

#include <stdint.h>
#include <string.h>

#include "shim_lib/scalar_convert.h"

#ifdef __CUDACC__
#define AOTRUN_SM static inline __host__ __device__
#else
#define AOTRUN_SM static inline
#endif

/* ScalarType codes (DESIGN.md §2.3) of the dtypes the arithmetic knows. */
enum {
  AOTRUN_SM_U8 = 0,
  AOTRUN_SM_I8 = 1,
  AOTRUN_SM_I16 = 2,
  AOTRUN_SM_I32 = 3,
  AOTRUN_SM_I64 = 4,
  AOTRUN_SM_F16 = 5,
  AOTRUN_SM_F32 = 6,
  AOTRUN_SM_F64 = 7,
  AOTRUN_SM_BOOL = 11,
  AOTRUN_SM_BF16 = 15,
};

/* ---- bit casts ---- */

AOTRUN_SM float aotrun_sm_f32(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

AOTRUN_SM uint32_t aotrun_sm_f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

AOTRUN_SM double aotrun_sm_f64(uint64_t b) {
  double f;
  memcpy(&f, &b, sizeof f);
  return f;
}

AOTRUN_SM uint64_t aotrun_sm_f64_bits(double f) {
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* ---- float16 / bfloat16 (round to nearest even, like c10) ---- */

/* The shim's own conversions (scalar_convert.h), so the scatter ops round
 * exactly like every other copy and item read. */
AOTRUN_SM float aotrun_sm_half_to_float(uint16_t h) {
  return aotrun_half_to_float(h);
}

AOTRUN_SM uint16_t aotrun_sm_float_to_half(float f) {
  return aotrun_float_to_half(f);
}

AOTRUN_SM float aotrun_sm_bf16_to_float(uint16_t b) {
  return aotrun_bf16_to_float(b);
}

AOTRUN_SM uint16_t aotrun_sm_float_to_bf16(float f) {
  return aotrun_float_to_bf16(f);
}

/* ---- the float dtypes that accumulate in float (f16, bf16, f32) ---- */

/* Element bits (zero-extended) of a float16/bfloat16/float32 as a float. */
AOTRUN_SM float aotrun_sm_load_float(uint64_t bits, int32_t dtype) {
  if (dtype == AOTRUN_SM_F16) return aotrun_sm_half_to_float((uint16_t)bits);
  if (dtype == AOTRUN_SM_BF16) return aotrun_sm_bf16_to_float((uint16_t)bits);
  return aotrun_sm_f32((uint32_t)bits);
}

/* The bits of f rounded to dtype (float16/bfloat16/float32). */
AOTRUN_SM uint32_t aotrun_sm_store_float(float f, int32_t dtype) {
  if (dtype == AOTRUN_SM_F16) return aotrun_sm_float_to_half(f);
  if (dtype == AOTRUN_SM_BF16) return aotrun_sm_float_to_bf16(f);
  return aotrun_sm_f32_bits(f);
}

/* f rounded to dtype and back: one step of arithmetic "in the dtype". */
AOTRUN_SM float aotrun_sm_round_float(float f, int32_t dtype) {
  if (dtype == AOTRUN_SM_F32) return f;
  return aotrun_sm_load_float(aotrun_sm_store_float(f, dtype), dtype);
}

/* ---- integer dtypes (uint8, int8, int16, int32, int64) ---- */

/* Element bits of an integer dtype as its value (sign-extended). */
AOTRUN_SM int64_t aotrun_sm_int_value(uint64_t bits, int32_t dtype) {
  switch (dtype) {
    case AOTRUN_SM_U8: return (int64_t)(uint8_t)bits;
    case AOTRUN_SM_I8: return (int64_t)(int8_t)(uint8_t)bits;
    case AOTRUN_SM_I16: return (int64_t)(int16_t)(uint16_t)bits;
    case AOTRUN_SM_I32: return (int64_t)(int32_t)(uint32_t)bits;
    default: return (int64_t)bits;
  }
}

/* v wrapped to the dtype (two's complement), as its value. */
AOTRUN_SM int64_t aotrun_sm_int_wrap(uint64_t v, int32_t dtype) {
  return aotrun_sm_int_value(v, dtype);
}

/* ATen's `div(a, b, rounding_mode="floor")` of two values of an integer
 * dtype, wrapped to the dtype; b != 0. */
AOTRUN_SM int64_t aotrun_sm_floor_div(int64_t a, int64_t b, int32_t dtype) {
  if (b == -1) /* -a; INT64_MIN / -1 wraps instead of trapping */
    return aotrun_sm_int_wrap((uint64_t)0 - (uint64_t)a, dtype);
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q--;
  return aotrun_sm_int_wrap((uint64_t)q, dtype);
}

/* ---- scatter_reduce "mean": the count ATen divides by ----
 * ATen counts with scatter_add_ of ones into a tensor of the output's dtype:
 * integers wrap, floats stop growing once +1 rounds away (2^11 in float16,
 * 2^8 in bfloat16, 2^24 in float32, 2^53 in float64), and a count of 0
 * becomes 1. n: items plus one when self is included. */
AOTRUN_SM int64_t aotrun_sm_int_count(int64_t n, int32_t dtype) {
  int64_t c = aotrun_sm_int_wrap((uint64_t)n, dtype);
  return c == 0 ? 1 : c;
}

AOTRUN_SM double aotrun_sm_float_count(int64_t n, int32_t dtype) {
  int64_t cap = dtype == AOTRUN_SM_F16    ? ((int64_t)1 << 11)
                : dtype == AOTRUN_SM_BF16 ? ((int64_t)1 << 8)
                : dtype == AOTRUN_SM_F32  ? ((int64_t)1 << 24)
                                          : ((int64_t)1 << 53);
  int64_t c = n < cap ? n : cap;
  return c == 0 ? 1.0 : (double)c;
}

/* ---- amax / amin: a total order on element bits ----
 * Every NaN beats every number (NaN propagates); among NaNs the larger bit
 * pattern wins; -0.0 ranks below +0.0. The result is the same whatever the
 * order the candidates arrive in, so concurrent updates are deterministic. */
typedef struct aotrun_sm_rank {
  uint32_t nan; /* 1 for a NaN */
  uint64_t key; /* larger is preferred */
} aotrun_sm_rank;

AOTRUN_SM aotrun_sm_rank aotrun_sm_extreme_rank(uint64_t bits, int32_t dtype,
                                                int is_min) {
  aotrun_sm_rank r;
  uint64_t mask, sign, abs_nan; /* abs_nan: |bits| above it is a NaN */
  int is_float = 1;
  switch (dtype) {
    case AOTRUN_SM_F16: mask = 0xffffu; abs_nan = 0x7c00u; break;
    case AOTRUN_SM_BF16: mask = 0xffffu; abs_nan = 0x7f80u; break;
    case AOTRUN_SM_F32: mask = 0xffffffffu; abs_nan = 0x7f800000u; break;
    case AOTRUN_SM_F64:
      mask = ~(uint64_t)0;
      abs_nan = 0x7ff0000000000000u;
      break;
    case AOTRUN_SM_U8: mask = 0xffu; abs_nan = 0; is_float = 0; break;
    case AOTRUN_SM_I8: mask = 0xffu; abs_nan = 0; is_float = 0; break;
    case AOTRUN_SM_I16: mask = 0xffffu; abs_nan = 0; is_float = 0; break;
    case AOTRUN_SM_I32: mask = 0xffffffffu; abs_nan = 0; is_float = 0; break;
    default: mask = ~(uint64_t)0; abs_nan = 0; is_float = 0; break;
  }
  bits &= mask;
  sign = (mask >> 1) + 1; /* the top bit of the element */
  r.nan = 0;
  if (is_float) {
    if ((bits & ~sign) > abs_nan) {
      r.nan = 1;
      r.key = bits;
      return r;
    }
    /* Negative floats order by decreasing magnitude: flip them all. */
    r.key = (bits & sign) ? (~bits & mask) : (bits | sign);
  } else if (dtype == AOTRUN_SM_U8) {
    r.key = bits;
  } else {
    r.key = bits ^ sign; /* signed: offset binary */
  }
  if (is_min) r.key = ~r.key & mask;
  return r;
}

/* 1 when a is strictly preferred over b. */
AOTRUN_SM int aotrun_sm_rank_greater(aotrun_sm_rank a, aotrun_sm_rank b) {
  if (a.nan != b.nan) return a.nan > b.nan;
  return a.key > b.key;
}

/* The identity of amax (is_min 0) or amin (1) as element bits: -inf/+inf
 * for floats, the lowest/largest value for integers. */
AOTRUN_SM uint64_t aotrun_sm_extreme_identity(int32_t dtype, int is_min) {
  switch (dtype) {
    case AOTRUN_SM_F16: return is_min ? 0x7c00u : 0xfc00u;
    case AOTRUN_SM_BF16: return is_min ? 0x7f80u : 0xff80u;
    case AOTRUN_SM_F32: return is_min ? 0x7f800000u : 0xff800000u;
    case AOTRUN_SM_F64:
      return is_min ? 0x7ff0000000000000u : 0xfff0000000000000u;
    case AOTRUN_SM_U8: return is_min ? 0xffu : 0;
    case AOTRUN_SM_I8: return is_min ? 0x7fu : 0x80u;
    case AOTRUN_SM_I16: return is_min ? 0x7fffu : 0x8000u;
    case AOTRUN_SM_I32: return is_min ? 0x7fffffffu : 0x80000000u;
    default: return is_min ? 0x7fffffffffffffffu : 0x8000000000000000u;
  }
}

#endif /* AOTRUN_FALLBACK_SCATTER_MATH_H */
