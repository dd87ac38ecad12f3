/*
 * fuzz_st_file.c: libFuzzer target for the CLI's .safetensors input reader
 * (plugin_api/st_file.h): the loader's header checks plus the mapping to
 * DLPack dtypes, the rank bound and the copy into an input array. Every
 * accepted tensor is looked up by name and copied (its first and last byte
 * read). Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh st_file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/st_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* exact size: overreads trap */
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_st_file f;
  if (aotrun_st_file_parse("fuzz.safetensors", copy, size, &f) == AOTRUN_OK) {
    for (size_t i = 0; i < f.count; i++) {
      const aotrun_st_tensor *t = &f.tensors[i];
      if (aotrun_st_file_find(&f, t->name) != t) abort();
      if (t->ndim < 0 || t->ndim > AOTRUN_MAX_DIMS) abort();
      aotrun_npy a;
      if (aotrun_st_tensor_copy(t, &a) == AOTRUN_OK && a.nbytes != 0) {
        volatile uint8_t sink = ((const uint8_t *)a.data)[0] ^
                                ((const uint8_t *)a.data)[a.nbytes - 1];
        (void)sink;
      }
      aotrun_npy_free(&a);
    }
    aotrun_st_file_free(&f);
  }
  free(copy);
  return 0;
}
