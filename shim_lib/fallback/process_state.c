/*
 * process_state.c: aotrun_shim_release_process_state (aotrun_shim.h): gives
 * back everything the shim keeps for the whole process, so that a
 * backend's deinit leaves nothing behind but the loaded code.
 */
#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/cublas_handle.h"
#include "shim_lib/fallback/gemm_algo_cache.h"
#include "shim_lib/fallback/random_state.h"
#include "shim_lib/shim_release.h"

AOTRUN_SHIM_API void aotrun_shim_release_process_state(void) {
  int previous = 0;
  int have_previous = cudaGetDevice(&previous) == cudaSuccess;
  /* Library handles before the memory they may still point at. */
  aotrun_fb_cublas_release_all();
  aotrun_fb_conv_release_all();
  aotrun_fb_algo_cache_clear();
  aotrun_fb_random_release();
  (void)aotrun_allocator_release_all();
  aotrun_device_error_release();
  if (have_previous) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
}
