/*
 * npy.h: read and write NumPy .npy files as DLPack-typed host arrays.
 *
 * Reads format 1.0 and 2.0, writes 1.0. Little-endian dtypes only:
 *   <f8 <f4 <f2 <i8 <i4 <i2 |i1 |u1 <u2 <u4 <u8 |b1 <c8
 * C order only (fortran_order True is refused); 0-d and zero-size arrays
 * work. Headers are validated strictly; every error names the file and is
 * readable with aotrun_host_last_error().
 */
#ifndef AOTRUN_NPY_H
#define AOTRUN_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bool is {AOTRUN_DL_BOOL, 8, 1}: AOTRUN_DL_BOOL (DLPack >= 0.8's kDLBool)
 * is pinned in aotrun_plugin.h. */

typedef struct aotrun_npy {
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[AOTRUN_MAX_DIMS];
  void *data;    /* owned by the array: aotrun_npy_free; never NULL */
  size_t nbytes; /* product(shape) * itemsize */
} aotrun_npy;

/* Largest .npy file aotrun_npy_read reads (16 GiB): an input must be a
 * regular file no larger than this (not a FIFO or /dev/zero). */
#define AOTRUN_NPY_MAX_FILE_BYTES ((size_t)1 << 34)

/* Reads `path` into *out (zeroed on failure). The file is opened without
 * blocking and must be a regular file of at most AOTRUN_NPY_MAX_FILE_BYTES.
 */
aotrun_status aotrun_npy_read(const char *path, aotrun_npy *out);
/* Parses the bytes of a whole .npy file; `name` is used in messages. */
aotrun_status aotrun_npy_parse(const char *name, const void *bytes,
                               size_t size, aotrun_npy *out);
/* Writes a C-order array as format 1.0. A symbolic link at `path` is
 * refused, never followed. On failure nothing is left at `path` (a partly
 * written file is removed). */
aotrun_status aotrun_npy_write(const char *path, DLDataType dtype,
                               int32_t ndim, const int64_t *shape,
                               const void *data);
/* Allocates zeroed data for a->dtype, a->ndim and a->shape (set by the
 * caller): the byte size is computed with overflow checks, so a shape such
 * as [2^32, 2^32] is AOTRUN_ERR_INVALID_ARGUMENT naming `name` and the dim,
 * never a short buffer. */
aotrun_status aotrun_npy_alloc(const char *name, aotrun_npy *a);
/* Frees out->data and zeroes *a. Accepts a zeroed array. */
void aotrun_npy_free(aotrun_npy *a);

/* The .npy descr of a dtype ("<f4"), or NULL when .npy support lacks it. */
const char *aotrun_npy_descr(DLDataType dtype);
/* The dtype of a descr; AOTRUN_ERR_NOT_SUPPORTED names it otherwise. */
aotrun_status aotrun_npy_dtype(const char *descr, DLDataType *out);
/* torch-style name ("float32", "bool", "bfloat16"); "unknown" otherwise. */
const char *aotrun_dtype_name(DLDataType dtype);
/* Bytes per element (bits/8 * lanes); 0 for sub-byte or odd types. */
size_t aotrun_dtype_size(DLDataType dtype);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_NPY_H */
