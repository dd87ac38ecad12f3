/* test_attention_args.c: argument checks of the fused attention ops
 * (_scaled_dot_product_flash_attention, _scaled_dot_product_efficient_
 * attention, _flash_attention_forward, _efficient_attention_forward): ranks,
 * head dims, dtypes, Hq % Hkv, dropout, bias shape and dtype, unsupported
 * options, NULL result pointers; every message names the op, the argument
 * and the values. Runs without a GPU: the "CUDA" tensors are never-owning
 * blobs over host memory that is never touched, since every check runs
 * before any CUDA call. Also the wide kernel's refusals and the tiled
 * float32 kernel's argument checks (the choice between kernels:
 * test_kernel_options.c). The output-geometry test needs a GPU
 * and skips, saying why, without one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/attention_f32.h"
#include "shim_lib/fallback/attention_wide.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "testing/fallback/fallback_test_util.h"
#include "testing/fallback/fake_tensor.h"

enum { F16 = 5, F32 = 6, F64 = 7, BF16 = 15, I64 = 4, U64 = 29, CPU = 0,
       CUDA = 1 };

static AtenTensorHandle t4(int32_t dtype, int64_t a, int64_t b, int64_t c,
                           int64_t d) {
  const int64_t s[4] = {a, b, c, d};
  return fake(dtype, CUDA, 4, s);
}

typedef struct flash_rets {
  AtenTensorHandle r0, r1, r2, r3, r6, r7, r8;
  int64_t r4, r5;
} flash_rets;

static AOTITorchError flash(AtenTensorHandle q, AtenTensorHandle k,
                            AtenTensorHandle v, double dropout, int causal,
                            int debug, flash_rets *r) {
  memset(r, 0, sizeof *r);
  return aoti_torch_cuda__scaled_dot_product_flash_attention(
      q, k, v, dropout, causal, debug, NULL, &r->r0, &r->r1, &r->r2, &r->r3,
      &r->r4, &r->r5, &r->r6, &r->r7, &r->r8);
}

typedef struct eff_rets {
  AtenTensorHandle r0, r1, r2, r3;
} eff_rets;

static AOTITorchError eff(AtenTensorHandle q, AtenTensorHandle k,
                          AtenTensorHandle v, AtenTensorHandle bias,
                          double dropout, eff_rets *r) {
  memset(r, 0, sizeof *r);
  AtenTensorHandle b = bias;
  return aoti_torch_cuda__scaled_dot_product_efficient_attention(
      q, k, v, bias ? &b : NULL, 1, dropout, 0, NULL, &r->r0, &r->r1, &r->r2,
      &r->r3);
}

static void del(int n, ...) {
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    aoti_torch_delete_tensor_object(va_arg(ap, AtenTensorHandle));
  va_end(ap);
}

static void test_null_args(void **state) {
  (void)state;
  AtenTensorHandle q = t4(BF16, 1, 2, 8, 64), k = t4(BF16, 1, 2, 8, 64);
  flash_rets r;
  expect_fail(flash(NULL, k, k, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: argument "
              "'query' is NULL");
  expect_fail(flash(q, k, NULL, 0.0, 0, 0, &r),
              "argument 'value' is NULL");
  /* NULL result slots are results the model does not use (AOTInductor
   * passes NULL; torch's shims write only `if (retN)`): accepted, so the
   * first problem reported is the argument's. */
  expect_fail(aoti_torch_cuda__scaled_dot_product_flash_attention(
                  NULL, k, k, 0.0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL,
                  NULL, NULL, NULL, NULL),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: argument "
              "'query' is NULL");
  expect_fail(aoti_torch_cuda__scaled_dot_product_efficient_attention(
                  q, k, NULL, NULL, 1, 0.0, 0, NULL, NULL, NULL, NULL, NULL),
              "argument 'value' is NULL");
  expect_fail(aoti_torch_cuda__flash_attention_forward(
                  NULL, k, k, NULL, NULL, 8, 8, 0.0, 0, 0, NULL, NULL, NULL,
                  NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              "argument 'query' is NULL");
  expect_fail(aoti_torch_cuda__efficient_attention_forward(
                  NULL, k, k, NULL, NULL, NULL, NULL, NULL, 0.0, 0, 0, NULL,
                  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              "argument 'query' is NULL");
  del(2, q, k);
}

static void test_ranks(void **state) {
  (void)state;
  const int64_t s3[3] = {2, 8, 64};
  AtenTensorHandle q3 = fake(F16, CUDA, 3, s3), k = t4(F16, 1, 2, 8, 64);
  flash_rets r;
  eff_rets e;
  expect_fail(flash(q3, k, k, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: 'query' "
              "must be 4-D, got 3-D tensor [2, 8, 64]");
  expect_fail(eff(k, q3, k, NULL, 0.0, &e),
              "aoti_torch_cuda__scaled_dot_product_efficient_attention: "
              "'key' must be 4-D, got 3-D tensor [2, 8, 64]");
  del(2, q3, k);
}

static void test_dtypes(void **state) {
  (void)state;
  AtenTensorHandle q64 = t4(F64, 1, 2, 8, 64), q = t4(F16, 1, 2, 8, 64),
                   kb = t4(BF16, 1, 2, 8, 64), bias = t4(F32, 1, 2, 8, 8);
  flash_rets r;
  eff_rets e;
  expect_fail(flash(q64, q64, q64, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: 'query' "
              "has dtype float64; supported are float16, bfloat16 and "
              "float32");
  expect_fail(flash(q, kb, q, 0.0, 0, 0, &r),
              "'key' has dtype bfloat16 but 'query' has dtype float16");
  expect_fail(eff(q, q, q, bias, 0.0, &e),
              "aoti_torch_cuda__scaled_dot_product_efficient_attention: "
              "'attn_bias' has dtype float32 but 'query' has dtype float16");
  del(4, q64, q, kb, bias);
}

static void test_cpu_tensor(void **state) {
  (void)state;
  const int64_t s[4] = {1, 2, 8, 64};
  AtenTensorHandle qc = fake(F16, CPU, 4, s), q = t4(F16, 1, 2, 8, 64);
  flash_rets r;
  expect_fail(flash(q, qc, q, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: 'key' is "
              "on device type 0 (cpu), expected a CUDA tensor");
  del(2, qc, q);
}

static void test_head_dims(void **state) {
  (void)state;
  AtenTensorHandle q = t4(BF16, 1, 2, 8, 300), q0 = t4(BF16, 1, 2, 8, 0),
                   q64 = t4(BF16, 1, 2, 8, 64), k32 = t4(BF16, 1, 2, 8, 32),
                   v32 = t4(BF16, 1, 2, 8, 32);
  flash_rets r;
  eff_rets e;
  expect_fail(flash(q, q, q, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: head dim "
              "D=300 of 'query' [1, 2, 8, 300] is not supported (1 to 256)");
  expect_fail(eff(q0, q0, q0, NULL, 0.0, &e),
              "head dim D=0 of 'query' [1, 2, 8, 0] is not supported");
  expect_fail(flash(q64, k32, v32, 0.0, 0, 0, &r),
              "head dims differ: 'query' [1, 2, 8, 64] has D=64, 'key' "
              "[1, 2, 8, 32] has D=32");
  expect_fail(eff(q64, q64, v32, NULL, 0.0, &e),
              "'value' [1, 2, 8, 32] has head dim 32, 'query' [1, 2, 8, 64] "
              "has D=64; a value head dim other than D is not supported");
  del(5, q, q0, q64, k32, v32);
}

static void test_heads_and_shapes(void **state) {
  (void)state;
  AtenTensorHandle q = t4(F16, 2, 8, 16, 64), k3 = t4(F16, 2, 3, 16, 64),
                   k2 = t4(F16, 2, 2, 10, 64), v2 = t4(F16, 2, 2, 11, 64),
                   kb = t4(F16, 3, 2, 10, 64);
  flash_rets r;
  expect_fail(flash(q, k3, k3, 0.0, 0, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: 'query' "
              "[2, 8, 16, 64] has 8 heads, not a multiple of the 3 heads of "
              "'key' [2, 3, 16, 64]");
  expect_fail(flash(q, k2, v2, 0.0, 0, 0, &r),
              "'key' [2, 2, 10, 64] and 'value' [2, 2, 11, 64] differ in "
              "heads or sequence length");
  expect_fail(flash(q, kb, kb, 0.0, 0, 0, &r),
              "batch sizes differ: 'query' [2, 8, 16, 64], 'key' "
              "[3, 2, 10, 64], 'value' [3, 2, 10, 64]");
  /* GQA 8 / 2 and L != S pass the checks: the first failure is dropout. */
  expect_fail(flash(q, k2, k2, 0.5, 0, 0, &r), "dropout_p=0.5");
  del(5, q, k3, k2, v2, kb);
}

static void test_dropout_and_debug_mask(void **state) {
  (void)state;
  AtenTensorHandle q = t4(BF16, 1, 2, 8, 64);
  flash_rets r;
  eff_rets e;
  expect_fail(flash(q, q, q, 0.1, 1, 0, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: "
              "dropout_p=0.1 is not supported (aotrun runs attention without "
              "dropout: 0.0 only)");
  expect_fail(eff(q, q, q, NULL, 0.25, &e),
              "aoti_torch_cuda__scaled_dot_product_efficient_attention: "
              "dropout_p=0.25 is not supported");
  expect_fail(flash(q, q, q, 0.0, 0, 1, &r),
              "aoti_torch_cuda__scaled_dot_product_flash_attention: "
              "return_debug_mask=True is not supported");
  assert_null(r.r0);
  assert_null(r.r2);
  del(1, q);
}

static void test_bias_shape(void **state) {
  (void)state;
  AtenTensorHandle q = t4(F16, 2, 4, 16, 64), k = t4(F16, 2, 4, 10, 64);
  AtenTensorHandle bad = t4(F16, 2, 3, 16, 10), bad_s = t4(F16, 1, 1, 16, 11);
  const int64_t s2[2] = {16, 10}, s5[5] = {1, 2, 4, 16, 10};
  AtenTensorHandle ok2 = fake(F16, CUDA, 2, s2), b5 = fake(F16, CUDA, 5, s5);
  eff_rets e;
  expect_fail(eff(q, k, k, bad, 0.0, &e),
              "aoti_torch_cuda__scaled_dot_product_efficient_attention: "
              "'attn_bias' of shape [2, 3, 16, 10] does not broadcast to "
              "[B, H, L, S] = [2, 4, 16, 10]");
  expect_fail(eff(q, k, k, bad_s, 0.0, &e),
              "'attn_bias' of shape [1, 1, 16, 11] does not broadcast to "
              "[B, H, L, S] = [2, 4, 16, 10]");
  expect_fail(eff(q, k, k, b5, 0.0, &e),
              "'attn_bias' of shape [1, 2, 4, 16, 10] does not broadcast");
  /* A broadcastable 2-D bias passes the checks (dropout fails after). */
  expect_fail(eff(q, k, k, ok2, 0.5, &e), "dropout_p=0.5");
  assert_null(e.r0);
  del(6, q, k, bad, bad_s, ok2, b5);
}

static void test_forward_ops_options(void **state) {
  (void)state;
  /* [B, L, H, D] */
  AtenTensorHandle q = t4(BF16, 1, 8, 4, 64), k = t4(BF16, 1, 8, 2, 64);
  AtenTensorHandle cu = NULL, r0 = NULL, r1 = NULL, r2 = NULL, r3 = NULL,
                   r4 = NULL;
  const int64_t s1[1] = {2};
  cu = fake(I64, CUDA, 1, s1);
  int64_t wl = 16, wr = -1, m4 = 0, m5 = 0;
  expect_fail(aoti_torch_cuda__flash_attention_forward(
                  q, k, k, &cu, &cu, 8, 8, 0.0, 0, 0, NULL, NULL, NULL, NULL,
                  NULL, &r0, &r1, &r2, &r3, &r4),
              "aoti_torch_cuda__flash_attention_forward: cum_seq_q / "
              "cum_seq_k (variable-length batches) are not supported");
  expect_fail(aoti_torch_cuda__flash_attention_forward(
                  q, k, k, NULL, NULL, 8, 8, 0.0, 0, 0, NULL, &wl, &wr, NULL,
                  NULL, &r0, &r1, &r2, &r3, &r4),
              "sliding windows (window_size_left=16, window_size_right=-1) "
              "are not supported");
  expect_fail(aoti_torch_cuda__flash_attention_forward(
                  q, k, k, NULL, NULL, 8, 8, 0.3, 1, 0, NULL, NULL, NULL,
                  NULL, NULL, &r0, &r1, &r2, &r3, &r4),
              "aoti_torch_cuda__flash_attention_forward: dropout_p=0.3");
  expect_fail(aoti_torch_cuda__efficient_attention_forward(
                  q, k, k, NULL, NULL, NULL, NULL, NULL, 0.0, 3, 0, NULL,
                  NULL, NULL, &r0, &r1, &r2, &r3, &m4, &m5),
              "aoti_torch_cuda__efficient_attention_forward: "
              "custom_mask_type=3 is not supported");
  expect_fail(aoti_torch_cuda__efficient_attention_forward(
                  q, k, k, NULL, &cu, NULL, NULL, NULL, 0.0, 0, 0, NULL,
                  NULL, NULL, &r0, &r1, &r2, &r3, &m4, &m5),
              "cu_seqlens_q / cu_seqlens_k / seqlen_k (variable-length "
              "batches) are not supported");
  /* [B, L, H, D]: 4 query heads over 2 key heads is fine; 3 is not. */
  AtenTensorHandle k3 = t4(BF16, 1, 8, 3, 64);
  expect_fail(aoti_torch_cuda__efficient_attention_forward(
                  q, k3, k3, NULL, NULL, NULL, NULL, NULL, 0.0, 0, 0, NULL,
                  NULL, NULL, &r0, &r1, &r2, &r3, &m4, &m5),
              "'query' [1, 8, 4, 64] has 4 heads, not a multiple of the 3 "
              "heads of 'key' [1, 8, 3, 64]");
  del(4, q, k, cu, k3);
}

/* Output shapes, strides and dtypes (ATen's meta functions); GPU only. */
static void check_desc(AtenTensorHandle h, int64_t ndim, const int64_t *sizes,
                       const int64_t *strides, int32_t dtype,
                       int32_t device_type, const char *what) {
  int64_t nd = -1, *sz = NULL, *st = NULL;
  int32_t dt = -1, dv = -1;
  assert_non_null(h);
  assert_int_equal(aoti_torch_get_dim(h, &nd), AOTI_TORCH_SUCCESS);
  if (nd != ndim) fail_msg("%s: %lld dims, want %lld", what, (long long)nd,
                           (long long)ndim);
  aoti_torch_get_sizes(h, &sz);
  aoti_torch_get_strides(h, &st);
  aoti_torch_get_dtype(h, &dt);
  aoti_torch_get_device_type(h, &dv);
  for (int64_t d = 0; d < ndim; d++) {
    if (sz[d] != sizes[d])
      fail_msg("%s: size %lld is %lld, want %lld", what, (long long)d,
               (long long)sz[d], (long long)sizes[d]);
    if (strides && st[d] != strides[d])
      fail_msg("%s: stride %lld is %lld, want %lld", what, (long long)d,
               (long long)st[d], (long long)strides[d]);
  }
  if (dt != dtype) fail_msg("%s: dtype %d, want %d", what, dt, dtype);
  if (dv != device_type)
    fail_msg("%s: device type %d, want %d", what, dv, device_type);
}

static void test_tc_wide_refuses_uncovered(void **state) {
  (void)state;
  /* The wide entry takes float16/bfloat16 with D <= 128 only; it refuses
   * the rest before any CUDA call (no GPU needed). */
  aotrun_fb_attn_params p;
  memset(&p, 0, sizeof p);
  p.B = p.Hq = p.Hkv = p.L = p.S = 1;
  p.dtype = BF16;
  p.D = AOTRUN_FB_ATTN_WIDE_MAX_D + 1;
  assert_int_equal(aotrun_fb_attention_wide(&p, NULL), cudaErrorInvalidValue);
  p.D = 0;
  assert_int_equal(aotrun_fb_attention_wide(&p, NULL), cudaErrorInvalidValue);
  p.D = 64;
  p.dtype = F32;
  assert_int_equal(aotrun_fb_attention_wide(&p, NULL), cudaErrorInvalidValue);
}

/* A float32 problem both float32 kernels would run (its pointers are
 * never read: every use below stops before any CUDA call). */
static aotrun_fb_attn_params f32_params(void) {
  aotrun_fb_attn_params p;
  memset(&p, 0, sizeof p);
  p.B = 1, p.Hq = 4, p.Hkv = 2, p.L = 8, p.S = 8, p.D = 64;
  p.dtype = F32;
  p.scale = 0.125f;
  return p;
}

static void test_f32_tiled_preconditions(void **state) {
  (void)state;
  /* The tiled entry refuses what aotrun_fb_attention refuses, with the
   * same error and before any CUDA call, and launches nothing for empty
   * problems. */
  aotrun_fb_attn_params p = f32_params();
  p.B = 0;
  assert_int_equal(aotrun_fb_attention_f32_tiled(&p, NULL), cudaSuccess);
  p = f32_params();
  p.L = 0;
  assert_int_equal(aotrun_fb_attention_f32_tiled(&p, NULL), cudaSuccess);
  enum { NBAD = 7 };
  aotrun_fb_attn_params bad[NBAD];
  for (int i = 0; i < NBAD; i++) bad[i] = f32_params();
  bad[0].D = 0;
  bad[1].D = AOTRUN_FB_ATTN_MAX_D + 1;
  bad[2].Hkv = 0;
  bad[3].Hkv = 3;        /* 4 % 3 != 0 */
  bad[4].L = 65535 * 32 + 1;
  bad[5].B = 0x40000000; /* B * Hq > 2^31 - 1 */
  bad[6].dtype = F64;
  for (int i = 0; i < NBAD; i++) {
    print_message("refused case %d\n", i);
    assert_int_equal(aotrun_fb_attention_f32_tiled(&bad[i], NULL),
                     cudaErrorInvalidValue);
    assert_int_equal(aotrun_fb_attention(&bad[i], NULL),
                     cudaErrorInvalidValue);
  }
  /* float32 only: bfloat16 is the tensor-core kernels'. */
  p = f32_params();
  p.dtype = BF16;
  assert_int_equal(aotrun_fb_attention_f32_tiled(&p, NULL),
                   cudaErrorInvalidValue);
}

/* Whether the wide and tiled kernels fit the device's shared memory per
 * block: never without a GPU (the 64-query / SIMT kernels, which need
 * less, are then chosen and fail at launch as before); with one, exactly
 * when their tiles' bytes are within cudaDevAttrMaxSharedMemoryPerBlockOptin. */
static void test_kernels_fit_shared_memory(void **state) {
  (void)state;
  aotrun_fb_attn_params p;
  memset(&p, 0, sizeof p);
  p.B = p.Hq = p.Hkv = p.L = p.S = 1;
  char why[256];
  int gpu = fb_gpu_available(why, sizeof why);
  int limit = 0;
  if (gpu) {
    int dev = 0;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(cudaDeviceGetAttribute(
                         &limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                     cudaSuccess);
  }
  /* (D, bias, the wide tiles' bytes, the tiled float32 tiles' bytes) */
  static const struct {
    int64_t D;
    int bias;
    int wide, f32;
  } cases[] = {{64, 0, 55296, 66560},   {64, 1, 92160, 66560},
               {128, 0, 104448, 115712}, {128, 1, 90112, 115712},
               {256, 0, 0, 139776}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    p.D = cases[i].D;
    p.bias = cases[i].bias ? (const void *)&p : NULL;
    if (cases[i].wide > 0)
      assert_int_equal(aotrun_fb_attention_wide_fits(&p),
                       gpu && cases[i].wide <= limit);
    assert_int_equal(aotrun_fb_attention_f32_tiled_fits(&p),
                     gpu && cases[i].f32 <= limit);
  }
}

static void test_output_geometry_gpu(void **state) {
  (void)state;
  char why[256];
  if (!fb_gpu_available(why, sizeof why)) {
    print_message("SKIP test_output_geometry_gpu: %s\n", why);
    skip();
  }
  /* Zero-length queries: outputs are allocated, the kernel never runs. */
  fb_tensor q, k;
  const int64_t qs[4] = {2, 8, 0, 64}, ks[4] = {2, 2, 5, 64};
  assert_int_equal(fb_tensor_new(&q, FB_BF16, 4, qs, NULL), 0);
  assert_int_equal(fb_tensor_new(&k, FB_BF16, 4, ks, NULL), 0);
  flash_rets r;
  assert_int_equal(flash(q.handle, k.handle, k.handle, 0.0, 1, 0, &r),
                   AOTI_TORCH_SUCCESS);
  const int64_t lse_s[3] = {2, 8, 0}, two = 2, zero = 0;
  check_desc(r.r0, 4, qs, NULL, BF16, CUDA, "flash out");
  check_desc(r.r1, 3, lse_s, NULL, F32, CUDA, "flash lse");
  check_desc(r.r6, 1, &two, NULL, U64, CUDA, "flash rng_state");
  check_desc(r.r7, 0, NULL, NULL, U64, CUDA, "flash unused");
  check_desc(r.r8, 1, &zero, NULL, BF16, CUDA, "flash debug mask");
  assert_int_equal(r.r4, 0);
  assert_int_equal(r.r5, 5);
  del(7, r.r0, r.r1, r.r2, r.r3, r.r6, r.r7, r.r8);
  eff_rets e;
  assert_int_equal(eff(q.handle, k.handle, k.handle, NULL, 0.0, &e),
                   AOTI_TORCH_SUCCESS);
  check_desc(e.r1, 3, lse_s, NULL, F32, CUDA, "efficient lse");
  check_desc(e.r2, 0, NULL, NULL, I64, CPU, "efficient philox_seed");
  del(4, e.r0, e.r1, e.r2, e.r3);
  fb_tensor_free(&q);
  fb_tensor_free(&k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_args),
      cmocka_unit_test(test_ranks),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_cpu_tensor),
      cmocka_unit_test(test_head_dims),
      cmocka_unit_test(test_heads_and_shapes),
      cmocka_unit_test(test_dropout_and_debug_mask),
      cmocka_unit_test(test_bias_shape),
      cmocka_unit_test(test_forward_ops_options),
      cmocka_unit_test(test_tc_wide_refuses_uncovered),
      cmocka_unit_test(test_f32_tiled_preconditions),
      cmocka_unit_test(test_kernels_fit_shared_memory),
      cmocka_unit_test(test_output_geometry_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
