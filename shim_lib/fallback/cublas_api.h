/*
 * cublas_api.h: the cuBLAS and cuBLASLt functions the GEMM ops call, opened
 * with dlopen at the first GEMM (cublas_loader.c), as cuDNN is for
 * convolutions: libaotrun_shim.so has no link-time dependency on cuBLAS, so
 * a process whose models make no GEMM never loads it (cuBLASLt alone takes
 * about 50 ms to load) and a machine without cuBLAS still runs them. A
 * method whose model imports a GEMM op loads it at init (warm_up.c).
 *
 * The members are named by the functions' real symbols: cublas_v2.h maps
 * cublasCreate to cublasCreate_v2 and so on, and the same macros rename the
 * member and every call through it.
 */
#ifndef AOTRUN_FALLBACK_CUBLAS_API_H
#define AOTRUN_FALLBACK_CUBLAS_API_H

#include <cublasLt.h>
#include <cublas_v2.h>

#include "shim_lib/fallback/fallback_tensor.h"

#define AOTRUN_FB_CUBLAS_FN(name) __typeof__(name) *name
typedef struct aotrun_fb_cublas_api {
  /* libcublas */
  AOTRUN_FB_CUBLAS_FN(cublasCreate);
  AOTRUN_FB_CUBLAS_FN(cublasDestroy);
  AOTRUN_FB_CUBLAS_FN(cublasSetStream);
  AOTRUN_FB_CUBLAS_FN(cublasSetWorkspace);
  AOTRUN_FB_CUBLAS_FN(cublasSetMathMode);
  AOTRUN_FB_CUBLAS_FN(cublasGetStatusString);
  AOTRUN_FB_CUBLAS_FN(cublasGemmEx_64);
  AOTRUN_FB_CUBLAS_FN(cublasGemmStridedBatchedEx_64);
  /* libcublasLt */
  AOTRUN_FB_CUBLAS_FN(cublasLtCreate);
  AOTRUN_FB_CUBLAS_FN(cublasLtDestroy);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmul);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmulAlgoGetHeuristic);
  /* cublasLt.h's cublasLt*Init are inline wrappers of these (with the
   * descriptor's size): the library exports only the _internal names. */
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmulDescInit_internal);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmulDescSetAttribute);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatrixLayoutInit_internal);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatrixLayoutSetAttribute);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmulPreferenceInit_internal);
  AOTRUN_FB_CUBLAS_FN(cublasLtMatmulPreferenceSetAttribute);
} aotrun_fb_cublas_api;
#undef AOTRUN_FB_CUBLAS_FN

/* The default library names; AOTRUN_CUBLAS_LIBRARY and
 * AOTRUN_CUBLASLT_LIBRARY (a name or a path) override them. */
#define AOTRUN_FB_CUBLAS_LIBRARY "libcublas.so.13"
#define AOTRUN_FB_CUBLASLT_LIBRARY "libcublasLt.so.13"

/* Opens cuBLAS and cuBLASLt once (later calls return the same table; both
 * stay loaded for the process); on failure the error names op, the library
 * and dlerror()'s text or the missing symbol, and the next call tries
 * again. Thread safe. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_cublas_load(
    const char *op, const aotrun_fb_cublas_api **api);

/* The table once loaded (NULL before): for destroying handles, which
 * exist only once it was. GEMMs get it from their handle's acquire
 * (cublas_handle.h). */
AOTRUN_FB_HIDDEN const aotrun_fb_cublas_api *aotrun_fb_cublas(void);

#endif /* AOTRUN_FALLBACK_CUBLAS_API_H */
