/* scalar_bits.c: a double argument (a c10::Scalar) converted to the bits of
 * one element of a dtype, with c10's overflow rules (checked_convert). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shim_lib/fallback/scatter_math.h"
#include "shim_lib/fallback/scatter_plan.h"

enum {
  DT_COMPLEX32 = 8,
  DT_COMPLEX64 = 9,
  DT_COMPLEX128 = 10,
  DT_UINT16 = 27,
  DT_UINT32 = 28,
  DT_UINT64 = 29,
};

static AOTITorchError overflow(const char *op, double v, int32_t dtype) {
  char buf[24];
  return aotrun_shim_fail(
      "%s: value %.17g cannot be converted to dtype %s without overflow", op,
      v, aotrun_fb_dtype_name(dtype, buf));
}

/* Integers: NaN and values outside [lo, hi] overflow; others truncate. */
static int int_bits(double v, double lo, double hi, uint64_t *bits) {
  if (isnan(v) || v < lo || v > hi) return 0;
  if (v >= 9223372036854775808.0) /* uint64 above int64: exact split */
    *bits = (uint64_t)(v - 9223372036854775808.0) + ((uint64_t)1 << 63);
  else
    *bits = (uint64_t)(int64_t)v;
  return 1;
}

/* Floats: inf and NaN convert; a finite value beyond +-max overflows
 * (converting it would be undefined behaviour in C, so callers check
 * first). */
static int float_fits(double v, double max) {
  return isnan(v) || isinf(v) || (v >= -max && v <= max);
}

AOTITorchError aotrun_fb_scalar_to_bits(const char *op, double v,
                                        int32_t dtype, uint64_t bits[2]) {
  bits[0] = bits[1] = 0;
  int ok = 1;
  switch (dtype) {
    case AOTRUN_SM_BOOL: bits[0] = v != 0.0; break;
    case AOTRUN_SM_U8: ok = int_bits(v, 0.0, 255.0, &bits[0]); break;
    case AOTRUN_SM_I8: ok = int_bits(v, -128.0, 127.0, &bits[0]); break;
    case AOTRUN_SM_I16: ok = int_bits(v, -32768.0, 32767.0, &bits[0]); break;
    case AOTRUN_SM_I32:
      ok = int_bits(v, -2147483648.0, 2147483647.0, &bits[0]);
      break;
    case AOTRUN_SM_I64:
      /* c10 compares with INT64_MAX as a double (2^63), which passes 2^63
       * itself; libtorch's cast then gives INT64_MIN on x86. */
      if (v == 9223372036854775808.0) {
        bits[0] = (uint64_t)1 << 63;
        break;
      }
      ok = int_bits(v, -9223372036854775808.0, 9223372036854775807.0,
                    &bits[0]);
      break;
    case DT_UINT16: ok = int_bits(v, 0.0, 65535.0, &bits[0]); break;
    case DT_UINT32: ok = int_bits(v, 0.0, 4294967295.0, &bits[0]); break;
    case DT_UINT64:
      ok = v < 18446744073709551616.0 &&
           int_bits(v, 0.0, 18446744073709551615.0, &bits[0]);
      break;
    case AOTRUN_SM_F16:
    case DT_COMPLEX32: /* real part; imaginary 0 */
      ok = float_fits(v, 65504.0);
      if (ok) bits[0] = aotrun_sm_float_to_half((float)v);
      break;
    case AOTRUN_SM_BF16:
      ok = float_fits(v, 3.38953138925153547590470800371487867e38);
      if (ok) bits[0] = aotrun_sm_float_to_bf16((float)v);
      break;
    case AOTRUN_SM_F32:
    case DT_COMPLEX64:
      ok = float_fits(v, FLT_MAX);
      if (ok) bits[0] = aotrun_sm_f32_bits((float)v);
      break;
    case AOTRUN_SM_F64:
    case DT_COMPLEX128: bits[0] = aotrun_sm_f64_bits(v); break;
    default: {
      char buf[24];
      return aotrun_shim_fail("%s: cannot scatter a value into dtype %s", op,
                              aotrun_fb_dtype_name(dtype, buf));
    }
  }
  return ok ? AOTI_TORCH_SUCCESS : overflow(op, v, dtype);
}
