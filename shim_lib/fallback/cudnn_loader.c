/* cudnn_loader.c: opens cuDNN 9 with dlopen at the first convolution and
 * resolves the few functions aotrun calls (see conv.h, dl_table.h), so that
 * libaotrun_shim.so has no link-time dependency on cuDNN and models without
 * convolutions never need it. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/dl_table.h"

static aotrun_fb_dl_once once = AOTRUN_FB_DL_ONCE_INIT;
static aotrun_fb_cudnn_api api_table;
static const char *seam_name; /* aotrun_fb_cudnn_set_library */

static const aotrun_fb_dl_library kCudnn = {
    "cuDNN", "convolutions", "cuDNN 9 (e.g. torch's nvidia-cudnn-cu* wheel)",
    "cuDNN 9", "AOTRUN_CUDNN_LIBRARY"};

#define SYMBOL(fn) {#fn, offsetof(aotrun_fb_cudnn_api, fn)}
static const aotrun_fb_dl_symbol kSymbols[] = {
    SYMBOL(cudnnGetVersion),
    SYMBOL(cudnnGetErrorString),
    SYMBOL(cudnnCreate),
    SYMBOL(cudnnDestroy),
    SYMBOL(cudnnSetStream),
    SYMBOL(cudnnCreateTensorDescriptor),
    SYMBOL(cudnnDestroyTensorDescriptor),
    SYMBOL(cudnnSetTensorNdDescriptor),
    SYMBOL(cudnnCreateFilterDescriptor),
    SYMBOL(cudnnDestroyFilterDescriptor),
    SYMBOL(cudnnSetFilterNdDescriptor),
    SYMBOL(cudnnCreateConvolutionDescriptor),
    SYMBOL(cudnnDestroyConvolutionDescriptor),
    SYMBOL(cudnnSetConvolutionNdDescriptor),
    SYMBOL(cudnnSetConvolutionGroupCount),
    SYMBOL(cudnnSetConvolutionMathType),
    SYMBOL(cudnnGetConvolutionForwardAlgorithmMaxCount),
    SYMBOL(cudnnGetConvolutionForwardAlgorithm_v7),
    SYMBOL(cudnnFindConvolutionForwardAlgorithmEx),
    SYMBOL(cudnnGetConvolutionForwardWorkspaceSize),
    SYMBOL(cudnnConvolutionForward),
    SYMBOL(cudnnGetConvolutionBackwardDataAlgorithmMaxCount),
    SYMBOL(cudnnGetConvolutionBackwardDataAlgorithm_v7),
    SYMBOL(cudnnFindConvolutionBackwardDataAlgorithmEx),
    SYMBOL(cudnnGetConvolutionBackwardDataWorkspaceSize),
    SYMBOL(cudnnConvolutionBackwardData),
    SYMBOL(cudnnBackendCreateDescriptor),
    SYMBOL(cudnnBackendDestroyDescriptor),
    SYMBOL(cudnnBackendSetAttribute),
    SYMBOL(cudnnBackendGetAttribute),
    SYMBOL(cudnnBackendFinalize),
    SYMBOL(cudnnBackendExecute),
};
#undef SYMBOL

int aotrun_fb_cudnn_set_library(const char *name) {
  pthread_mutex_lock(&once.lock);
  int ok = aotrun_fb_dl_once_peek(&once) == NULL;
  if (ok) seam_name = name;
  pthread_mutex_unlock(&once.lock);
  return ok ? 0 : -1;
}

/* Called with the once lock held. */
static AOTITorchError load(const char *op, const void **table) {
  const char *env = getenv(kCudnn.env);
  const char *name = seam_name         ? seam_name
                     : (env && env[0]) ? env
                                       : AOTRUN_FB_CUDNN_LIBRARY;
  void *lib = NULL;
  AOTITorchError err = aotrun_fb_dl_open(op, &kCudnn, name, &lib);
  if (err) return err;
  aotrun_fb_cudnn_api t = {0};
  err = aotrun_fb_dl_resolve(op, &kCudnn, name, lib, kSymbols,
                             sizeof kSymbols / sizeof *kSymbols, &t);
  if (!err) {
    t.version = t.cudnnGetVersion();
    if (t.version < 90000 || t.version >= 100000)
      err = aotrun_shim_fail(
          "%s: the cuDNN library '%s' is version %zu; cuDNN 9 is required",
          op, name, t.version);
  }
  if (err) {
    dlclose(lib);
    return err;
  }
  api_table = t;
  *table = &api_table;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_cudnn_load(const char *op,
                                    const aotrun_fb_cudnn_api **api) {
  const void *t = NULL;
  AOTITorchError err = aotrun_fb_dl_once_get(&once, load, op, &t);
  if (!err) *api = t;
  return err;
}
