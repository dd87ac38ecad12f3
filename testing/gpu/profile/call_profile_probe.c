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

/* Prints where each name of `names` is found in `lib` (opened as the shim
 * opens cuBLAS and cuDNN); returns the handle (NULL without `lib`). */
static void *lookups(const char *lib, const char *const *names) {
  void *h = lib != NULL ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
  for (int i = 0; h != NULL && names[i] != NULL; i++) {
    Dl_info info;
    void *p = dlsym(h, names[i]);
    const char *from = p != NULL && dladdr(p, &info) && info.dli_fname
                           ? strrchr(info.dli_fname, '/')
                           : NULL;
    printf("probe: %s from %s\n", names[i],
           p == NULL ? "nowhere" : from != NULL ? from + 1 : "?");
  }
  return h;
}

int main(void) {
  int device = -1;
  for (int i = 0; i < 3; i++) (void)cudaGetDevice(&device);
  CUDAStreamGuardHandle guard = NULL;
  if (aoti_torch_create_cuda_stream_guard(NULL, 0, &guard) ==
      AOTI_TORCH_SUCCESS)
    (void)aoti_torch_delete_cuda_stream_guard(guard);
  /* The shim's lookups when a profiler is named as the cuBLAS or cuDNN to
   * open (as profile_case.sh does): a wrapped function comes from the
   * profiler, the others from the library itself. */
  const char *blas[] = {"cublasLtMatmul", "cublasCreate_v2",
                        "cublasLtMatmulDescInit_internal", NULL};
  const char *dnn[] = {"cudnnBackendExecute", "cudnnGetVersion", NULL};
  lookups(getenv("AOTRUN_CUBLASLT_LIBRARY"), blas);
  void *cudnn = lookups(getenv("AOTRUN_CUDNN_LIBRARY"), dnn);
  if (cudnn != NULL) {
    /* One call through the wrapper (the fake cuDNN refuses it). */
    void *p = dlsym(cudnn, "cudnnBackendExecute");
    int (*execute)(void *, void *, void *);
    memcpy(&execute, &p, sizeof p);
    printf("probe: cudnnBackendExecute returned %d\n",
           execute(NULL, NULL, NULL));
  }
  printf("probe done\n");
  return 0;
}
