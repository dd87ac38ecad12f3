/*
 * st_file.h: named host tensors in .safetensors files, for the CLI's
 * --input and --output-format safetensors (every dtype of the ABI,
 * bfloat16 and float8 included, which .npy cannot hold).
 *
 * Layout (https://github.com/huggingface/safetensors): an 8-byte
 * little-endian header length N, N bytes of JSON ({"name": {"dtype": "F32",
 * "shape": [2, 3], "data_offsets": [begin, end]}, ..., optional
 * "__metadata__": {string: string}}), then the data region, C order,
 * little-endian. Reading reuses the loader's validating parser
 * (aot_loader/safetensors.h: header length limit, known dtypes,
 * overflow-checked byte counts, offsets inside the data, no overlaps);
 * writing pads the header with spaces to a multiple of 8 and lays the
 * tensors out in the order given. Every error names the file (and the
 * tensor) and is readable with aotrun_host_last_error().
 */
#ifndef AOTRUN_ST_FILE_H
#define AOTRUN_ST_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"
#include "plugin_api/npy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest .safetensors file aotrun_st_file_read reads (as for .npy). */
#define AOTRUN_ST_MAX_FILE_BYTES AOTRUN_NPY_MAX_FILE_BYTES

/* DLPack >= 1.1 float8 codes (DLPack 0.6 has none), as the loader uses. */
#define AOTRUN_DL_FLOAT8_E4M3FN 10u
#define AOTRUN_DL_FLOAT8_E5M2 12u

/* One tensor of a file: a view into the file's bytes. */
typedef struct aotrun_st_tensor {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[AOTRUN_MAX_DIMS];
  const void *data; /* inside the file's bytes; not aligned */
  size_t nbytes;
} aotrun_st_tensor;

typedef struct aotrun_st_file {
  size_t count;
  aotrun_st_tensor *tensors; /* sorted by name */
  void *bytes;               /* owned by aotrun_st_file_read, else NULL */
  void *view;                /* the loader's parsed header */
} aotrun_st_file;

/* Parses a whole file held in `bytes` (borrowed: it must outlive *out);
 * `name` is used in messages. *out is zeroed on failure. */
aotrun_status aotrun_st_file_parse(const char *name, const void *bytes,
                                   size_t size, aotrun_st_file *out);
/* Reads `path` (a regular file of at most AOTRUN_ST_MAX_FILE_BYTES, opened
 * without blocking) and parses it; *out owns the bytes. */
aotrun_status aotrun_st_file_read(const char *path, aotrun_st_file *out);
/* The tensor called `name`, or NULL. */
const aotrun_st_tensor *aotrun_st_file_find(const aotrun_st_file *f,
                                            const char *name);
/* Frees everything; accepts a zeroed file. */
void aotrun_st_file_free(aotrun_st_file *f);

/* Copies a tensor into a new array (owned by *out; aotrun_npy_free). */
aotrun_status aotrun_st_tensor_copy(const aotrun_st_tensor *t,
                                    aotrun_npy *out);

/* Writes `count` CPU tensors as `path`, keyed by names[i] (non-empty,
 * unique, not "__metadata__"). Data is tensors[i].data + byte_offset in C
 * order. A symbolic link at `path` is refused, never followed; on failure
 * nothing is left at `path`. */
aotrun_status aotrun_st_file_write(const char *path, size_t count,
                                   const char *const *names,
                                   const DLTensor *tensors);

/* The safetensors dtype string of a dtype ("BF16"), or NULL. */
const char *aotrun_st_dtype_name(DLDataType dtype);
/* The dtype of a safetensors dtype string; AOTRUN_ERR_NOT_SUPPORTED
 * naming it otherwise. */
aotrun_status aotrun_st_dtype(const char *name, DLDataType *out);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_ST_FILE_H */
