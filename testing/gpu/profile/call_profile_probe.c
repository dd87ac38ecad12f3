/* call_profile_probe.c: for test_call_profile.sh, three cudaGetDevice
 * calls, then a stream guard made through the shim, which asks for the
 * device inside: a wrapped call within a wrapped call. Without a GPU the
 * CUDA calls fail (the guard with them); they are still wrapped and timed. */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"

int main(void) {
  int device = -1;
  for (int i = 0; i < 3; i++) (void)cudaGetDevice(&device);
  CUDAStreamGuardHandle guard = NULL;
  if (aoti_torch_create_cuda_stream_guard(NULL, 0, &guard) ==
      AOTI_TORCH_SUCCESS)
    (void)aoti_torch_delete_cuda_stream_guard(guard);
  printf("probe done\n");
  return 0;
}
