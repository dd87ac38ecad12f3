/*
 * fuzz_manifest.c: libFuzzer target for the manifest parser
 * (aot_loader/program.h). Not part of `bazel test //...` (clang is not
 * installed by tools/setup.sh); run with testing/fuzz/run_fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>

#include "aot_loader/program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aotrun_program *p = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_program_parse(data, size, &p, &err) == AOTRUN_OK) {
    const aotrun_program_method *m = NULL;
    aotrun_program_find_method(p, "forward", &m, &err);
    aotrun_program_destroy(p);
  }
  return 0;
}
