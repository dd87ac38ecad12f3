/*
 * fuzz_kernel_arch.c: libFuzzer target for the GPU portability check at
 * load (aot_loader/kernel_arch.h): the ELF section table, `.nv_fatbin`
 * containers and their entries, cubins embedded as data, then the check
 * against a few GPUs and the description. Not part of `bazel test //...`;
 * run with testing/fuzz/run_fuzz.sh kernel_arch.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/kernel_arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan sees any read past the end. */
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_kernel_archs archs;
  aotrun_kernel_archs_scan(copy, size, &archs);
  static const uint32_t kGpus[] = {75, 80, 86, 90, 100, 120};
  aotrun_error err;
  for (size_t i = 0; i < sizeof kGpus / sizeof kGpus[0]; i++)
    aotrun_kernel_archs_check(&archs, kGpus[i], "fuzz.so", "cuda:0", &err);
  char buf[64];
  aotrun_kernel_archs_describe(&archs, buf, sizeof buf);
  free(copy);
  return 0;
}
