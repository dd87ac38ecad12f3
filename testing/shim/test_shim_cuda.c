/* GPU tests of the shim: CUDA tensors, copies in every direction, stream
 * ordering, guards, the allocator hook, item reads and the capture refusal.
 * Every test skips with the reason when no GPU is usable. */
#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "testing/shim/shim_test_util.h"

enum { F16 = 5, F32 = 6, F64 = 7, I32 = 3, CPU = 0, CUDA = 1 };

static int g_gpus;
static char g_reason[256];

static int group_setup(void **state) {
  (void)state;
  cudaError_t e = cudaGetDeviceCount(&g_gpus);
  if (e != cudaSuccess) {
    g_gpus = 0;
    snprintf(g_reason, sizeof g_reason, "no usable GPU: cudaGetDeviceCount: %s (%d)",
             cudaGetErrorString(e), (int)e);
  } else if (g_gpus == 0) {
    snprintf(g_reason, sizeof g_reason, "no CUDA device");
  }
  return 0;
}

#define NEED_GPU()                           \
  if (g_gpus == 0) {                         \
    print_message("skipped: %s\n", g_reason); \
    skip();                                  \
  }

static AtenTensorHandle cuda_tensor(int32_t dtype, int64_t ndim, const int64_t *sizes,
                                    const int64_t *strides) {
  AtenTensorHandle t = NULL;
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype, CUDA, 0, &t))
    print_message("empty_strided(cuda): %s\n", aotrun_shim_last_error());
  return t;
}

static AtenTensorHandle host_blob(void *p, int32_t dtype, int64_t ndim, const int64_t *sizes,
                                  const int64_t *strides) {
  AtenTensorHandle t = NULL;
  if (aoti_torch_create_tensor_from_blob(p, ndim, sizes, strides, 0, dtype, CPU, 0, &t))
    print_message("from_blob: %s\n", aotrun_shim_last_error());
  return t;
}

static void test_cuda_tensor_attributes(void **state) {
  (void)state;
  NEED_GPU();
  int64_t sizes[] = {3, 5}, strides[] = {8, 1}, bytes;
  AtenTensorHandle t = cuda_tensor(F64, 2, sizes, strides);
  assert_non_null(t);
  int32_t dt, di;
  ASSERT_OK(aoti_torch_get_device_type(t, &dt));
  ASSERT_OK(aoti_torch_get_device_index(t, &di));
  ASSERT_OK(aoti_torch_get_storage_size(t, &bytes));
  assert_int_equal(dt, CUDA);
  assert_int_equal(di, 0);
  assert_int_equal(bytes, (1 + 2 * 8 + 4) * 8);
  struct cudaPointerAttributes attr;
  assert_int_equal(cudaPointerGetAttributes(&attr, test_data(t)), cudaSuccess);
  assert_int_equal(attr.type, cudaMemoryTypeDevice);
  ASSERT_OK(aoti_torch_delete_tensor_object(t));
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

static void test_copies_every_direction(void **state) {
  (void)state;
  NEED_GPU();
  float src[12], back[12];
  for (int i = 0; i < 12; i++) src[i] = (float)i + 0.5f;
  int64_t s[] = {3, 4}, st[] = {4, 1}, tst[] = {1, 3};
  AtenTensorHandle h = host_blob(src, F32, 2, s, st);
  AtenTensorHandle d1 = cuda_tensor(F32, 2, s, st);  /* contiguous */
  AtenTensorHandle d2 = cuda_tensor(F32, 2, s, tst); /* column-major */
  ASSERT_OK(aoti_torch_copy_(d1, h, 0));  /* H2D contiguous */
  ASSERT_OK(aoti_torch_copy_(d2, d1, 0)); /* D2D strided (kernel) */
  AtenTensorHandle hb = host_blob(back, F32, 2, s, st);
  for (int i = 0; i < 12; i++) back[i] = -1;
  ASSERT_OK(aoti_torch_copy_(hb, d2, 0)); /* D2H from strided */
  for (int i = 0; i < 12; i++) assert_true(back[i] == src[i]);
  /* H2D into a strided dst with dtype conversion, then D2H with conversion. */
  AtenTensorHandle d16 = NULL;
  ASSERT_OK(aoti_torch_empty_strided(2, s, tst, F16, CUDA, 0, &d16));
  ASSERT_OK(aoti_torch_copy_(d16, h, 0));
  double dback[12];
  AtenTensorHandle hd = host_blob(dback, F64, 2, s, st);
  ASSERT_OK(aoti_torch_copy_(hd, d16, 0));
  for (int i = 0; i < 12; i++) assert_true(dback[i] == (double)src[i]);
  /* D2D with conversion on the device: f16 -> i32 */
  AtenTensorHandle di = cuda_tensor(I32, 2, s, st);
  ASSERT_OK(aoti_torch_copy_(di, d16, 0));
  int32_t iback[12];
  AtenTensorHandle hi = host_blob(iback, I32, 2, s, st);
  ASSERT_OK(aoti_torch_copy_(hi, di, 0));
  for (int i = 0; i < 12; i++) assert_int_equal(iback[i], i);
  /* D2H into a strided host tensor. */
  float tback[12];
  AtenTensorHandle ht = host_blob(tback, F32, 2, s, tst);
  ASSERT_OK(aoti_torch_copy_(ht, d1, 0));
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 4; c++) assert_true(tback[r + 3 * c] == src[4 * r + c]);
  /* clone / clone_preserve_strides / zero_ on the device */
  AtenTensorHandle cl, cp;
  ASSERT_OK(aoti_torch_clone(d2, &cl));
  ASSERT_OK(aoti_torch_clone_preserve_strides(d2, &cp));
  int64_t *cst;
  ASSERT_OK(aoti_torch_get_strides(cp, &cst));
  assert_int_equal(cst[0], 1);
  assert_int_equal(cst[1], 3);
  ASSERT_OK(aoti_torch_zero_(d2));
  ASSERT_OK(aoti_torch_copy_(hb, d2, 0));
  for (int i = 0; i < 12; i++) assert_true(back[i] == 0.0f);
  ASSERT_OK(aoti_torch_copy_(hb, cp, 0));
  for (int i = 0; i < 12; i++) assert_true(back[i] == src[i]);
  AtenTensorHandle all[] = {h, d1, d2, hb, d16, hd, di, hi, ht, cl, cp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    ASSERT_OK(aoti_torch_delete_tensor_object(all[i]));
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

static void test_strided_zero_on_device(void **state) {
  (void)state;
  NEED_GPU();
  float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, back[8];
  int64_t n = 8, one = 1, vs = 4, vst = 2;
  AtenTensorHandle h = host_blob(ones, F32, 1, &n, &one), d = cuda_tensor(F32, 1, &n, &one), v;
  ASSERT_OK(aoti_torch_copy_(d, h, 0));
  ASSERT_OK(aoti_torch__reinterpret_tensor(d, 1, &vs, &vst, 1, &v));
  ASSERT_OK(aoti_torch_zero_(v)); /* odd elements only: the kernel path */
  AtenTensorHandle hb = host_blob(back, F32, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(hb, d, 0));
  for (int i = 0; i < 8; i++) assert_true(back[i] == (i % 2 ? 0.0f : 1.0f));
  AtenTensorHandle all[] = {h, d, v, hb};
  for (size_t i = 0; i < 4; i++) aoti_torch_delete_tensor_object(all[i]);
}

static void test_guards_nest(void **state) {
  (void)state;
  NEED_GPU();
  cudaStream_t s1, s2;
  assert_int_equal(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  assert_int_equal(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
  CUDAStreamGuardHandle g1, g2;
  void *cur;
  ASSERT_OK(aoti_torch_create_cuda_stream_guard(s1, 0, &g1));
  ASSERT_OK(aoti_torch_get_current_cuda_stream(0, &cur));
  assert_ptr_equal(cur, s1);
  ASSERT_OK(aoti_torch_create_cuda_stream_guard(s2, 0, &g2));
  ASSERT_OK(aoti_torch_get_current_cuda_stream(-1, &cur));
  assert_ptr_equal(cur, s2);
  assert_ptr_equal(aotrun_shim_current_stream(), s2);
  ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g2));
  assert_ptr_equal(aotrun_shim_current_stream(), s1);
  ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g1));
  assert_null(aotrun_shim_current_stream());
  CUDAGuardHandle dg;
  ASSERT_OK(aoti_torch_create_cuda_guard(g_gpus - 1, &dg));
  int dev = -1;
  assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
  assert_int_equal(dev, g_gpus - 1);
  assert_int_equal(aotrun_shim_current_device(), g_gpus - 1);
  ASSERT_OK(aoti_torch_cuda_guard_set_index(dg, 0));
  assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
  assert_int_equal(dev, 0);
  ASSERT_OK(aoti_torch_delete_cuda_guard(dg));
  assert_int_equal(aotrun_shim_current_device(), 0);
  ASSERT_FAILS_WITH(aoti_torch_create_cuda_guard(g_gpus, &dg), "cudaSetDevice");
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

/* An allocator hook that counts and checks the stream it is given. */
typedef struct counting {
  int allocs, frees;
  void *expected_stream;
  int wrong_stream;
} counting;

static void *count_alloc(void *ctx, size_t bytes, void *stream) {
  counting *c = ctx;
  c->allocs++;
  if (stream != c->expected_stream) c->wrong_stream++;
  void *p = NULL;
  return cudaMallocAsync(&p, bytes, (cudaStream_t)stream) == cudaSuccess ? p : NULL;
}

static void count_free(void *ctx, void *p, void *stream) {
  counting *c = ctx;
  c->frees++;
  if (stream != c->expected_stream) c->wrong_stream++;
  cudaFreeAsync(p, (cudaStream_t)stream);
}

static void test_stream_ordered_frees_and_hook(void **state) {
  (void)state;
  NEED_GPU();
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  counting c = {0, 0, s, 0};
  aotrun_shim_allocator a = {&c, count_alloc, count_free};
  CUDAStreamGuardHandle g;
  ASSERT_OK(aoti_torch_create_cuda_stream_guard(s, 0, &g));
  aotrun_shim_set_thread_allocator(&a);
  enum { N = 1 << 20 };
  float *host = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) host[i] = (float)i;
  int64_t n = N, one = 1;
  AtenTensorHandle h = host_blob(host, F32, 1, &n, &one);
  for (int iter = 0; iter < 20; iter++) {
    AtenTensorHandle a1 = cuda_tensor(F32, 1, &n, &one), a2 = cuda_tensor(F32, 1, &n, &one);
    ASSERT_OK(aoti_torch_copy_(a1, h, 1));
    ASSERT_OK(aoti_torch_copy_(a2, a1, 1));
    /* Freed while the copies may still run: stream-ordered. */
    ASSERT_OK(aoti_torch_delete_tensor_object(a1));
    int64_t es = 1;
    AtenTensorHandle last;
    ASSERT_OK(aoti_torch__reinterpret_tensor(a2, 0, &es, &one, N - 1, &last));
    ASSERT_OK(aoti_torch_delete_tensor_object(a2));
    float v = 0;
    ASSERT_OK(aoti_torch_item_float32(last, &v)); /* after the queued copies */
    assert_true(v == (float)(N - 1));
    ASSERT_OK(aoti_torch_delete_tensor_object(last));
  }
  aotrun_shim_set_thread_allocator(NULL);
  assert_int_equal(c.allocs, 40);
  assert_int_equal(c.frees, 40);
  assert_int_equal(c.wrong_stream, 0);
  void *raw;
  ASSERT_OK(aoti_torch_cuda_caching_allocator_raw_alloc(1000, &raw));
  ASSERT_OK(aoti_torch_cuda_caching_allocator_raw_delete(raw));
  ASSERT_FAILS_WITH(aoti_torch_cuda_caching_allocator_raw_delete(raw), "did not come from raw_alloc");
  ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g));
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  aoti_torch_delete_tensor_object(h);
  free(host);
  cudaStreamDestroy(s);
}

/* Blocks the default allocator cached on a stream go back to CUDA after
 * that stream is destroyed (a method's own stream at its destroy, a
 * caller's after execute_ex) without touching it: freeing them on the dead
 * stream crashed aotrun_gpu_faults on the H200. */
static void test_cached_blocks_outlive_their_stream(void **state) {
  (void)state;
  NEED_GPU();
  (void)aotrun_shim_release_cached_memory(-1);
  int64_t n = 3000, one = 1;
  for (int round = 0; round < 3; round++) {
    cudaStream_t s;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    CUDAStreamGuardHandle g;
    ASSERT_OK(aoti_torch_create_cuda_stream_guard(s, 0, &g));
    AtenTensorHandle t = cuda_tensor(F32, 1, &n, &one);
    assert_non_null(t);
    ASSERT_OK(aoti_torch_delete_tensor_object(t)); /* cached, keyed by s */
    ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g));
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    /* Round 0 and 2 release through the public call, round 1 leaves the
     * block for the next round's allocation on a new stream. */
    if (round != 1) assert_true(aotrun_shim_release_cached_memory(-1) >= 12000);
  }
  assert_int_equal(cudaGetLastError(), cudaSuccess);
}

static void test_pinned(void **state) {
  (void)state;
  NEED_GPU();
  int64_t n = 64, one = 1;
  AtenTensorHandle p;
  ASSERT_OK(aoti_torch_empty_strided_pinned(1, &n, &one, F32, CPU, 0, &p));
  struct cudaPointerAttributes attr;
  assert_int_equal(cudaPointerGetAttributes(&attr, test_data(p)), cudaSuccess);
  assert_int_equal(attr.type, cudaMemoryTypeHost);
  float *pd = test_data(p);
  for (int i = 0; i < 64; i++) pd[i] = (float)i;
  AtenTensorHandle d = cuda_tensor(F32, 1, &n, &one);
  ASSERT_OK(aoti_torch_copy_(d, p, 0));
  AtenTensorHandle e;
  int64_t es = 1;
  ASSERT_OK(aoti_torch__reinterpret_tensor(d, 0, &es, &one, 63, &e));
  int32_t i32;
  ASSERT_OK(aoti_torch_item_int32(e, &i32));
  assert_int_equal(i32, 63);
  aoti_torch_delete_tensor_object(e);
  aoti_torch_delete_tensor_object(d);
  aoti_torch_delete_tensor_object(p);
}

static void test_item_refused_in_capture(void **state) {
  (void)state;
  NEED_GPU();
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  AtenTensorHandle t;
  ASSERT_OK(aoti_torch_scalar_to_tensor_float32(1.0f, &t));
  AtenTensorHandle d;
  ASSERT_OK(aoti_torch_empty_strided(0, NULL, NULL, F32, CUDA, 0, &d));
  ASSERT_OK(aoti_torch_copy_(d, t, 0));
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  CUDAStreamGuardHandle g;
  ASSERT_OK(aoti_torch_create_cuda_stream_guard(s, 0, &g));
  float v;
  ASSERT_FAILS_WITH(aoti_torch_item_float32(d, &v),
                    "aoti_torch_item_float32 cannot run inside a CUDA graph capture");
  ASSERT_FAILS_WITH(aoti_torch_copy_(t, d, 0),
                    "aoti_torch_copy_ between cuda and cpu cannot run inside a CUDA graph capture");
  /* Device-only work is still captured fine. */
  AtenTensorHandle d2;
  ASSERT_OK(aoti_torch_clone(d, &d2));
  ASSERT_OK(aoti_torch_delete_tensor_object(d2));
  ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g));
  cudaGraph_t graph = NULL;
  assert_int_equal(cudaStreamEndCapture(s, &graph), cudaSuccess);
  assert_non_null(graph);
  cudaGraphDestroy(graph);
  /* Outside the capture the read works. */
  ASSERT_OK(aoti_torch_create_cuda_stream_guard(s, 0, &g));
  ASSERT_OK(aoti_torch_item_float32(d, &v));
  assert_true(v == 1.0f);
  ASSERT_OK(aoti_torch_delete_cuda_stream_guard(g));
  aoti_torch_delete_tensor_object(d);
  aoti_torch_delete_tensor_object(t);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

static void test_cross_device_copy(void **state) {
  (void)state;
  NEED_GPU();
  if (g_gpus < 2) {
    print_message("skipped: needs 2 GPUs, found %d\n", g_gpus);
    skip();
  }
  float src[6] = {1, 2, 3, 4, 5, 6}, back[6];
  int64_t s[] = {2, 3}, st[] = {3, 1}, tst[] = {1, 2};
  AtenTensorHandle h = host_blob(src, F32, 2, s, st), d0, d1;
  ASSERT_OK(aoti_torch_empty_strided(2, s, st, F32, CUDA, 0, &d0));
  ASSERT_OK(aoti_torch_empty_strided(2, s, tst, F32, CUDA, 1, &d1));
  ASSERT_OK(aoti_torch_copy_(d0, h, 0));
  ASSERT_OK(aoti_torch_copy_(d1, d0, 0));
  AtenTensorHandle hb = host_blob(back, F32, 2, s, st);
  ASSERT_OK(aoti_torch_copy_(hb, d1, 0));
  for (int i = 0; i < 6; i++) assert_true(back[i] == src[i]);
  AtenTensorHandle all[] = {h, d0, d1, hb};
  for (size_t i = 0; i < 4; i++) aoti_torch_delete_tensor_object(all[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cuda_tensor_attributes),
      cmocka_unit_test(test_copies_every_direction),
      cmocka_unit_test(test_strided_zero_on_device),
      cmocka_unit_test(test_guards_nest),
      cmocka_unit_test(test_stream_ordered_frees_and_hook),
      cmocka_unit_test(test_cached_blocks_outlive_their_stream),
      cmocka_unit_test(test_pinned),
      cmocka_unit_test(test_item_refused_in_capture),
      cmocka_unit_test(test_cross_device_copy),
  };
  return cmocka_run_group_tests(tests, group_setup, NULL);
}
