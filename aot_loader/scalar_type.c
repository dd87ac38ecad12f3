/* scalar_type.c: the dtype table of docs/program-format.md. */
#include "aot_loader/scalar_type.h"

#include <stdio.h>
#include <string.h>

static const aotrun_scalar_type kTypes[] = {
    {0, "uint8", "U8", 1},           {1, "int8", "I8", 1},
    {2, "int16", "I16", 2},          {3, "int32", "I32", 4},
    {4, "int64", "I64", 8},          {5, "float16", "F16", 2},
    {6, "float32", "F32", 4},        {7, "float64", "F64", 8},
    {9, "complex64", "C64", 8},      {11, "bool", "BOOL", 1},
    {15, "bfloat16", "BF16", 2},     {23, "float8_e5m2", "F8_E5M2", 1},
    {24, "float8_e4m3fn", "F8_E4M3", 1}, {27, "uint16", "U16", 2},
    {28, "uint32", "U32", 4},        {29, "uint64", "U64", 8},
};

#define NUM_TYPES (sizeof(kTypes) / sizeof(kTypes[0]))

const aotrun_scalar_type *aotrun_scalar_type_from_name(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (strcmp(kTypes[i].name, name) == 0) return &kTypes[i];
  return NULL;
}

const aotrun_scalar_type *aotrun_scalar_type_from_safetensors_name(
    const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (strcmp(kTypes[i].safetensors_name, name) == 0) return &kTypes[i];
  return NULL;
}

const aotrun_scalar_type *aotrun_scalar_type_from_code(int32_t code) {
  for (size_t i = 0; i < NUM_TYPES; i++)
    if (kTypes[i].code == code) return &kTypes[i];
  return NULL;
}

const char *aotrun_scalar_type_describe(int32_t code, char *buf,
                                        size_t size) {
  const aotrun_scalar_type *t = aotrun_scalar_type_from_code(code);
  if (t != NULL)
    snprintf(buf, size, "%s", t->name);
  else
    snprintf(buf, size, "ScalarType %d", (int)code);
  return buf;
}
