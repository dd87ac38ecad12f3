/* cublas_loader.c: opens cuBLASLt and cuBLAS with dlopen at the first GEMM
 * and resolves the functions aotrun calls (see cublas_api.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_lib/fallback/cublas_api.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static aotrun_fb_cublas_api api_table;
/* Set (release) once api_table is complete; read without the lock. */
static _Atomic(const aotrun_fb_cublas_api *) api_loaded;

/* The library's name: the environment's override or the default. */
static const char *library_name(const char *env, const char *fallback) {
  const char *v = getenv(env);
  return v != NULL && v[0] != '\0' ? v : fallback;
}

static AOTITorchError open_library(const char *op, const char *name,
                                   const char *env, void **out) {
  dlerror();
  *out = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (*out != NULL) return AOTI_TORCH_SUCCESS;
  const char *e = dlerror();
  return aotrun_shim_fail(
      "%s: cannot load the cuBLAS library '%s' (needed for matrix "
      "multiplications): %s. Install the CUDA 13 cuBLAS (the toolkit's "
      "lib64, or torch's nvidia-cublas wheel) and put its lib directory on "
      "LD_LIBRARY_PATH, or set %s to the library's path",
      op, name, e ? e : "unknown dlopen error", env);
}

/* The symbol's real name: cublas_v2.h's macros applied (cublasCreate ->
 * "cublasCreate_v2"). */
#define SYMBOL_NAME(fn) SYMBOL_STRING(fn)
#define SYMBOL_STRING(fn) #fn
#define RESOLVE(lib, name, fn)                                               \
  do {                                                                       \
    dlerror();                                                               \
    void *p_ = dlsym(lib, SYMBOL_NAME(fn));                                  \
    if (p_ == NULL) {                                                        \
      const char *e_ = dlerror();                                            \
      err = aotrun_shim_fail(                                                \
          "%s: the cuBLAS library '%s' lacks %s (%s); CUDA 13's cuBLAS is "  \
          "required",                                                        \
          op, name, SYMBOL_NAME(fn), e_ ? e_ : "no such symbol");            \
      goto fail;                                                             \
    }                                                                        \
    memcpy(&t.fn, &p_, sizeof p_);                                           \
  } while (0)

/* Called with load_lock held. */
static AOTITorchError load_locked(const char *op) {
  const char *lt_name =
      library_name("AOTRUN_CUBLASLT_LIBRARY", AOTRUN_FB_CUBLASLT_LIBRARY);
  const char *blas_name =
      library_name("AOTRUN_CUBLAS_LIBRARY", AOTRUN_FB_CUBLAS_LIBRARY);
  void *lt = NULL, *blas = NULL;
  AOTITorchError err =
      open_library(op, lt_name, "AOTRUN_CUBLASLT_LIBRARY", &lt);
  if (!err) err = open_library(op, blas_name, "AOTRUN_CUBLAS_LIBRARY", &blas);
  if (err) goto fail;
  aotrun_fb_cublas_api t;
  memset(&t, 0, sizeof t);
  const char *name = blas_name;
  RESOLVE(blas, name, cublasCreate);
  RESOLVE(blas, name, cublasDestroy);
  RESOLVE(blas, name, cublasSetStream);
  RESOLVE(blas, name, cublasSetWorkspace);
  RESOLVE(blas, name, cublasSetMathMode);
  RESOLVE(blas, name, cublasGetStatusString);
  RESOLVE(blas, name, cublasGemmEx_64);
  RESOLVE(blas, name, cublasGemmStridedBatchedEx_64);
  name = lt_name;
  RESOLVE(lt, name, cublasLtCreate);
  RESOLVE(lt, name, cublasLtDestroy);
  RESOLVE(lt, name, cublasLtMatmul);
  RESOLVE(lt, name, cublasLtMatmulAlgoGetHeuristic);
  RESOLVE(lt, name, cublasLtMatmulDescInit_internal);
  RESOLVE(lt, name, cublasLtMatmulDescSetAttribute);
  RESOLVE(lt, name, cublasLtMatrixLayoutInit_internal);
  RESOLVE(lt, name, cublasLtMatrixLayoutSetAttribute);
  RESOLVE(lt, name, cublasLtMatmulPreferenceInit_internal);
  RESOLVE(lt, name, cublasLtMatmulPreferenceSetAttribute);
  api_table = t;
  atomic_store_explicit(&api_loaded, &api_table, memory_order_release);
  return AOTI_TORCH_SUCCESS;
fail:
  if (blas != NULL) dlclose(blas);
  if (lt != NULL) dlclose(lt);
  return err;
}
#undef RESOLVE

AOTITorchError aotrun_fb_cublas_load(const char *op,
                                     const aotrun_fb_cublas_api **api) {
  const aotrun_fb_cublas_api *t =
      atomic_load_explicit(&api_loaded, memory_order_acquire);
  if (t == NULL) {
    pthread_mutex_lock(&load_lock);
    AOTITorchError err = AOTI_TORCH_SUCCESS;
    t = atomic_load_explicit(&api_loaded, memory_order_relaxed);
    if (t == NULL) err = load_locked(op);
    pthread_mutex_unlock(&load_lock);
    if (err) return err;
    t = &api_table;
  }
  *api = t;
  return AOTI_TORCH_SUCCESS;
}

const aotrun_fb_cublas_api *aotrun_fb_cublas(void) {
  return atomic_load_explicit(&api_loaded, memory_order_acquire);
}
