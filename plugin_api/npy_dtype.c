/* npy_dtype.c: the dtype table shared by .npy I/O and the CLI. */
#include <string.h>

#include "plugin_api/host_error.h"
#include "plugin_api/npy.h"

typedef struct dtype_entry {
  const char *descr; /* NULL: not representable in .npy */
  const char *name;
  uint8_t code;
  uint8_t bits;
} dtype_entry;

static const dtype_entry kTypes[] = {
    {"<f8", "float64", kDLFloat, 64},  {"<f4", "float32", kDLFloat, 32},
    {"<f2", "float16", kDLFloat, 16},  {"<i8", "int64", kDLInt, 64},
    {"<i4", "int32", kDLInt, 32},      {"<i2", "int16", kDLInt, 16},
    {"|i1", "int8", kDLInt, 8},        {"|u1", "uint8", kDLUInt, 8},
    {"<u2", "uint16", kDLUInt, 16},    {"<u4", "uint32", kDLUInt, 32},
    {"<u8", "uint64", kDLUInt, 64},    {"|b1", "bool", AOTRUN_DL_BOOL, 8},
    {"<c8", "complex64", kDLComplex, 64},
    {NULL, "bfloat16", kDLBfloat, 16},
    /* DLPack 1.1 float8 codes (safetensors F8_E4M3, F8_E5M2 only). */
    {NULL, "float8_e4m3fn", 10, 8},    {NULL, "float8_e5m2", 12, 8},
};

static const dtype_entry *lookup(DLDataType t) {
  if (t.lanes != 1) return NULL;
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++)
    if (kTypes[i].code == t.code && kTypes[i].bits == t.bits)
      return &kTypes[i];
  return NULL;
}

const char *aotrun_npy_descr(DLDataType t) {
  const dtype_entry *e = lookup(t);
  return e != NULL ? e->descr : NULL;
}

const char *aotrun_dtype_name(DLDataType t) {
  const dtype_entry *e = lookup(t);
  return e != NULL ? e->name : "unknown";
}

size_t aotrun_dtype_size(DLDataType t) {
  if (t.bits == 0 || t.bits % 8 != 0) return 0;
  return (size_t)(t.bits / 8) * t.lanes;
}

aotrun_status aotrun_npy_dtype(const char *descr, DLDataType *out) {
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++) {
    if (kTypes[i].descr != NULL && strcmp(kTypes[i].descr, descr) == 0) {
      out->code = kTypes[i].code;
      out->bits = kTypes[i].bits;
      out->lanes = 1;
      return AOTRUN_OK;
    }
  }
  return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                          "dtype '%s' is not supported (little-endian "
                          "f8 f4 f2 i8 i4 i2 i1 u1 u2 u4 u8 b1 c8 only)",
                          descr);
}
