/*
 * st_dtype.c: safetensors dtype strings <-> DLPack dtypes: every dtype a
 * program may use (docs/program-format.md, the loader's scalar_type.c).
 */
#include <string.h>

#include "plugin_api/host_error.h"
#include "plugin_api/st_file.h"

typedef struct st_dtype_entry {
  const char *name;
  uint8_t code;
  uint8_t bits;
} st_dtype_entry;

static const st_dtype_entry kTypes[] = {
    {"F64", kDLFloat, 64},
    {"F32", kDLFloat, 32},
    {"F16", kDLFloat, 16},
    {"BF16", kDLBfloat, 16},
    {"F8_E5M2", AOTRUN_DL_FLOAT8_E5M2, 8},
    {"F8_E4M3", AOTRUN_DL_FLOAT8_E4M3FN, 8},
    {"I64", kDLInt, 64},
    {"I32", kDLInt, 32},
    {"I16", kDLInt, 16},
    {"I8", kDLInt, 8},
    {"U64", kDLUInt, 64},
    {"U32", kDLUInt, 32},
    {"U16", kDLUInt, 16},
    {"U8", kDLUInt, 8},
    {"BOOL", AOTRUN_DL_BOOL, 8},
    {"C64", kDLComplex, 64},
};

#define NUM_TYPES (sizeof kTypes / sizeof kTypes[0])

const char *aotrun_st_dtype_name(DLDataType t) {
  if (t.lanes != 1) return NULL;
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (kTypes[i].code == t.code && kTypes[i].bits == t.bits)
      return kTypes[i].name;
  return NULL;
}

aotrun_status aotrun_st_dtype(const char *name, DLDataType *out) {
  for (size_t i = 0; name != NULL && i < NUM_TYPES; i++)
    if (strcmp(kTypes[i].name, name) == 0) {
      *out = (DLDataType){kTypes[i].code, kTypes[i].bits, 1};
      return AOTRUN_OK;
    }
  return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                          "safetensors dtype '%s' is not supported (F64 F32 "
                          "F16 BF16 F8_E5M2 F8_E4M3 I64 I32 I16 I8 U64 U32 "
                          "U16 U8 BOOL C64)",
                          name != NULL ? name : "(null)");
}
