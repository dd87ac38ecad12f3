/*
 * scalar_convert.h: loading and storing one element of a real dtype through
 * a common value, shared by the C copy/item code and the CUDA copy kernel
 * (so host and device convert identically).
 *
 * Integer <-> integer keeps all 64 bits (two's complement wrap, as a C
 * cast); float -> integer truncates toward zero, with NaN and out-of-range
 * values becoming INT64_MIN before wrapping (what x86 produces for
 * libtorch's static_cast); float16/bfloat16 round to nearest even.
 */
#ifndef AOTRUN_SHIM_SCALAR_CONVERT_H
#define AOTRUN_SHIM_SCALAR_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "shim_lib/dtype.h"

#ifdef __CUDACC__
#define AOTRUN_HD static inline __host__ __device__
#else
#define AOTRUN_HD static inline
#endif

typedef struct aotrun_value {
  int is_float; /* 1: f holds it; 0: i holds the bits (signed or not) */
  int is_unsigned;
  double f;
  int64_t i;
} aotrun_value;

AOTRUN_HD float aotrun_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: normalise */
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while ((man & 0x400u) == 0);
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

AOTRUN_HD uint16_t aotrun_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* nan */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow: inf */
  if (ax < 0x38800000u) { /* result is subnormal or zero */
    if (ax < 0x33000000u) return (uint16_t)sign; /* < half the min subnormal */
    uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((ax >> 13) - (112u << 10)); /* rebias exponent */
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}

AOTRUN_HD float aotrun_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

AOTRUN_HD uint16_t aotrun_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u; /* nan */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* dtype must satisfy aotrun_dtype_is_real. */
AOTRUN_HD aotrun_value aotrun_load(const void *p, int32_t dtype) {
  aotrun_value v = {0, 0, 0.0, 0};
  switch (dtype) {
    case AOTRUN_DT_BOOL: v.i = *(const uint8_t *)p != 0; break;
    case AOTRUN_DT_UINT8: v.i = *(const uint8_t *)p; break;
    case AOTRUN_DT_INT8: v.i = *(const int8_t *)p; break;
    case AOTRUN_DT_INT16: v.i = *(const int16_t *)p; break;
    case AOTRUN_DT_UINT16: v.i = *(const uint16_t *)p; break;
    case AOTRUN_DT_INT32: v.i = *(const int32_t *)p; break;
    case AOTRUN_DT_UINT32: v.i = *(const uint32_t *)p; break;
    case AOTRUN_DT_INT64: v.i = *(const int64_t *)p; break;
    case AOTRUN_DT_UINT64:
      v.i = (int64_t)*(const uint64_t *)p;
      v.is_unsigned = 1;
      break;
    case AOTRUN_DT_FLOAT16: v.is_float = 1; v.f = aotrun_half_to_float(*(const uint16_t *)p); break;
    case AOTRUN_DT_BFLOAT16: v.is_float = 1; v.f = aotrun_bf16_to_float(*(const uint16_t *)p); break;
    case AOTRUN_DT_FLOAT32: v.is_float = 1; v.f = *(const float *)p; break;
    case AOTRUN_DT_FLOAT64: v.is_float = 1; v.f = *(const double *)p; break;
    default: break;
  }
  return v;
}

AOTRUN_HD double aotrun_value_as_double(aotrun_value v) {
  if (v.is_float) return v.f;
  return v.is_unsigned ? (double)(uint64_t)v.i : (double)v.i;
}

/* Integer bits of v (see the header comment for floats). */
AOTRUN_HD uint64_t aotrun_value_as_bits(aotrun_value v) {
  if (!v.is_float) return (uint64_t)v.i;
  double f = v.f;
  if (f >= 0.0 && f < 18446744073709551616.0) {
    if (f >= 9223372036854775808.0) return (uint64_t)f;
    return (uint64_t)(int64_t)f;
  }
  if (f < 0.0 && f >= -9223372036854775808.0) return (uint64_t)(int64_t)f;
  return (uint64_t)1 << 63; /* nan, inf, out of range */
}

AOTRUN_HD int aotrun_value_nonzero(aotrun_value v) {
  return v.is_float ? v.f != 0.0 : v.i != 0;
}

AOTRUN_HD void aotrun_store(void *p, int32_t dtype, aotrun_value v) {
  switch (dtype) {
    case AOTRUN_DT_BOOL: *(uint8_t *)p = (uint8_t)aotrun_value_nonzero(v); break;
    case AOTRUN_DT_UINT8: *(uint8_t *)p = (uint8_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_INT8: *(int8_t *)p = (int8_t)(uint8_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_INT16: *(int16_t *)p = (int16_t)(uint16_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_UINT16: *(uint16_t *)p = (uint16_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_INT32: *(int32_t *)p = (int32_t)(uint32_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_UINT32: *(uint32_t *)p = (uint32_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_INT64: *(int64_t *)p = (int64_t)aotrun_value_as_bits(v); break;
    case AOTRUN_DT_UINT64: *(uint64_t *)p = aotrun_value_as_bits(v); break;
    case AOTRUN_DT_FLOAT16: *(uint16_t *)p = aotrun_float_to_half((float)aotrun_value_as_double(v)); break;
    case AOTRUN_DT_BFLOAT16: *(uint16_t *)p = aotrun_float_to_bf16((float)aotrun_value_as_double(v)); break;
    case AOTRUN_DT_FLOAT32: *(float *)p = (float)aotrun_value_as_double(v); break;
    case AOTRUN_DT_FLOAT64: *(double *)p = aotrun_value_as_double(v); break;
    default: break;
  }
}

#endif /* AOTRUN_SHIM_SCALAR_CONVERT_H */
