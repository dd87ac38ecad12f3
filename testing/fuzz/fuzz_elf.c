/*
 * fuzz_elf.c: libFuzzer target for the ELF checks made before dlopen
 * (aot_loader/elf_check.h): ELF header, program header table and every
 * segment against the byte count. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh elf.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/elf_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_elf_check_shared_library(copy, size, "fuzz.so", &err);
  free(copy);
  return 0;
}
