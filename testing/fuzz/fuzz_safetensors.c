/*
 * fuzz_safetensors.c: libFuzzer target for the safetensors parser
 * (aot_loader/safetensors.h): the 8-byte header length, the JSON header
 * (entries, dtypes, shapes, data_offsets, "__metadata__") and the bounds of
 * the data region. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh safetensors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A heap copy of exactly `size` bytes, so ASan sees any read past it. */
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_safetensors *st = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_safetensors_parse(copy, size, "fuzz.safetensors", &st, &err) ==
      AOTRUN_OK) {
    size_t n = aotrun_safetensors_num_entries(st);
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < n; ++i) {
      const aotrun_safetensors_entry *e = aotrun_safetensors_entry_at(st, i);
      /* Every byte an entry claims must lie inside the buffer. */
      if (e->nbytes) sink ^= e->data[0] ^ e->data[e->nbytes - 1];
      for (size_t d = 0; d < e->ndim; ++d) sink ^= (uint8_t)e->shape[d];
      if (aotrun_safetensors_find(st, e->key) != e) abort();
    }
    (void)sink;
    aotrun_safetensors_destroy(st);
  }
  free(copy);
  return 0;
}
