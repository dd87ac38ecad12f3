/* dl_dtype.c: see dl_dtype.h. */
#include "aot_loader/dl_dtype.h"

#include <stdio.h>

#include "aot_loader/scalar_type.h"

typedef struct dl_map {
  int32_t scalar;
  uint8_t code;
  uint8_t bits;
} dl_map;

static const dl_map kDlTypes[] = {
    {0, kDLUInt, 8},      {1, kDLInt, 8},       {2, kDLInt, 16},
    {3, kDLInt, 32},      {4, kDLInt, 64},      {5, kDLFloat, 16},
    {6, kDLFloat, 32},    {7, kDLFloat, 64},    {8, kDLComplex, 32},
    {9, kDLComplex, 64},  {10, kDLComplex, 128}, {11, AOTRUN_DL_BOOL, 8},
    {15, kDLBfloat, 16},  {23, AOTRUN_DL_FLOAT8_E5M2, 8},
    {24, AOTRUN_DL_FLOAT8_E4M3FN, 8},
    {25, AOTRUN_DL_FLOAT8_E5M2FNUZ, 8},
    {26, AOTRUN_DL_FLOAT8_E4M3FNUZ, 8},
    {27, kDLUInt, 16},    {28, kDLUInt, 32},    {29, kDLUInt, 64},
};
#define NUM_DL_TYPES (sizeof kDlTypes / sizeof kDlTypes[0])

int aotrun_dl_dtype_from_scalar_type(int32_t scalar_type, DLDataType *out) {
  for (size_t i = 0; i < NUM_DL_TYPES; i++)
    if (kDlTypes[i].scalar == scalar_type) {
      out->code = kDlTypes[i].code;
      out->bits = kDlTypes[i].bits;
      out->lanes = 1;
      return 1;
    }
  return 0;
}

int32_t aotrun_dl_dtype_to_scalar_type(DLDataType dtype) {
  if (dtype.lanes != 1) return -1;
  for (size_t i = 0; i < NUM_DL_TYPES; i++)
    if (kDlTypes[i].code == dtype.code && kDlTypes[i].bits == dtype.bits)
      return kDlTypes[i].scalar;
  return -1;
}

const char *aotrun_dl_scalar_name(int32_t scalar) {
  switch (scalar) {
    case 8: return "complex32";
    case 10: return "complex128";
    case 25: return "float8_e5m2fnuz";
    case 26: return "float8_e4m3fnuz";
    default: break;
  }
  const aotrun_scalar_type *t = aotrun_scalar_type_from_code(scalar);
  return t != NULL ? t->name : NULL;
}

const char *aotrun_dl_dtype_describe(DLDataType dtype, char *buf,
                                     size_t size) {
  const char *name = aotrun_dl_scalar_name(aotrun_dl_dtype_to_scalar_type(dtype));
  if (name != NULL)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "DLDataType{code %u, bits %u, lanes %u}",
             (unsigned)dtype.code, (unsigned)dtype.bits,
             (unsigned)dtype.lanes);
  return buf;
}
