/*
 * dtype.h: libtorch's ScalarType, DeviceType and Layout codes (DESIGN.md
 * §2.3) and what the shim needs to know about each dtype.
 */
#ifndef AOTRUN_SHIM_DTYPE_H
#define AOTRUN_SHIM_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  AOTRUN_DT_UINT8 = 0,
  AOTRUN_DT_INT8 = 1,
  AOTRUN_DT_INT16 = 2,
  AOTRUN_DT_INT32 = 3,
  AOTRUN_DT_INT64 = 4,
  AOTRUN_DT_FLOAT16 = 5,
  AOTRUN_DT_FLOAT32 = 6,
  AOTRUN_DT_FLOAT64 = 7,
  AOTRUN_DT_COMPLEX32 = 8,
  AOTRUN_DT_COMPLEX64 = 9,
  AOTRUN_DT_COMPLEX128 = 10,
  AOTRUN_DT_BOOL = 11,
  AOTRUN_DT_BFLOAT16 = 15,
  AOTRUN_DT_FLOAT8_E5M2 = 23,
  AOTRUN_DT_FLOAT8_E4M3FN = 24,
  AOTRUN_DT_FLOAT8_E5M2FNUZ = 25,
  AOTRUN_DT_FLOAT8_E4M3FNUZ = 26,
  AOTRUN_DT_UINT16 = 27,
  AOTRUN_DT_UINT32 = 28,
  AOTRUN_DT_UINT64 = 29,
};

enum {
  AOTRUN_DEV_CPU = 0,
  AOTRUN_DEV_CUDA = 1,
  AOTRUN_DEV_XPU = 12,
  AOTRUN_DEV_MPS = 13,
  AOTRUN_DEV_META = 14,
  AOTRUN_DEV_PRIVATEUSE1 = 20,
};

enum { AOTRUN_LAYOUT_STRIDED = 0 };

/* Bytes per element, 0 for a code that is not a supported dtype. */
size_t aotrun_dtype_size(int32_t dtype);
/* "float32", ... or "unknown". */
const char *aotrun_dtype_name(int32_t dtype);
/* 1 for the real dtypes the copy/item code converts between (bool,
 * integers, float16, bfloat16, float32, float64). */
int aotrun_dtype_is_real(int32_t dtype);
/* "cpu", "cuda", ... or "unknown". */
const char *aotrun_device_name(int32_t device_type);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_DTYPE_H */
