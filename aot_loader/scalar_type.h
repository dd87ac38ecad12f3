/*
 * scalar_type.h: the dtypes a program may name, with their torch ScalarType
 * codes (DESIGN.md §2.3), element sizes and names in the manifest (torch
 * names) and in safetensors headers.
 */
#ifndef AOTRUN_SCALAR_TYPE_H
#define AOTRUN_SCALAR_TYPE_H

#include <stddef.h>
#include <stdint.h>

typedef struct aotrun_scalar_type {
  int32_t code;                 /* torch ScalarType */
  const char *name;             /* manifest name, e.g. "float32" */
  const char *safetensors_name; /* e.g. "F32" */
  size_t itemsize;              /* bytes per element */
} aotrun_scalar_type;

/* Lookups; NULL when the name/code is not one a program may use. */
const aotrun_scalar_type *aotrun_scalar_type_from_name(const char *name);
const aotrun_scalar_type *aotrun_scalar_type_from_safetensors_name(
    const char *name);
const aotrun_scalar_type *aotrun_scalar_type_from_code(int32_t code);

/* The manifest name of a code, or "ScalarType <code>" for codes outside the
 * table, written into buf (which is returned). For messages. */
const char *aotrun_scalar_type_describe(int32_t code, char *buf, size_t size);

#endif /* AOTRUN_SCALAR_TYPE_H */
