/*
 * fuzz_shim_binding.c: libFuzzer target for reading a model library's
 * aoti_torch_* import slots from its bytes (aot_loader/shim_binding.h):
 * program headers, the dynamic section, DT_RELA / DT_JMPREL, symbols and
 * names; then the missing-name list. Binding (which writes memory) is not
 * fuzzed. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh shim_binding.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/shim_binding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "Exports" the names of even length. */
static void *lookup(void *ctx, const char *name) {
  (void)ctx;
  return strlen(name) % 2 == 0 ? (void *)name : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan sees any read past the end. */
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  aotrun_shim_plan plan;
  aotrun_error err;
  if (aotrun_shim_plan_read(copy, size, "fuzz.so", &plan, &err) ==
      AOTRUN_OK) {
    for (size_t i = 0; i < plan.num_slots; i++)
      if (plan.slots[i].name >= plan.num_names) abort();
    char buf[64];
    (void)aotrun_shim_plan_missing(&plan, lookup, NULL, buf, sizeof buf);
    aotrun_shim_plan_free(&plan);
  }
  free(copy);
  return 0;
}
