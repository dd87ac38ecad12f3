/* test_conv_args.c: aoti_torch_cuda_convolution without a GPU: argument
 * checks (the "CUDA" tensors are blobs over host memory never touched),
 * the plan (output shape, ATen's memory-format rule, 1-D as 2-D), the
 * algorithm cache, and the cuDNN loader (its error when the library is
 * missing, through the test seam). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/conv_graph.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "testing/fallback/fake_tensor.h"

enum { F16 = 5, F32 = 6, F64 = 7, I64 = 4, BF16 = 15, CPU = 0, CUDA = 1 };
static const char OP[] = "aoti_torch_cuda_convolution";

static void del(int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    aoti_torch_delete_tensor_object(va_arg(ap, AtenTensorHandle));
  va_end(ap);
}

static const int64_t ONE[3] = {1, 1, 1}, ZERO[3] = {0, 0, 0};

/* Plain 2-D convolution call with the given lists. */
static AOTITorchError conv2(AtenTensorHandle x, AtenTensorHandle w,
                            AtenTensorHandle *b, const int64_t *st,
                            int64_t nst, int64_t groups,
                            AtenTensorHandle *ret) {
  return aoti_torch_cuda_convolution(x, w, b, st, nst, ZERO, 2, ONE, 2, 0,
                                     ZERO, 2, groups, ret);
}

static void test_conv_null_and_dims(void **state) {
  (void)state;
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   w = fake(F32, CUDA, 4, (int64_t[]){6, 4, 3, 3}),
                   w3 = fake(F32, CUDA, 3, (int64_t[]){6, 4, 3}),
                   x2 = fake(F32, CUDA, 2, (int64_t[]){2, 4});
  AtenTensorHandle ret = fake_sentinel();
  expect_fail(conv2(x, w, NULL, ONE, 2, 1, NULL),
              "aoti_torch_cuda_convolution: the result pointer 'ret0' is "
              "NULL");
  expect_fail(conv2(NULL, w, NULL, ONE, 2, 1, &ret),
              "aoti_torch_cuda_convolution: argument 'input' is NULL");
  assert_null(ret);
  expect_fail(conv2(x, NULL, NULL, ONE, 2, 1, &ret),
              "argument 'weight' is NULL");
  expect_fail(conv2(x2, w, NULL, ONE, 2, 1, &ret),
              "'input' must be 3-D, 4-D or 5-D (batch, channels, 1 to 3 "
              "spatial dims), got 2-D tensor [2, 4]");
  expect_fail(conv2(x, w3, NULL, ONE, 2, 1, &ret),
              "'weight' must have as many dims as 'input' (4), got 3-D tensor "
              "[6, 4, 3]");
  del(4, x, w, w3, x2);
}

static void test_conv_dtypes_devices(void **state) {
  (void)state;
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   xi = fake(I64, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   w16 = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3}),
                   w = fake(F32, CUDA, 4, (int64_t[]){6, 4, 3, 3}),
                   b16 = fake(F16, CUDA, 1, (int64_t[]){6}),
                   xc = fake_strided(F32, CPU, 4, (int64_t[]){2, 4, 8, 8},
                                (int64_t[]){256, 64, 8, 1});
  AtenTensorHandle ret = NULL;
  expect_fail(conv2(xi, w, NULL, ONE, 2, 1, &ret),
              "aoti_torch_cuda_convolution: 'input' has dtype int64; "
              "supported: float32, float16, bfloat16, float64");
  expect_fail(conv2(x, w16, NULL, ONE, 2, 1, &ret),
              "'weight' has dtype float16 but 'input' has dtype float32");
  expect_fail(conv2(x, w, &b16, ONE, 2, 1, &ret),
              "'bias' has dtype float16 but 'input' has dtype float32");
  expect_fail(conv2(xc, w, NULL, ONE, 2, 1, &ret),
              "'input' is on device type 0 (cpu), expected a CUDA tensor");
  del(6, x, xi, w16, w, b16, xc);
}

static void test_conv_lists(void **state) {
  (void)state;
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   w = fake(F32, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  AtenTensorHandle ret = NULL;
  const int64_t three[3] = {1, 1, 1}, neg[2] = {1, -1}, zero_st[2] = {1, 0};
  expect_fail(conv2(x, w, NULL, three, 3, 1, &ret),
              "aoti_torch_cuda_convolution: 'stride' has 3 values; expected "
              "1 or 2 (one per spatial dim of the 4-D input)");
  expect_fail(conv2(x, w, NULL, zero_st, 2, 1, &ret),
              "stride[1] is 0; it must be positive");
  expect_fail(aoti_torch_cuda_convolution(x, w, NULL, ONE, 2, neg, 2, ONE, 2,
                                          0, ZERO, 2, 1, &ret),
              "padding[1] is -1; it must be non-negative");
  expect_fail(aoti_torch_cuda_convolution(x, w, NULL, ONE, 2, ZERO, 0, ONE, 2,
                                          0, ZERO, 2, 1, &ret),
              "'padding' has 0 values; expected 1 or 2");
  expect_fail(aoti_torch_cuda_convolution(x, w, NULL, ONE, 2, ZERO, 2,
                                          zero_st, 2, 0, ZERO, 2, 1, &ret),
              "dilation[1] is 0; it must be positive");
  expect_fail(aoti_torch_cuda_convolution(x, w, NULL, NULL, 1, ZERO, 2, ONE,
                                          2, 0, ZERO, 2, 1, &ret),
              "'stride' is NULL with length 1");
  /* output_padding must be smaller than stride or dilation (transposed). */
  AtenTensorHandle wt = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3});
  const int64_t two[2] = {2, 2}, opad[2] = {1, 2};
  expect_fail(aoti_torch_cuda_convolution(x, wt, NULL, two, 2, ZERO, 2, ONE,
                                          2, 1, opad, 2, 1, &ret),
              "output_padding[1] is 2; it must be smaller than either stride "
              "(2) or dilation (1)");
  del(3, x, w, wt);
}

static void test_conv_channels_groups(void **state) {
  (void)state;
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   w = fake(F32, CUDA, 4, (int64_t[]){6, 3, 3, 3}),
                   w5 = fake(F32, CUDA, 4, (int64_t[]){5, 2, 3, 3}),
                   wt = fake(F32, CUDA, 4, (int64_t[]){5, 3, 3, 3}),
                   wt_ok = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3}),
                   b = fake(F32, CUDA, 1, (int64_t[]){7});
  AtenTensorHandle ret = NULL;
  expect_fail(conv2(x, w, NULL, ONE, 2, 2, &ret),
              "aoti_torch_cuda_convolution: weight has 3 input channels per "
              "group, input has 4 (groups 2; expected 6)");
  expect_fail(conv2(x, w5, NULL, ONE, 2, 2, &ret),
              "'weight' has 5 output channels (dim 0), not divisible by "
              "groups 2");
  expect_fail(conv2(x, w, NULL, ONE, 2, 0, &ret),
              "groups must be positive, got 0");
  expect_fail(aoti_torch_cuda_convolution(x, wt, NULL, ONE, 2, ZERO, 2, ONE,
                                          2, 1, ZERO, 2, 1, &ret),
              "transposed weight has 5 input channels (dim 0), input has 4");
  expect_fail(aoti_torch_cuda_convolution(x, wt_ok, NULL, ONE, 2, ZERO, 2,
                                          ONE, 2, 1, ZERO, 2, 3, &ret),
              "input has 4 channels, not divisible by groups 3");
  /* Bias of the wrong size: 6 output channels (groups 1, weight [6, 4]). */
  AtenTensorHandle w64 = fake(F32, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  expect_fail(conv2(x, w64, &b, ONE, 2, 1, &ret),
              "'bias' must be 1-D with 6 values (the output channels), got "
              "[7]");
  del(7, x, w, w5, wt, wt_ok, b, w64);
}

static void test_conv_kernel_too_big(void **state) {
  (void)state;
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){2, 4, 4, 8}),
                   w = fake(F32, CUDA, 4, (int64_t[]){6, 4, 5, 3});
  AtenTensorHandle ret = NULL;
  expect_fail(conv2(x, w, NULL, ONE, 2, 1, &ret),
              "input size 4 (padded: 4) in spatial dim 0 is smaller than the "
              "dilated kernel size 5");
  del(2, x, w);
}

static void test_conv_empty_batch(void **state) {
  (void)state;
  /* N == 0: the result is allocated (zero bytes, no allocator call), no
   * cuDNN. An empty input is never channels-last (ATen's rule), but a
   * channels-last weight makes the result channels-last. */
  AtenTensorHandle x = fake_strided(F16, CUDA, 4, (int64_t[]){0, 4, 8, 8},
                               (int64_t[]){256, 1, 32, 4}),
                   w = fake_strided(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3},
                               (int64_t[]){36, 1, 12, 4});
  AtenTensorHandle ret = NULL;
  const int64_t st[2] = {2, 2}, pd[2] = {1, 1};
  assert_int_equal(aoti_torch_cuda_convolution(x, w, NULL, st, 2, pd, 2, ONE,
                                               2, 0, ZERO, 2, 1, &ret),
                   AOTI_TORCH_SUCCESS);
  int64_t *sizes = NULL, *strides = NULL;
  assert_int_equal(aoti_torch_get_sizes(ret, &sizes), AOTI_TORCH_SUCCESS);
  assert_int_equal(aoti_torch_get_strides(ret, &strides), AOTI_TORCH_SUCCESS);
  const int64_t want_sizes[4] = {0, 6, 4, 4}, want_strides[4] = {96, 1, 24, 6};
  for (int d = 0; d < 4; d++) {
    assert_int_equal(sizes[d], want_sizes[d]);
    assert_int_equal(strides[d], want_strides[d]);
  }
  del(3, x, w, ret);
}

/* ---- the plan ---- */

static void plan(AtenTensorHandle x, AtenTensorHandle w, int transposed,
                 const int64_t *st, const int64_t *pd, const int64_t *dl,
                 const int64_t *op, int64_t n, int64_t groups,
                 aotrun_fb_conv *c) {
  assert_int_equal(aotrun_fb_conv_args(OP, x, w, NULL, st, n, pd, n, dl, n,
                                       transposed, op, n, groups, c),
                   AOTI_TORCH_SUCCESS);
}

static void test_plan_shapes(void **state) {
  (void)state;
  aotrun_fb_conv c;
  /* 2-D, stride 2, padding 1, dilation 2: (9 + 2 - 5) / 2 + 1 = 4. */
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){1, 4, 9, 9}),
                   w = fake(F32, CUDA, 4, (int64_t[]){8, 2, 3, 3});
  plan(x, w, 0, (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){2, 2},
       ZERO, 2, 2, &c);
  assert_int_equal(c.rd, 4);
  assert_int_equal(c.out_sizes[1], 8);
  assert_int_equal(c.out_sizes[2], 4);
  assert_int_equal(c.out_sizes[3], 4);
  assert_int_equal(c.channels_last, 0);
  /* Transposed: (9 - 1) * 2 - 2 + 5 + 1 = 20 channels 3 * groups 2. */
  AtenTensorHandle wt = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3});
  plan(x, wt, 1, (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){2, 2},
       (int64_t[]){1, 0}, 2, 2, &c);
  assert_int_equal(c.out_sizes[1], 6);
  assert_int_equal(c.out_sizes[2], 20);
  assert_int_equal(c.out_sizes[3], 19);
  del(3, x, w, wt);
}

static void test_plan_1d_as_2d(void **state) {
  (void)state;
  aotrun_fb_conv c;
  AtenTensorHandle x = fake(BF16, CUDA, 3, (int64_t[]){2, 4, 10}),
                   w = fake(BF16, CUDA, 3, (int64_t[]){6, 4, 3});
  plan(x, w, 0, (int64_t[]){2}, (int64_t[]){1}, (int64_t[]){1}, ZERO, 1, 1,
       &c);
  assert_int_equal(c.rd, 4);
  assert_int_equal(c.in_sizes[2], 1);
  assert_int_equal(c.in_sizes[3], 10);
  assert_int_equal(c.stride[0], 1);
  assert_int_equal(c.stride[1], 2);
  assert_int_equal(c.pad[0], 0);
  assert_int_equal(c.pad[1], 1);
  assert_int_equal(c.ret_ndim, 3);
  assert_int_equal(c.ret_sizes[2], 5); /* (10 + 2 - 3) / 2 + 1 */
  assert_int_equal(c.ret_strides[0], 30);
  assert_int_equal(c.ret_strides[1], 5);
  assert_int_equal(c.ret_strides[2], 1);
  /* A permuted (N, L, C) input is made contiguous by ATen first: the
   * result stays contiguous. */
  AtenTensorHandle xp = fake_strided(BF16, CUDA, 3, (int64_t[]){2, 4, 10},
                                (int64_t[]){40, 1, 4});
  plan(xp, w, 0, ONE, ZERO, ONE, ZERO, 1, 1, &c);
  assert_int_equal(c.channels_last, 0);
  del(3, x, w, xp);
}

static void test_plan_memory_format(void **state) {
  (void)state;
  aotrun_fb_conv c;
  AtenTensorHandle x = fake(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   xcl = fake_strided(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8},
                                 (int64_t[]){256, 1, 32, 4}),
                   w = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3}),
                   wcl = fake_strided(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3},
                                 (int64_t[]){36, 1, 12, 4});
  plan(x, w, 0, ONE, ZERO, ONE, ZERO, 2, 1, &c);
  assert_int_equal(c.channels_last, 0);
  assert_int_equal(c.out_strides[1], 36);
  plan(xcl, w, 0, ONE, ZERO, ONE, ZERO, 2, 1, &c);
  assert_int_equal(c.channels_last, 1);
  /* Output [2, 6, 6, 6] in NHWC: strides (216, 1, 36, 6). */
  assert_int_equal(c.ret_strides[0], 216);
  assert_int_equal(c.ret_strides[1], 1);
  assert_int_equal(c.ret_strides[2], 36);
  assert_int_equal(c.ret_strides[3], 6);
  plan(x, wcl, 0, ONE, ZERO, ONE, ZERO, 2, 1, &c); /* weight decides too */
  assert_int_equal(c.channels_last, 1);
  /* float64 never goes channels-last. */
  AtenTensorHandle x64 = fake_strided(F64, CUDA, 4, (int64_t[]){2, 4, 8, 8},
                                 (int64_t[]){256, 1, 32, 4}),
                   w64 = fake(F64, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  plan(x64, w64, 0, ONE, ZERO, ONE, ZERO, 2, 1, &c);
  assert_int_equal(c.channels_last, 0);
  /* 3-D: NDHWC. */
  AtenTensorHandle x3 = fake_strided(F32, CUDA, 5, (int64_t[]){1, 3, 4, 5, 6},
                                (int64_t[]){360, 1, 90, 18, 3}),
                   w3 = fake(F32, CUDA, 5, (int64_t[]){2, 3, 1, 1, 1});
  plan(x3, w3, 0, ONE, ZERO, ONE, ZERO, 3, 1, &c);
  assert_int_equal(c.channels_last, 1);
  assert_int_equal(c.ret_strides[1], 1);
  assert_int_equal(c.ret_strides[4], 2);
  del(8, x, xcl, w, wcl, x64, w64, x3, w3);
}

static void test_channels_last_rule(void **state) {
  (void)state;
  /* ATen's ambiguous cases default to NCHW. */
  const int64_t n111[4] = {4, 1, 1, 1}, s_n111[4] = {1, 1, 1, 1};
  assert_false(aotrun_fb_is_channels_last_strides(n111, s_n111, 4));
  const int64_t sz[4] = {2, 3, 4, 5}, nhwc[4] = {60, 1, 15, 3},
                nchw[4] = {60, 20, 5, 1};
  assert_true(aotrun_fb_is_channels_last_strides(sz, nhwc, 4));
  assert_false(aotrun_fb_is_channels_last_strides(sz, nchw, 4));
  const int64_t c0[4] = {60, 0, 15, 3};
  assert_false(aotrun_fb_is_channels_last_strides(sz, c0, 4));
  int64_t st[4];
  aotrun_fb_format_strides(sz, 4, 1, st);
  assert_memory_equal(st, nhwc, sizeof st);
}

/* ---- the algorithm cache ---- */

static void test_cache_keys(void **state) {
  (void)state;
  aotrun_fb_conv_cache_clear();
  aotrun_fb_conv a, b;
  AtenTensorHandle x = fake(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   xcl = fake_strided(F16, CUDA, 4, (int64_t[]){2, 4, 8, 8},
                                 (int64_t[]){256, 1, 32, 4}),
                   w = fake(F16, CUDA, 4, (int64_t[]){6, 4, 3, 3});
  plan(x, w, 0, ONE, ZERO, ONE, ZERO, 2, 1, &a);
  plan(x, w, 0, ONE, ZERO, ONE, ZERO, 2, 1, &b);
  aotrun_fb_conv_key ka, kb;
  aotrun_fb_conv_key_of(&a, 16, &ka);
  aotrun_fb_conv_key_of(&b, 16, &kb);
  assert_memory_equal(&ka, &kb, sizeof ka);
  aotrun_fb_conv_algo algo = {3, CUDNN_TENSOR_OP_MATH, 4096, 0}, got;
  assert_false(aotrun_fb_conv_cache_lookup(&ka, &got));
  aotrun_fb_conv_cache_store(&ka, &algo);
  assert_true(aotrun_fb_conv_cache_lookup(&kb, &got));
  assert_int_equal(got.algo, 3);
  assert_int_equal(got.workspace, 4096);
  /* Alignment, stride, layout and padding each make another key. */
  aotrun_fb_conv_key_of(&b, 8, &kb);
  assert_false(aotrun_fb_conv_cache_lookup(&kb, &got));
  plan(x, w, 0, (int64_t[]){2, 2}, ZERO, ONE, ZERO, 2, 1, &b);
  aotrun_fb_conv_key_of(&b, 16, &kb);
  assert_false(aotrun_fb_conv_cache_lookup(&kb, &got));
  plan(xcl, w, 0, ONE, ZERO, ONE, ZERO, 2, 1, &b);
  aotrun_fb_conv_key_of(&b, 16, &kb);
  assert_false(aotrun_fb_conv_cache_lookup(&kb, &got));
  plan(x, w, 0, ONE, ONE, ONE, ZERO, 2, 1, &b);
  aotrun_fb_conv_key_of(&b, 16, &kb);
  assert_false(aotrun_fb_conv_cache_lookup(&kb, &got));
  /* A heuristic entry is replaced by the benchmarked choice. */
  aotrun_fb_conv_algo h = {1, CUDNN_DEFAULT_MATH, 0, 1};
  aotrun_fb_conv_cache_store(&kb, &h);
  assert_true(aotrun_fb_conv_cache_lookup(&kb, &got));
  assert_int_equal(got.from_heuristic, 1);
  aotrun_fb_conv_cache_store(&kb, &algo);
  assert_true(aotrun_fb_conv_cache_lookup(&kb, &got));
  assert_int_equal(got.from_heuristic, 0);
  assert_int_equal(aotrun_fb_conv_cache_size(), 2);
  del(3, x, xcl, w);
}

static void test_cache_eviction(void **state) {
  (void)state;
  aotrun_fb_conv_cache_clear();
  aotrun_fb_conv_key k;
  aotrun_fb_conv_algo a = {0, 0, 0, 0}, got;
  for (int i = 0; i < AOTRUN_FB_CONV_CACHE_CAPACITY + 5; i++) {
    memset(&k, 0, sizeof k);
    k.in[0] = i;
    a.algo = i;
    aotrun_fb_conv_cache_store(&k, &a);
  }
  assert_int_equal(aotrun_fb_conv_cache_size(), AOTRUN_FB_CONV_CACHE_CAPACITY);
  memset(&k, 0, sizeof k);
  k.in[0] = 2; /* among the 5 oldest: replaced */
  assert_false(aotrun_fb_conv_cache_lookup(&k, &got));
  k.in[0] = AOTRUN_FB_CONV_CACHE_CAPACITY + 4;
  assert_true(aotrun_fb_conv_cache_lookup(&k, &got));
  assert_int_equal(got.algo, AOTRUN_FB_CONV_CACHE_CAPACITY + 4);
  aotrun_fb_conv_cache_clear();
}

/* ---- the cuDNN loader ---- */

static void test_loader_missing_library(void **state) {
  (void)state;
  /* Runs before any test loads the real library (see main's order). */
  assert_int_equal(aotrun_fb_cudnn_set_library("libcudnn_aotrun_absent.so.9"),
                   0);
  const aotrun_fb_cudnn_api *api = NULL;
  expect_fail(aotrun_fb_cudnn_load(OP, &api),
              "aoti_torch_cuda_convolution: cannot load the cuDNN library "
              "'libcudnn_aotrun_absent.so.9' (needed for convolutions)");
  expect_fail(aotrun_fb_cudnn_load(OP, &api), "AOTRUN_CUDNN_LIBRARY");
  /* The op itself reports it after its argument checks (no GPU needed). */
  AtenTensorHandle x = fake(F32, CUDA, 4, (int64_t[]){1, 2, 4, 4}),
                   w = fake(F32, CUDA, 4, (int64_t[]){3, 2, 3, 3});
  AtenTensorHandle ret = fake_sentinel();
  expect_fail(conv2(x, w, NULL, ONE, 2, 1, &ret),
              "cannot load the cuDNN library 'libcudnn_aotrun_absent.so.9'");
  assert_null(ret);
  /* A library without cuDNN's symbols is named with the missing one. */
  assert_int_equal(aotrun_fb_cudnn_set_library("libm.so.6"), 0);
  expect_fail(aotrun_fb_cudnn_load(OP, &api),
              "the cuDNN library 'libm.so.6' lacks cudnnGetVersion");
  assert_int_equal(aotrun_fb_cudnn_set_library(NULL), 0);
  del(2, x, w);
}

static void test_loader_real_library(void **state) {
  (void)state;
  const aotrun_fb_cudnn_api *api = NULL;
  if (aotrun_fb_cudnn_load(OP, &api) != AOTI_TORCH_SUCCESS) {
    print_message("skipped: %s\n", aotrun_shim_last_error());
    skip();
  }
  /* Every function resolved and the version is 9.x. */
  assert_true(api->version >= 90000 && api->version < 100000);
  assert_non_null(api->cudnnConvolutionForward);
  assert_non_null(api->cudnnConvolutionBackwardData);
  assert_int_equal(api->cudnnGetVersion(), api->version);
  /* Once loaded, the seam no longer applies. */
  assert_int_equal(aotrun_fb_cudnn_set_library("other.so"), -1);
}

/* The graph path's descriptors on the real cuDNN (skips without it): every
 * tensor, the convolution, the forward / backward-data operation and the
 * fused bias must finalize, which checks the attribute sequence, the
 * weight's group layout and the shapes against cuDNN's own validation.
 * The operation graph needs a handle (a GPU): without one it is the only
 * step allowed to fail. */
static void expect_real_graph(const aotrun_fb_cudnn_api *api,
                              const aotrun_fb_conv *c, int fuse,
                              const char *name) {
  const int64_t align[4] = {16, 16, 16, 16};
  aotrun_fb_conv_graph_spec s;
  aotrun_fb_conv_graph_spec_of(c, fuse, align, &s);
  aotrun_fb_conv_graph g;
  const char *step = NULL;
  cudnnHandle_t h = NULL;
  int have_gpu = api->cudnnCreate(&h) == CUDNN_STATUS_SUCCESS;
  cudnnStatus_t st = aotrun_fb_conv_graph_build(api, h, &s, &g, &step);
  if (st == CUDNN_STATUS_SUCCESS) {
    aotrun_fb_conv_graph_destroy(&g);
  } else if (have_gpu || strcmp(step, "the operation graph") != 0) {
    fail_msg("%s: building %s failed: %s", name, step,
             api->cudnnGetErrorString(st));
  }
  print_message("%s: %s\n", name,
                st == CUDNN_STATUS_SUCCESS
                    ? "graph finalized"
                    : "descriptors finalized (no handle for the graph)");
  if (have_gpu) api->cudnnDestroy(h);
}

static void test_graph_descriptors_real_library(void **state) {
  (void)state;
  const aotrun_fb_cudnn_api *api = NULL;
  if (aotrun_fb_cudnn_load(OP, &api) != AOTI_TORCH_SUCCESS) {
    print_message("skipped: %s\n", aotrun_shim_last_error());
    skip();
  }
  aotrun_fb_conv c;
  const int64_t two[2] = {2, 2};
  /* fp16 channels-last 3x3 + bias (fused), grouped fp32, depthwise bf16,
   * transposed fp16 4x4 s2 (+ bias), a windowed transposed, fp64, 3-D. */
  AtenTensorHandle x = fake_strided(F16, CUDA, 4, (int64_t[]){2, 8, 8, 8},
                               (int64_t[]){512, 1, 64, 8}),
                   w = fake_strided(F16, CUDA, 4, (int64_t[]){16, 8, 3, 3},
                               (int64_t[]){72, 1, 24, 8}),
                   b = fake(F16, CUDA, 1, (int64_t[]){16});
  assert_int_equal(aotrun_fb_conv_args(OP, x, w, &b, ONE, 2, ONE, 2, ONE, 2,
                                       0, ZERO, 2, 1, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 1, "fp16 NHWC 3x3 + fused bias");
  expect_real_graph(api, &c, 0, "fp16 NHWC 3x3");
  AtenTensorHandle xg = fake(F32, CUDA, 4, (int64_t[]){2, 8, 9, 9}),
                   wg = fake(F32, CUDA, 4, (int64_t[]){12, 2, 3, 3});
  assert_int_equal(aotrun_fb_conv_args(OP, xg, wg, NULL, two, 2, ONE, 2, two,
                                       2, 0, ZERO, 2, 4, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 0, "fp32 groups 4, stride 2, dilation 2");
  AtenTensorHandle xd = fake_strided(BF16, CUDA, 4, (int64_t[]){2, 8, 6, 6},
                                (int64_t[]){288, 1, 48, 8}),
                   wd = fake_strided(BF16, CUDA, 4, (int64_t[]){8, 1, 3, 3},
                                (int64_t[]){9, 1, 3, 1});
  assert_int_equal(aotrun_fb_conv_args(OP, xd, wd, NULL, ONE, 2, ONE, 2, ONE,
                                       2, 0, ZERO, 2, 8, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 0, "bf16 NHWC depthwise");
  AtenTensorHandle xt = fake(F16, CUDA, 4, (int64_t[]){1, 8, 5, 5}),
                   wt = fake(F16, CUDA, 4, (int64_t[]){8, 4, 4, 4}),
                   bt = fake(F16, CUDA, 1, (int64_t[]){8});
  assert_int_equal(aotrun_fb_conv_args(OP, xt, wt, &bt, two, 2, ONE, 2, ONE,
                                       2, 1, ZERO, 2, 2, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 0, "fp16 transposed 4x4 s2 groups 2");
  expect_real_graph(api, &c, 1, "fp16 transposed 4x4 s2 groups 2 + bias");
  AtenTensorHandle xw = fake(F32, CUDA, 4, (int64_t[]){1, 4, 5, 5}),
                   ww = fake(F32, CUDA, 4, (int64_t[]){4, 3, 3, 3});
  assert_int_equal(aotrun_fb_conv_args(OP, xw, ww, NULL, ONE, 2, ONE, 2, two,
                                       2, 1, ONE, 2, 1, &c),
                   AOTI_TORCH_SUCCESS);
  assert_true(c.windowed);
  expect_real_graph(api, &c, 0, "fp32 transposed, windowed dx");
  AtenTensorHandle x64 = fake(F64, CUDA, 4, (int64_t[]){2, 4, 8, 8}),
                   w64 = fake(F64, CUDA, 4, (int64_t[]){6, 4, 3, 3}),
                   b64 = fake(F64, CUDA, 1, (int64_t[]){6});
  assert_int_equal(aotrun_fb_conv_args(OP, x64, w64, &b64, ONE, 2, ONE, 2,
                                       ONE, 2, 0, ZERO, 2, 1, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 1, "fp64 + fused bias");
  AtenTensorHandle x3 = fake(F32, CUDA, 5, (int64_t[]){1, 4, 6, 6, 6}),
                   w3 = fake(F32, CUDA, 5, (int64_t[]){2, 4, 3, 3, 3});
  assert_int_equal(aotrun_fb_conv_args(OP, x3, w3, NULL, ONE, 1, ONE, 1, ONE,
                                       1, 0, ZERO, 1, 1, &c),
                   AOTI_TORCH_SUCCESS);
  expect_real_graph(api, &c, 0, "fp32 3-D");
  del(17, x, w, b, xg, wg, xd, wd, xt, wt, bt, xw, ww, x64, w64, b64, x3, w3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_null_and_dims),
      cmocka_unit_test(test_conv_dtypes_devices),
      cmocka_unit_test(test_conv_lists),
      cmocka_unit_test(test_conv_channels_groups),
      cmocka_unit_test(test_conv_kernel_too_big),
      cmocka_unit_test(test_conv_empty_batch),
      cmocka_unit_test(test_plan_shapes),
      cmocka_unit_test(test_plan_1d_as_2d),
      cmocka_unit_test(test_plan_memory_format),
      cmocka_unit_test(test_channels_last_rule),
      cmocka_unit_test(test_cache_keys),
      cmocka_unit_test(test_cache_eviction),
      cmocka_unit_test(test_loader_missing_library),
      cmocka_unit_test(test_loader_real_library),
      cmocka_unit_test(test_graph_descriptors_real_library),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
