/*
 * dl_dtype.h: DLPack dtypes <-> libtorch ScalarType codes (DESIGN.md §2.3),
 * as the plugin ABI (DLTensor) and the shim (ScalarType) spell them.
 */
#ifndef AOTRUN_DL_DTYPE_H
#define AOTRUN_DL_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

/* AOTRUN_DL_BOOL, AOTRUN_DL_FLOAT8_*: the codes DLPack 0.6 lacks, pinned by
 * the ABI header. */
#include "plugin_api/aotrun_plugin.h"

/* 0 when the ScalarType has no DLPack spelling. */
int aotrun_dl_dtype_from_scalar_type(int32_t scalar_type, DLDataType *out);
/* -1 when the DLDataType is not a ScalarType. */
int32_t aotrun_dl_dtype_to_scalar_type(DLDataType dtype);
/* "float32" for a ScalarType code; NULL when unknown. */
const char *aotrun_dl_scalar_name(int32_t scalar_type);
/* "float32", or "DLDataType{code 2, bits 24, lanes 1}"; written to buf. */
const char *aotrun_dl_dtype_describe(DLDataType dtype, char *buf,
                                     size_t size);

static inline int aotrun_dl_same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* Bytes per element. */
static inline size_t aotrun_dl_itemsize(DLDataType t) {
  return ((size_t)t.bits * t.lanes + 7) / 8;
}

/* Bytes of a tensor's elements: the product of its shape times the item
 * size (strides not read: for the contiguous tensors callers copy). */
static inline size_t aotrun_dl_nbytes(const DLTensor *t) {
  size_t n = aotrun_dl_itemsize(t->dtype);
  for (int32_t d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

#endif /* AOTRUN_DL_DTYPE_H */
