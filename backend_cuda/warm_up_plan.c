/* warm_up_plan.c: see warm_up_plan.h. */
#include "backend_cuda/warm_up_plan.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "shim_lib/aotrun_shim.h"

uint32_t aotrun_warm_up_bits_of(const char *import) {
  static const char prefix[] = "aoti_torch_cuda_";
  if (import == NULL || strncmp(import, prefix, sizeof prefix - 1) != 0)
    return 0;
  const char *op = import + sizeof prefix - 1;
  static const char *const gemm[] = {"mm_out", "addmm_out", "bmm_out",
                                     "baddbmm_out", "addmv", "_addmm_activation",
                                     "mm_dtype_out"};
  for (size_t i = 0; i < sizeof gemm / sizeof gemm[0]; i++)
    if (strncmp(op, gemm[i], strlen(gemm[i])) == 0)
      return AOTRUN_SHIM_WARM_GEMM;
  if (strstr(op, "convolution") != NULL) return AOTRUN_SHIM_WARM_CONV;
  return 0;
}

uint32_t aotrun_warm_up_plan(const void *manifest, size_t size,
                             const char *method) {
  uint32_t bits = AOTRUN_SHIM_WARM_ALLOC;
  if (manifest == NULL || method == NULL) return bits;
  cJSON *root = cJSON_ParseWithLength(manifest, size);
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "methods");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(methods, method);
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "aoti_torch_imports");
  const cJSON *item = NULL;
  cJSON_ArrayForEach(item, list) {
    if (cJSON_IsString(item)) bits |= aotrun_warm_up_bits_of(item->valuestring);
  }
  cJSON_Delete(root);
  return bits;
}
