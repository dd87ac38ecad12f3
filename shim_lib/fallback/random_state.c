/* random_state.c: the per-device generator states of the random ops, their
 * lazy seeding, aotrun_shim_random_set_seed and the seeding-failure seam
 * (random_state.h, docs/random.md). */
#include "shim_lib/fallback/random_state.h"

#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "shim_lib/fallback/cublas_handle.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Device addresses; NULL: not seeded yet (or the last seeding failed). */
static aotrun_fb_rng_state *g_state[AOTRUN_FB_RANDOM_MAX_DEVICES];
static int g_has_fixed;   /* aotrun_shim_random_set_seed was called */
static uint64_t g_fixed;
static int g_fail_next;   /* AOTRUN_FB_SEED_FAIL_* (one-shot) */

/* Logs a seeding failure (the message is already recorded) and keeps it as
 * the call's error. */
static AOTITorchError seed_failed(int32_t device) {
  fprintf(stderr,
          "aotrun error: seeding the random generator of cuda:%d failed "
          "(the next random op tries again): %s\n",
          (int)device, aotrun_shim_last_error());
  fflush(stderr);
  return AOTI_TORCH_FAILURE;
}

/* Allocates cuda:<device>'s state and copies {seed, 0} into it, ordered on
 * the current stream and waited for (once per device and process), so
 * kernels on any stream see it. Frees the allocation on failure. */
static AOTITorchError upload(const char *op, int32_t device, uint64_t seed,
                             int inject_copy_failure,
                             aotrun_fb_rng_state **out) {
  cudaStream_t stream = (cudaStream_t)aotrun_shim_current_stream();
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &st);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return aotrun_shim_fail(
        "%s: cannot seed the random generator of cuda:%d: "
        "cudaStreamIsCapturing failed: %s",
        op, (int)device, cudaGetErrorString(e));
  }
  if (st != cudaStreamCaptureStatusNone)
    return aotrun_shim_fail(
        "%s: the first random op on cuda:%d seeds the generator (a copy to "
        "the GPU) and cannot run inside a CUDA graph capture; run a random "
        "op once before capturing",
        op, (int)device);
  aotrun_fb_rng_state *dev = NULL;
  e = cudaMalloc((void **)&dev, sizeof *dev);
  if (e != cudaSuccess)
    return aotrun_shim_fail(
        "%s: cannot allocate the random generator state on cuda:%d: %s", op,
        (int)device, cudaGetErrorString(e));
  const aotrun_fb_rng_state host = {seed, 0};
  if (inject_copy_failure) {
    (void)cudaFree(dev);
    return aotrun_shim_fail(
        "%s: copying the random generator state to cuda:%d failed: injected "
        "by aotrun_shim_random_fail_next_seed",
        op, (int)device);
  }
  e = cudaMemcpyAsync(dev, &host, sizeof host, cudaMemcpyHostToDevice,
                      stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    (void)cudaFree(dev);
    return aotrun_shim_fail(
        "%s: copying the random generator state to cuda:%d failed: %s", op,
        (int)device, cudaGetErrorString(e));
  }
  *out = dev;
  return AOTI_TORCH_SUCCESS;
}

/* Called with g_lock held. */
static AOTITorchError seed_device(const char *op, int32_t device) {
  int inject = g_fail_next;
  g_fail_next = AOTRUN_FB_SEED_FAIL_NONE;
  uint64_t seed = 0;
  const char *source = "getrandom";
  if (inject == AOTRUN_FB_SEED_FAIL_SOURCE)
    return aotrun_shim_fail(
        "%s: cannot seed the random generator of cuda:%d: the seed source "
        "failed: injected by aotrun_shim_random_fail_next_seed",
        op, (int)device);
  if (aotrun_fb_random_pick_seed(op, g_has_fixed, g_fixed, &seed, &source))
    return AOTI_TORCH_FAILURE;
  aotrun_fb_device_scope scope;
  if (aotrun_fb_device_enter(op, device, &scope)) return AOTI_TORCH_FAILURE;
  aotrun_fb_rng_state *dev = NULL;
  AOTITorchError err =
      upload(op, device, seed, inject == AOTRUN_FB_SEED_FAIL_COPY, &dev);
  aotrun_fb_device_leave(&scope);
  if (err) return err;
  g_state[device] = dev;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_fb_random_state(const char *op, int32_t device,
                                      aotrun_fb_rng_state **state) {
  *state = NULL;
  if (device < 0 || device >= AOTRUN_FB_RANDOM_MAX_DEVICES)
    return aotrun_shim_fail("%s: CUDA device %d is out of range [0, %d)", op,
                            (int)device, AOTRUN_FB_RANDOM_MAX_DEVICES);
  pthread_mutex_lock(&g_lock);
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (g_state[device] == NULL) {
    err = seed_device(op, device);
    if (err) seed_failed(device);
  }
  *state = g_state[device];
  pthread_mutex_unlock(&g_lock);
  return err;
}

AOTRUN_SHIM_API AOTITorchError aotrun_shim_random_set_seed(uint64_t seed) {
  static const char fn[] = "aotrun_shim_random_set_seed";
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  const aotrun_fb_rng_state host = {seed, 0};
  pthread_mutex_lock(&g_lock);
  g_has_fixed = 1;
  g_fixed = seed;
  for (int32_t d = 0; d < AOTRUN_FB_RANDOM_MAX_DEVICES; d++) {
    if (g_state[d] == NULL) continue; /* seeded with `seed` when first used */
    aotrun_fb_device_scope scope;
    if (aotrun_fb_device_enter(fn, d, &scope)) {
      err = AOTI_TORCH_FAILURE;
      continue;
    }
    /* Work already queued (on any stream) keeps the old seed. */
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
      e = cudaMemcpy(g_state[d], &host, sizeof host, cudaMemcpyHostToDevice);
    /* A pageable copy may return before its DMA lands, and non-blocking
     * streams do not wait for the legacy stream: wait for it here. */
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    aotrun_fb_device_leave(&scope);
    if (e != cudaSuccess) {
      aotrun_shim_fail("%s: writing the seed to cuda:%d failed: %s", fn,
                       (int)d, cudaGetErrorString(e));
      err = AOTI_TORCH_FAILURE;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return err;
}

AOTRUN_SHIM_API AOTITorchError aotrun_shim_random_fail_next_seed(
    int32_t step) {
  if (step < AOTRUN_FB_SEED_FAIL_NONE || step > AOTRUN_FB_SEED_FAIL_COPY)
    return aotrun_shim_fail(
        "aotrun_shim_random_fail_next_seed: step %d is not 0 (none), 1 (the "
        "seed source) or 2 (the copy to the GPU)",
        (int)step);
  pthread_mutex_lock(&g_lock);
  g_fail_next = step;
  pthread_mutex_unlock(&g_lock);
  return AOTI_TORCH_SUCCESS;
}

void aotrun_fb_random_release(void) {
  pthread_mutex_lock(&g_lock);
  for (int32_t d = 0; d < AOTRUN_FB_RANDOM_MAX_DEVICES; d++) {
    if (g_state[d] == NULL) continue;
    aotrun_fb_device_scope scope;
    if (aotrun_fb_device_enter("aotrun_shim_release_process_state", d,
                               &scope) == AOTI_TORCH_SUCCESS) {
      (void)cudaFree(g_state[d]); /* waits for the kernels using it */
      aotrun_fb_device_leave(&scope);
    }
    g_state[d] = NULL;
  }
  (void)cudaGetLastError();
  pthread_mutex_unlock(&g_lock);
}
