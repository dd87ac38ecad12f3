/* cublas_loader.c: opens cuBLASLt and cuBLAS with dlopen at the first GEMM
 * and resolves the functions aotrun calls (see cublas_api.h, dl_table.h). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include "shim_lib/fallback/cublas_api.h"
#include "shim_lib/fallback/dl_table.h"

static aotrun_fb_dl_once once = AOTRUN_FB_DL_ONCE_INIT;
static aotrun_fb_cublas_api api_table;

static const char kInstall[] =
    "the CUDA 13 cuBLAS (the toolkit's lib64, or torch's nvidia-cublas "
    "wheel)";
static const aotrun_fb_dl_library kBlas = {
    "cuBLAS", "matrix multiplications", kInstall, "CUDA 13's cuBLAS",
    "AOTRUN_CUBLAS_LIBRARY"};
static const aotrun_fb_dl_library kLt = {
    "cuBLAS", "matrix multiplications", kInstall, "CUDA 13's cuBLAS",
    "AOTRUN_CUBLASLT_LIBRARY"};

/* The symbol's real name: cublas_v2.h's macros applied (cublasCreate ->
 * "cublasCreate_v2"), as they apply to the member's name. */
#define SYMBOL_STRING(fn) #fn
#define SYMBOL(fn) {SYMBOL_STRING(fn), offsetof(aotrun_fb_cublas_api, fn)}

static const aotrun_fb_dl_symbol kBlasSymbols[] = {
    SYMBOL(cublasCreate),
    SYMBOL(cublasDestroy),
    SYMBOL(cublasSetStream),
    SYMBOL(cublasSetWorkspace),
    SYMBOL(cublasSetMathMode),
    SYMBOL(cublasGetStatusString),
    SYMBOL(cublasGemmEx_64),
    SYMBOL(cublasGemmStridedBatchedEx_64),
};

static const aotrun_fb_dl_symbol kLtSymbols[] = {
    SYMBOL(cublasLtCreate),
    SYMBOL(cublasLtDestroy),
    SYMBOL(cublasLtMatmul),
    SYMBOL(cublasLtMatmulAlgoGetHeuristic),
    SYMBOL(cublasLtMatmulDescInit_internal),
    SYMBOL(cublasLtMatmulDescSetAttribute),
    SYMBOL(cublasLtMatrixLayoutInit_internal),
    SYMBOL(cublasLtMatrixLayoutSetAttribute),
    SYMBOL(cublasLtMatmulPreferenceInit_internal),
    SYMBOL(cublasLtMatmulPreferenceSetAttribute),
};
#undef SYMBOL

/* The library's name: the environment's override or the default. */
static const char *library_name(const char *env, const char *fallback) {
  const char *v = getenv(env);
  return v != NULL && v[0] != '\0' ? v : fallback;
}

/* Called with the once lock held. */
static AOTITorchError load(const char *op, const void **table) {
  const char *lt_name = library_name(kLt.env, AOTRUN_FB_CUBLASLT_LIBRARY);
  const char *blas_name = library_name(kBlas.env, AOTRUN_FB_CUBLAS_LIBRARY);
  void *lt = NULL, *blas = NULL;
  aotrun_fb_cublas_api t = {0};
  AOTITorchError err = aotrun_fb_dl_open(op, &kLt, lt_name, &lt);
  if (!err) err = aotrun_fb_dl_open(op, &kBlas, blas_name, &blas);
  if (!err)
    err = aotrun_fb_dl_resolve(op, &kBlas, blas_name, blas, kBlasSymbols,
                               sizeof kBlasSymbols / sizeof *kBlasSymbols, &t);
  if (!err)
    err = aotrun_fb_dl_resolve(op, &kLt, lt_name, lt, kLtSymbols,
                               sizeof kLtSymbols / sizeof *kLtSymbols, &t);
  if (err) {
    if (blas != NULL) dlclose(blas);
    if (lt != NULL) dlclose(lt);
    return err;
  }
  api_table = t;
  *table = &api_table;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_cublas_load(const char *op,
                                     const aotrun_fb_cublas_api **api) {
  const void *t = NULL;
  AOTITorchError err = aotrun_fb_dl_once_get(&once, load, op, &t);
  if (!err) *api = t;
  return err;
}

const aotrun_fb_cublas_api *aotrun_fb_cublas(void) {
  return aotrun_fb_dl_once_peek(&once);
}
