/*
 * test_device_alloc_calls.c: which CUDA runtime calls a CUDA tensor's
 * allocation and free make, on the CPU, over a counting fake of the
 * runtime defined in this file (it takes precedence over libcudart for the
 * shim objects linked in; device memory is host memory here).
 *
 * The default allocator's steady state (a block from the block cache, the
 * block handed back on free) makes no CUDA call at all: no cudaGetDevice,
 * no cudaSetDevice (issue 12: 18 cudaGetDevice calls per MLP call were
 * measured on the H200). A cache miss allocates with the tensor's device
 * current and restores the caller's device; a custom thread allocator is
 * still called with the tensor's device current.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

/* ---- the fake runtime ---- */

enum { GET_DEVICE, SET_DEVICE, MALLOC_ASYNC, FREE_ASYNC, OTHER, NUM_CALLS };
static int g_calls[NUM_CALLS];
static int g_device;           /* the thread's current device */
static int g_malloc_device[8]; /* cudaMallocAsync calls per current device */

static void reset_counts(void) {
  memset(g_calls, 0, sizeof g_calls);
  memset(g_malloc_device, 0, sizeof g_malloc_device);
}

static int total_calls(void) {
  int n = 0;
  for (int i = 0; i < NUM_CALLS; i++) n += g_calls[i];
  return n;
}

cudaError_t cudaGetDevice(int *device) {
  g_calls[GET_DEVICE]++;
  *device = g_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  g_calls[SET_DEVICE]++;
  if (device < 0 || device >= 2) return cudaErrorInvalidDevice;
  g_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int *count) {
  g_calls[OTHER]++;
  *count = 2;
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream) {
  (void)stream;
  g_calls[MALLOC_ASYNC]++;
  g_malloc_device[g_device]++;
  *p = malloc(size);
  return *p != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t stream) {
  (void)stream;
  g_calls[FREE_ASYNC]++;
  free(p);
  return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) {
  (void)device;
  g_calls[OTHER]++;
  *pool = NULL;
  return cudaErrorNotSupported; /* the threshold is then left alone */
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  enum cudaStreamCaptureStatus *status) {
  (void)stream;
  g_calls[OTHER]++;
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) {
  g_calls[OTHER]++;
  return cudaSuccess;
}

/* ---- tests ---- */

static const int64_t kSizes[2] = {64, 32}, kStrides[2] = {32, 1};

static AtenTensorHandle cuda_tensor(int32_t device_index) {
  AtenTensorHandle t = NULL;
  ASSERT_OK(aoti_torch_empty_strided(2, kSizes, kStrides,
                                     aoti_torch_dtype_float32(),
                                     aoti_torch_device_type_cuda(),
                                     device_index, &t));
  return t;
}

static void *data_of(AtenTensorHandle t) {
  void *p = NULL;
  ASSERT_OK(aoti_torch_get_data_ptr(t, &p));
  return p;
}

static void test_cached_block_costs_no_cuda_call(void **state) {
  (void)state;
  g_device = 0;
  AtenTensorHandle t = cuda_tensor(0); /* a miss: cudaMallocAsync once */
  void *first = data_of(t);
  ASSERT_OK(aoti_torch_delete_tensor_object(t)); /* kept by the cache */
  reset_counts();
  for (int i = 0; i < 100; i++) {
    t = cuda_tensor(0);
    assert_ptr_equal(data_of(t), first); /* the same block again */
    ASSERT_OK(aoti_torch_delete_tensor_object(t));
  }
  if (total_calls() != 0)
    fail_msg("100 cached alloc/free pairs made CUDA calls: cudaGetDevice "
             "%d, cudaSetDevice %d, cudaMallocAsync %d, cudaFreeAsync %d, "
             "other %d (want none)",
             g_calls[GET_DEVICE], g_calls[SET_DEVICE], g_calls[MALLOC_ASYNC],
             g_calls[FREE_ASYNC], g_calls[OTHER]);
  assert_int_equal(g_device, 0);
}

static void test_miss_allocates_on_the_tensors_device(void **state) {
  (void)state;
  g_device = 0;
  reset_counts();
  /* A size no earlier test used, on device 1 while 0 is current. */
  const int64_t sizes[1] = {1 << 20}, strides[1] = {1};
  AtenTensorHandle t = NULL;
  ASSERT_OK(aoti_torch_empty_strided(1, sizes, strides,
                                     aoti_torch_dtype_float32(),
                                     aoti_torch_device_type_cuda(), 1, &t));
  assert_int_equal(g_malloc_device[1], 1);
  assert_int_equal(g_malloc_device[0], 0);
  assert_int_equal(g_device, 0); /* the caller's device restored */
  int32_t index = -1;
  ASSERT_OK(aoti_torch_get_device_index(t, &index));
  assert_int_equal(index, 1);
  void *block = data_of(t);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  /* Cached per device: device 0 does not get device 1's block. */
  ASSERT_OK(aoti_torch_empty_strided(1, sizes, strides,
                                     aoti_torch_dtype_float32(),
                                     aoti_torch_device_type_cuda(), 0, &t));
  assert_int_equal(g_malloc_device[0], 1);
  assert_true(data_of(t) != block);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  assert_int_equal(g_device, 0);
}

/* A custom allocator sees the tensor's device current, as before. */
static int g_seen_device = -1;
static void *custom_alloc(void *ctx, size_t bytes, void *stream) {
  (void)ctx;
  (void)stream;
  g_seen_device = g_device;
  return malloc(bytes);
}
static void custom_free(void *ctx, void *p, void *stream) {
  (void)ctx;
  (void)stream;
  g_seen_device = g_device;
  free(p);
}

static void test_custom_allocator_gets_the_device_current(void **state) {
  (void)state;
  g_device = 0;
  aotrun_shim_allocator a = {NULL, custom_alloc, custom_free};
  aotrun_shim_set_thread_allocator(&a);
  AtenTensorHandle t = cuda_tensor(1);
  assert_int_equal(g_seen_device, 1);
  assert_int_equal(g_device, 0);
  g_seen_device = -1;
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  assert_int_equal(g_seen_device, 1);
  assert_int_equal(g_device, 0);
  aotrun_shim_set_thread_allocator(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cached_block_costs_no_cuda_call),
      cmocka_unit_test(test_miss_allocates_on_the_tensors_device),
      cmocka_unit_test(test_custom_allocator_gets_the_device_current),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
