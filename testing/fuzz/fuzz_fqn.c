/*
 * fuzz_fqn.c: libFuzzer target for FQN weight metadata: a manifest's
 * constants checked against a safetensors file
 * (aotrun_method_weights_check_weights) and the binary-blob size computed
 * from them (aotrun_method_weights_blob_size, packed and padded).
 * Input: a 4-byte little-endian manifest length M, M bytes of manifest.json,
 * then the safetensors file. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh fqn.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_weights.h"
#include "aot_loader/program.h"
#include "aot_loader/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  size_t m = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
             (size_t)data[3] << 24;
  data += 4;
  size -= 4;
  if (m > size) m = size;
  size_t w = size - m;
  /* Exact-size heap copies, so ASan sees any read past either part. */
  uint8_t *manifest = malloc(m ? m : 1);
  uint8_t *weights = malloc(w ? w : 1);
  if (manifest == NULL || weights == NULL) goto done;
  if (m) memcpy(manifest, data, m);
  if (w) memcpy(weights, data + m, w);

  aotrun_program *p = NULL;
  aotrun_safetensors *st = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_program_parse(manifest, m, &p, &err) != AOTRUN_OK) goto done;
  aotrun_error_clear(&err);
  if (aotrun_safetensors_parse(weights, w, "fuzz.safetensors", &st, &err) !=
      AOTRUN_OK)
    st = NULL;
  for (size_t i = 0; i < p->num_methods; ++i) {
    const aotrun_program_method *method = &p->methods[i];
    uint64_t blob = 0;
    aotrun_error_clear(&err);
    if (st != NULL || method->num_constants == 0)
      aotrun_method_weights_check_weights(method, st, &err);
    aotrun_error_clear(&err);
    aotrun_method_weights_blob_size(method, 0, &blob, &err);
    aotrun_error_clear(&err);
    aotrun_method_weights_blob_size(method, 1, &blob, &err);
  }
  aotrun_safetensors_destroy(st);
  aotrun_program_destroy(p);
done:
  free(manifest);
  free(weights);
  return 0;
}
