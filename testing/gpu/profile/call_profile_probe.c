/* call_profile_probe.c: three cudaGetDevice calls for
 * test_call_profile.sh (their result does not matter: without a GPU they
 * fail, and are still wrapped and timed). */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void) {
  int device = -1;
  for (int i = 0; i < 3; i++) (void)cudaGetDevice(&device);
  printf("probe done\n");
  return 0;
}
