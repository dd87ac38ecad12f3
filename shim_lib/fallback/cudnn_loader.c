/* cudnn_loader.c: opens cuDNN 9 with dlopen at the first convolution and
 * resolves the few functions aotrun calls (see conv.h), so that
 * libaotrun_shim.so has no link-time dependency on cuDNN and models without
 * convolutions never need it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim_lib/fallback/conv.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static aotrun_fb_cudnn_api api_table;
static int api_loaded;
static const char *seam_name; /* aotrun_fb_cudnn_set_library */

int aotrun_fb_cudnn_set_library(const char *name) {
  pthread_mutex_lock(&load_lock);
  int ok = !api_loaded;
  if (ok) seam_name = name;
  pthread_mutex_unlock(&load_lock);
  return ok ? 0 : -1;
}

#define RESOLVE(fn)                                                          \
  do {                                                                       \
    dlerror();                                                               \
    void *p_ = dlsym(lib, #fn);                                              \
    if (p_ == NULL) {                                                        \
      const char *e_ = dlerror();                                            \
      err = aotrun_shim_fail(                                                \
          "%s: the cuDNN library '%s' lacks %s (%s); cuDNN 9 is required",   \
          op, name, #fn, e_ ? e_ : "no such symbol");                        \
      goto fail;                                                             \
    }                                                                        \
    memcpy(&t.fn, &p_, sizeof p_);                                           \
  } while (0)

/* Called with load_lock held. */
static AOTITorchError load_locked(const char *op) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  const char *env = getenv("AOTRUN_CUDNN_LIBRARY");
  const char *name = seam_name             ? seam_name
                     : (env && env[0])     ? env
                                           : AOTRUN_FB_CUDNN_LIBRARY;
  dlerror();
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    return aotrun_shim_fail(
        "%s: cannot load the cuDNN library '%s' (needed for convolutions): "
        "%s. Install cuDNN 9 (e.g. torch's nvidia-cudnn-cu* wheel) and put "
        "its lib directory on LD_LIBRARY_PATH, or set AOTRUN_CUDNN_LIBRARY "
        "to the library's path",
        op, name, e ? e : "unknown dlopen error");
  }
  aotrun_fb_cudnn_api t;
  memset(&t, 0, sizeof t);
  RESOLVE(cudnnGetVersion);
  RESOLVE(cudnnGetErrorString);
  RESOLVE(cudnnCreate);
  RESOLVE(cudnnDestroy);
  RESOLVE(cudnnSetStream);
  RESOLVE(cudnnCreateTensorDescriptor);
  RESOLVE(cudnnDestroyTensorDescriptor);
  RESOLVE(cudnnSetTensorNdDescriptor);
  RESOLVE(cudnnCreateFilterDescriptor);
  RESOLVE(cudnnDestroyFilterDescriptor);
  RESOLVE(cudnnSetFilterNdDescriptor);
  RESOLVE(cudnnCreateConvolutionDescriptor);
  RESOLVE(cudnnDestroyConvolutionDescriptor);
  RESOLVE(cudnnSetConvolutionNdDescriptor);
  RESOLVE(cudnnSetConvolutionGroupCount);
  RESOLVE(cudnnSetConvolutionMathType);
  RESOLVE(cudnnGetConvolutionForwardAlgorithmMaxCount);
  RESOLVE(cudnnGetConvolutionForwardAlgorithm_v7);
  RESOLVE(cudnnFindConvolutionForwardAlgorithmEx);
  RESOLVE(cudnnGetConvolutionForwardWorkspaceSize);
  RESOLVE(cudnnConvolutionForward);
  RESOLVE(cudnnGetConvolutionBackwardDataAlgorithmMaxCount);
  RESOLVE(cudnnGetConvolutionBackwardDataAlgorithm_v7);
  RESOLVE(cudnnFindConvolutionBackwardDataAlgorithmEx);
  RESOLVE(cudnnGetConvolutionBackwardDataWorkspaceSize);
  RESOLVE(cudnnConvolutionBackwardData);
  RESOLVE(cudnnBackendCreateDescriptor);
  RESOLVE(cudnnBackendDestroyDescriptor);
  RESOLVE(cudnnBackendSetAttribute);
  RESOLVE(cudnnBackendGetAttribute);
  RESOLVE(cudnnBackendFinalize);
  RESOLVE(cudnnBackendExecute);
  t.version = t.cudnnGetVersion();
  if (t.version < 90000 || t.version >= 100000) {
    err = aotrun_shim_fail(
        "%s: the cuDNN library '%s' is version %zu; cuDNN 9 is required", op,
        name, t.version);
    goto fail;
  }
  api_table = t;
  api_loaded = 1;
  return AOTI_TORCH_SUCCESS;
fail:
  dlclose(lib);
  return err;
}
#undef RESOLVE

AOTITorchError aotrun_fb_cudnn_load(const char *op,
                                    const aotrun_fb_cudnn_api **api) {
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  pthread_mutex_lock(&load_lock);
  if (!api_loaded) err = load_locked(op);
  pthread_mutex_unlock(&load_lock);
  if (err) return err;
  *api = &api_table;
  return AOTI_TORCH_SUCCESS;
}
