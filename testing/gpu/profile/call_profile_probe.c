/* call_profile_probe.c: for test_call_profile.sh, three cudaGetDevice
 * calls, then a stream guard made through the shim, which asks for the
 * device inside: a wrapped call within a wrapped call. Without a GPU the
 * CUDA calls fail (the guard with them); they are still wrapped and timed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"

int main(void) {
  int device = -1;
  for (int i = 0; i < 3; i++) (void)cudaGetDevice(&device);
  CUDAStreamGuardHandle guard = NULL;
  if (aoti_torch_create_cuda_stream_guard(NULL, 0, &guard) ==
      AOTI_TORCH_SUCCESS)
    (void)aoti_torch_delete_cuda_stream_guard(guard);
  /* The shim's cuBLAS lookups when the profiler is named as cuBLAS
   * (AOTRUN_CUBLASLT_LIBRARY, as profile_case.sh sets it): a wrapped
   * function comes from the profiler, the others from cuBLAS itself. */
  const char *lib = getenv("AOTRUN_CUBLASLT_LIBRARY");
  void *h = lib != NULL ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (h != NULL) {
    const char *names[] = {"cublasLtMatmul", "cublasCreate_v2",
                           "cublasLtMatmulDescInit_internal"};
    for (int i = 0; i < 3; i++) {
      Dl_info info;
      void *p = dlsym(h, names[i]);
      const char *from = p != NULL && dladdr(p, &info) && info.dli_fname
                             ? strrchr(info.dli_fname, '/')
                             : NULL;
      printf("probe: %s from %s\n", names[i],
             p == NULL ? "nowhere" : from != NULL ? from + 1 : "?");
    }
  }
  printf("probe done\n");
  return 0;
}
