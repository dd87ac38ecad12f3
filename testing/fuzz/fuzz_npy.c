/*
 * fuzz_npy.c: libFuzzer target for the .npy reader (plugin_api/npy.h):
 * magic, version 1.0/2.0 header lengths, the header dict (descr,
 * fortran_order, shape) and the data size. Not part of `bazel test //...`;
 * run with testing/fuzz/run_fuzz.sh npy.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_npy a;
  memset(&a, 0, sizeof a);
  if (aotrun_npy_parse("fuzz.npy", copy, size, &a) == AOTRUN_OK) {
    if (a.data == NULL) abort();
    if (a.nbytes != 0) {
      volatile uint8_t sink =
          ((const uint8_t *)a.data)[0] ^ ((const uint8_t *)a.data)[a.nbytes - 1];
      (void)sink;
    }
  }
  aotrun_npy_free(&a);
  free(copy);
  return 0;
}
