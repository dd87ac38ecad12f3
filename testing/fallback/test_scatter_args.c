/* test_scatter_args.c: the scatter family without a GPU: argument checks of
 * scatter_src_out / scatter_value_out / scatter_reduce_two_out and their
 * generic shim.h variants (every check runs before any CUDA call; the
 * "CUDA" tensors are blobs over host memory that is never touched), plus
 * the element arithmetic the kernels share with the host (scatter_math.h):
 * float16/bfloat16 rounding, the amax/amin total order, mean's counts and
 * integer floor division. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_abi.h"
#include "shim_lib/fallback/scatter_math.h"
#include "testing/fallback/fake_tensor.h"

enum {
  U8 = 0, I8 = 1, I32 = 3, I64 = 4, F16 = 5, F32 = 6, F64 = 7, C64 = 9,
  BOOL = 11, BF16 = 15, CPU = 0, CUDA = 1
};

static const char kSrc[] = "aoti_torch_cuda_scatter_src_out";
static const char kVal[] = "aoti_torch_cuda_scatter_value_out";
static const char kRed[] = "aoti_torch_cuda_scatter_reduce_two_out";

static _Alignas(16) char g_mem[1 << 16]; /* data of the fake tensors */

/* A CUDA tensor [r, c] of dtype at byte offset `at`. */
static AtenTensorHandle t2(int32_t dtype, int64_t r, int64_t c, size_t at) {
  const int64_t s[2] = {r, c};
  return fake_blob(g_mem + at, dtype, CUDA, 0, 2, s, NULL);
}

static void del(AtenTensorHandle a) { aoti_torch_delete_tensor_object(a); }

/* Tensors of a well-formed [4, 8] <- [2, 8] scatter along dim 0, in
 * disjoint memory: self/out at 0, index at 4096, src at 8192. */
typedef struct call {
  AtenTensorHandle out, self, index, src;
} call;

static call make_call(int32_t dtype, int32_t index_dtype) {
  call c;
  c.self = t2(dtype, 4, 8, 0);
  c.out = t2(dtype, 4, 8, 1024);
  c.index = t2(index_dtype, 2, 8, 4096);
  c.src = t2(dtype, 2, 8, 8192);
  return c;
}

static void free_call(call *c) {
  del(c->out);
  del(c->self);
  del(c->index);
  del(c->src);
}

static void test_null_args(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  char want[160];
  snprintf(want, sizeof want, "%s: argument 'out' is NULL", kSrc);
  expect_fail(aoti_torch_cuda_scatter_src_out(NULL, c.self, 0, c.index, c.src),
              want);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, NULL, 0, c.index, c.src),
              "argument 'self' is NULL");
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, NULL, c.src),
              "argument 'index' is NULL");
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, c.index, NULL),
              "argument 'src' is NULL");
  snprintf(want, sizeof want, "%s: argument 'index' is NULL", kVal);
  expect_fail(aoti_torch_cuda_scatter_value_out(c.out, c.self, 0, NULL, 1.0),
              want);
  snprintf(want, sizeof want, "%s: argument 'reduce' is NULL", kRed);
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 0, c.index,
                                                     c.src, NULL, 1),
              want);
  expect_fail(aoti_torch_scatter_reduce_out(c.out, c.self, 0, c.index, NULL,
                                            "sum", 1),
              "aoti_torch_scatter_reduce_out: argument 'src' is NULL");
  free_call(&c);
}

static void test_reduce_names(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 0, c.index,
                                                     c.src, "max", 1),
              "aoti_torch_cuda_scatter_reduce_two_out: reduce argument must "
              "be one of sum, prod, mean, amax, amin; got 'max'");
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 0, c.index,
                                                     c.src, "", 0),
              "got ''");
  free_call(&c);
}

static void test_cpu_tensors(void **state) {
  (void)state;
  const int64_t s48[2] = {4, 8}, s28[2] = {2, 8};
  AtenTensorHandle self = fake_blob(g_mem + 0, F32, CPU, 0, 2, s48, NULL),
                   out = fake_blob(g_mem + 1024, F32, CPU, 0, 2, s48, NULL),
                   index = fake_blob(g_mem + 4096, I64, CPU, 0, 2, s28, NULL),
                   src = fake_blob(g_mem + 8192, F32, CPU, 0, 2, s28, NULL);
  expect_fail(aoti_torch_scatter_out(out, self, 0, index, src),
              "aoti_torch_scatter_out: 'self' is on device type 0 (cpu), "
              "expected a CUDA tensor");
  expect_fail(aoti_torch_scatter_reduce_out(out, self, 0, index, src, "sum", 1),
              "aoti_torch_scatter_reduce_out: 'self' is on device type 0 "
              "(cpu), expected a CUDA tensor");
  call c = make_call(F32, I64);
  expect_fail(aoti_torch_scatter_out(c.out, c.self, 0, index, c.src),
              "'index' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, c.index, src),
              "'src' is on device type 0 (cpu), expected a CUDA tensor");
  expect_fail(aoti_torch_cuda_scatter_src_out(out, c.self, 0, c.index, c.src),
              "'out' is on device type 0 (cpu), expected a CUDA tensor");
  AtenTensorHandle ix1 = fake_blob(g_mem + 4096, I64, CUDA, 1, 2, s28, NULL);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, ix1, c.src),
              "'index' is on cuda:1 but 'self' is on cuda:0");
  del(ix1);
  free_call(&c);
  del(self);
  del(out);
  del(index);
  del(src);
}

static void test_dtypes(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  AtenTensorHandle src16 = t2(F16, 2, 8, 8192), out16 = t2(F16, 4, 8, 1024);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, c.index, src16),
              "'src' has dtype float16 but 'self' has dtype float32");
  expect_fail(aoti_torch_cuda_scatter_value_out(out16, c.self, 0, c.index, 1.0),
              "'out' has dtype float16 but 'self' has dtype float32");
  AtenTensorHandle fidx = t2(F32, 2, 8, 4096), i8idx = t2(I8, 2, 8, 4096);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, fidx, c.src),
              "aoti_torch_cuda_scatter_src_out: 'index' has dtype float32; "
              "expected int64 or int32");
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 0, i8idx,
                                                     c.src, "amax", 1),
              "'index' has dtype int8; expected int64 or int32");
  del(src16);
  del(out16);
  del(fidx);
  del(i8idx);
  free_call(&c);
}

static void test_reduce_dtypes(void **state) {
  (void)state;
  call b = make_call(BOOL, I32);
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(b.out, b.self, 0, b.index,
                                                     b.src, "amax", 1),
              "reduce 'amax' does not support dtype bool (only 'sum' does)");
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(b.out, b.self, 0, b.index,
                                                     b.src, "mean", 0),
              "reduce 'mean' does not support dtype bool");
  call c = make_call(C64, I64);
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 0, c.index,
                                                     c.src, "sum", 1),
              "reduce 'sum' does not support dtype complex64 (supported: "
              "uint8, int8, int16, int32, int64, float16, bfloat16, float32, "
              "float64)");
  free_call(&b);
  free_call(&c);
}

static void test_dims(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 2, c.index, c.src),
              "aoti_torch_cuda_scatter_src_out: dim 2 is out of range for "
              "'self' with 2 dims (expected a dim in [-2, 1])");
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, -3, c.index, c.src),
              "dim -3 is out of range");
  const int64_t s3[3] = {2, 8, 1}, s1[1] = {16};
  AtenTensorHandle ix3 = fake_blob(g_mem + 4096, I64, CUDA, 0, 3, s3, NULL),
                   src1 = fake_blob(g_mem + 8192, F32, CUDA, 0, 1, s1, NULL);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, ix3, c.src),
              "'index' has 3 dims but 'self' has 2");
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, c.index, src1),
              "'index' has 2 dims but 'src' has 1");
  del(ix3);
  del(src1);
  free_call(&c);
}

static void test_sizes(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  AtenTensorHandle wide = t2(I64, 2, 9, 4096), tall = t2(I64, 3, 8, 4096),
                   long_ix = t2(I64, 6, 8, 4096);
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, wide, c.src),
              "'index' has size 9 in dim 1 but 'self' has size 8 (index "
              "[2, 9], self [4, 8]; only dim 0 may be larger)");
  /* dim 0 of index may exceed self's but not src's. */
  expect_fail(aoti_torch_cuda_scatter_src_out(c.out, c.self, 0, tall, c.src),
              "'index' has size 3 in dim 0 but 'src' has size 2 (index [3, "
              "8], src [2, 8])");
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(c.out, c.self, 1, long_ix,
                                                     c.src, "sum", 1),
              "'index' has size 6 in dim 0 but 'self' has size 4");
  AtenTensorHandle out_bad = t2(F32, 4, 7, 1024);
  expect_fail(aoti_torch_cuda_scatter_src_out(out_bad, c.self, 0, c.index,
                                              c.src),
              "'out' has shape [4, 7] but 'self' has shape [4, 8]");
  del(wide);
  del(tall);
  del(long_ix);
  del(out_bad);
  free_call(&c);
}

static void test_overlap(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  /* out over src's memory, over index's, half over self's. */
  AtenTensorHandle on_src = t2(F32, 4, 8, 8192 - 64),
                   on_index = t2(F32, 4, 8, 4096 + 8),
                   half_self = t2(F32, 4, 8, 64);
  expect_fail(aoti_torch_cuda_scatter_src_out(on_src, c.self, 0, c.index,
                                              c.src),
              "aoti_torch_cuda_scatter_src_out: 'out' and 'src' overlap in "
              "memory");
  expect_fail(aoti_torch_cuda_scatter_value_out(on_index, c.self, 0, c.index,
                                                2.0),
              "'out' and 'index' overlap in memory");
  expect_fail(aoti_torch_cuda_scatter_reduce_two_out(half_self, c.self, 0,
                                                     c.index, c.src, "prod",
                                                     1),
              "'out' partially overlaps 'self'");
  /* In place and src == self: ATen refuses too. */
  expect_fail(aoti_torch_cuda_scatter_src_out(c.self, c.self, 0, c.index,
                                              c.self),
              "'out' and 'src' overlap in memory");
  const int64_t s48[2] = {4, 8}, st0[2] = {0, 1}, stt[2] = {1, 2};
  AtenTensorHandle expanded = fake_blob(g_mem + 0, F32, CUDA, 0, 2, s48, st0),
                   strange = fake_blob(g_mem + 0, F32, CUDA, 0, 2, s48, stt);
  expect_fail(aoti_torch_cuda_scatter_src_out(expanded, expanded, 0, c.index,
                                              c.src),
              "'out' has internally overlapping memory");
  expect_fail(aoti_torch_cuda_scatter_src_out(strange, strange, 0, c.index,
                                              c.src),
              "'out' has internally overlapping memory");
  del(on_src);
  del(on_index);
  del(half_self);
  del(expanded);
  del(strange);
  free_call(&c);
}

/* In place with an empty index: nothing to do, so no CUDA call at all. */
static void test_empty_index_in_place(void **state) {
  (void)state;
  call c = make_call(F32, I64);
  const int64_t s08[2] = {0, 8};
  /* ATen checks neither an empty index's dtype nor its shape. */
  AtenTensorHandle empty = fake_blob(g_mem + 4096, F32, CUDA, 0, 2, s08, NULL);
  expect_ok(aoti_torch_cuda_scatter_src_out(c.self, c.self, 0, empty, c.src));
  expect_ok(aoti_torch_cuda_scatter_reduce_two_out(c.self, c.self, 1, empty,
                                                   c.src, "mean", 0));
  expect_ok(aoti_torch_cuda_scatter_value_out(c.self, c.self, -1, empty, 3.5));
  /* A second handle on the same view counts as in place. */
  AtenTensorHandle alias = t2(F32, 4, 8, 0);
  expect_ok(aoti_torch_scatter_out(alias, c.self, 0, empty, c.src));
  const int64_t s0[1] = {0};
  AtenTensorHandle scalar = fake_blob(g_mem + 0, F32, CUDA, 0, 0, NULL, NULL),
                   ix0 = fake_blob(g_mem + 4096, I64, CUDA, 0, 1, s0, NULL);
  expect_ok(aoti_torch_cuda_scatter_value_out(scalar, scalar, -1, ix0, 1.0));
  expect_ok(aoti_torch_cuda_scatter_value_out(scalar, scalar, 0, ix0, 1.0));
  expect_fail(aoti_torch_cuda_scatter_value_out(scalar, scalar, 1, ix0, 1.0),
              "dim 1 is out of range for 'self' with 0 dims (expected a dim "
              "in [-1, 0])");
  del(empty);
  del(alias);
  del(scalar);
  del(ix0);
  free_call(&c);
}

static void value_case(int32_t dtype, double v, int ok) {
  const int64_t s0[1] = {0}, s4[1] = {4};
  AtenTensorHandle self = fake_blob(g_mem + 0, dtype, CUDA, 0, 1, s4, NULL),
                   ix = fake_blob(g_mem + 4096, I64, CUDA, 0, 1, s0, NULL);
  AOTITorchError err = aoti_torch_cuda_scatter_value_out(self, self, 0, ix, v);
  if (ok)
    expect_ok(err);
  else
    expect_fail(err, "cannot be converted to dtype");
  del(self);
  del(ix);
}

static void test_value_conversion(void **state) {
  (void)state;
  value_case(I8, 127.0, 1);
  value_case(I8, -128.0, 1);
  value_case(I8, -127.9, 1); /* truncates, like static_cast */
  value_case(I8, 127.9, 0);  /* c10 compares before truncating */
  value_case(I8, 128.0, 0);
  value_case(I8, NAN, 0);
  value_case(U8, 255.0, 1);
  value_case(U8, -1.0, 0);
  value_case(I64, -9223372036854775808.0, 1);
  value_case(F16, 65504.0, 1);
  value_case(F16, 65505.0, 0);
  value_case(F16, INFINITY, 1);
  value_case(F16, NAN, 1);
  value_case(BF16, 3e38, 1);
  value_case(BF16, 3.5e38, 0);
  value_case(F32, 1e39, 0);
  value_case(F32, -INFINITY, 1);
  value_case(F64, 1e300, 1);
  value_case(BOOL, NAN, 1);
  const int64_t s0[1] = {0}, s4[1] = {4};
  AtenTensorHandle self = fake_blob(g_mem + 0, I32, CUDA, 0, 1, s4, NULL),
                   ix = fake_blob(g_mem + 4096, I64, CUDA, 0, 1, s0, NULL);
  expect_fail(aoti_torch_cuda_scatter_value_out(self, self, 0, ix, 3e9),
              "aoti_torch_cuda_scatter_value_out: value 3000000000 cannot be "
              "converted to dtype int32 without overflow");
  del(self);
  del(ix);
}

/* ---- scatter_math.h ---- */

static void test_half_round_trip_and_ties(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000u; h++) {
    float f = aotrun_sm_half_to_float((uint16_t)h);
    uint32_t mag = h & 0x7fffu;
    if (mag > 0x7c00u) { /* NaN stays NaN */
      assert_true(isnan(f));
      assert_true((aotrun_sm_float_to_half(f) & 0x7fffu) > 0x7c00u);
      continue;
    }
    if (mag < 0x400u) { /* subnormal: man * 2^-24 exactly */
      double want = ldexp((double)mag, -24) * ((h & 0x8000u) ? -1 : 1);
      assert_true((double)f == want);
    }
    assert_int_equal(aotrun_sm_float_to_half(f), h);
    if (mag >= 0x7bffu) continue; /* no finite successor */
    /* Midpoint to the next magnitude: ties go to the even one. */
    float g = aotrun_sm_half_to_float((uint16_t)(h + 1));
    float mid = (float)(((double)f + (double)g) / 2);
    uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
    assert_int_equal(aotrun_sm_float_to_half(mid), even);
    assert_int_equal(aotrun_sm_float_to_half(nextafterf(mid, 0.0f)), h);
    float away = g > 0 ? INFINITY : -INFINITY;
    assert_int_equal(aotrun_sm_float_to_half(nextafterf(mid, away)),
                     (uint16_t)(h + 1));
  }
  assert_int_equal(aotrun_sm_float_to_half(65520.0f), 0x7c00u); /* to inf */
  assert_int_equal(aotrun_sm_float_to_half(65519.996f), 0x7bffu);
  assert_int_equal(aotrun_sm_float_to_half(1e-8f), 0); /* below 2^-25 */
  assert_int_equal(aotrun_sm_float_to_half(-0.0f), 0x8000u);
}

static void test_bf16_rounding(void **state) {
  (void)state;
  for (uint32_t b = 0; b < 0x7f7fu; b++) {
    float f = aotrun_sm_bf16_to_float((uint16_t)b);
    assert_int_equal(aotrun_sm_float_to_bf16(f), b);
    float g = aotrun_sm_bf16_to_float((uint16_t)(b + 1));
    float mid = (float)(((double)f + (double)g) / 2);
    assert_int_equal(aotrun_sm_float_to_bf16(mid), (b & 1u) ? b + 1 : b);
    assert_int_equal(aotrun_sm_float_to_bf16(nextafterf(mid, INFINITY)), b + 1);
  }
  assert_int_equal(aotrun_sm_float_to_bf16(NAN), 0x7fc0u);
  /* prod rounds every step: 300 * 300 overflows float16 to inf. */
  float p = aotrun_sm_round_float(300.0f * 300.0f, AOTRUN_SM_F16);
  assert_true(isinf(p));
  assert_true(aotrun_sm_round_float(257.0f, AOTRUN_SM_BF16) == 256.0f);
}

static uint64_t f32b(float f) { return aotrun_sm_f32_bits(f); }

/* values[i] strictly ascending: amax prefers later ones, amin earlier. */
static void expect_ascending(const uint64_t *values, int n, int32_t dtype) {
  for (int i = 0; i + 1 < n; i++) {
    aotrun_sm_rank lo = aotrun_sm_extreme_rank(values[i], dtype, 0),
                   hi = aotrun_sm_extreme_rank(values[i + 1], dtype, 0);
    if (!aotrun_sm_rank_greater(hi, lo) || aotrun_sm_rank_greater(lo, hi))
      fail_msg("dtype %d: amax order wrong at %d", (int)dtype, i);
    lo = aotrun_sm_extreme_rank(values[i], dtype, 1);
    hi = aotrun_sm_extreme_rank(values[i + 1], dtype, 1);
    if (!aotrun_sm_rank_greater(lo, hi))
      fail_msg("dtype %d: amin order wrong at %d", (int)dtype, i);
  }
  /* The identity is never preferred over a value. */
  for (int is_min = 0; is_min < 2; is_min++) {
    aotrun_sm_rank id = aotrun_sm_extreme_rank(
        aotrun_sm_extreme_identity(dtype, is_min), dtype, is_min);
    for (int i = 0; i < n; i++)
      assert_false(aotrun_sm_rank_greater(
          id, aotrun_sm_extreme_rank(values[i], dtype, is_min)));
  }
}

static void test_extreme_order(void **state) {
  (void)state;
  const uint64_t f32[] = {f32b(-INFINITY), f32b(-1e30f), f32b(-1.0f),
                          f32b(-1e-40f),   f32b(-0.0f),  f32b(0.0f),
                          f32b(1e-40f),    f32b(1.0f),   f32b(1e30f),
                          f32b(INFINITY)};
  expect_ascending(f32, 10, AOTRUN_SM_F32);
  const uint64_t f16[] = {0xfc00, 0xfbff, 0xbc00, 0x8001, 0x8000,
                          0x0000, 0x0001, 0x3c00, 0x7bff, 0x7c00};
  expect_ascending(f16, 10, AOTRUN_SM_F16);
  expect_ascending(f16, 10, AOTRUN_SM_BF16); /* same bit layout of order */
  const uint64_t f64[] = {0xfff0000000000000u, 0xbff0000000000000u,
                          0x8000000000000000u, 0, 1, 0x3ff0000000000000u,
                          0x7ff0000000000000u};
  expect_ascending(f64, 7, AOTRUN_SM_F64);
  const uint64_t i8[] = {0x80, 0xff, 0, 1, 0x7f};
  expect_ascending(i8, 5, AOTRUN_SM_I8);
  const uint64_t u8[] = {0, 1, 0x80, 0xff};
  expect_ascending(u8, 4, AOTRUN_SM_U8);
  const uint64_t i16[] = {0x8000, 0xffff, 0, 0x7fff};
  expect_ascending(i16, 4, AOTRUN_SM_I16);
  const uint64_t i32[] = {0x80000000u, 0xffffffffu, 0, 0x7fffffffu};
  expect_ascending(i32, 4, AOTRUN_SM_I32);
  const uint64_t i64[] = {0x8000000000000000u, ~(uint64_t)0, 0, 1,
                          0x7fffffffffffffffu};
  expect_ascending(i64, 5, AOTRUN_SM_I64);
  /* NaN beats everything in both directions; larger bits among NaNs. */
  const uint64_t nans[] = {0x7fc00000u, 0x7fffffffu, 0xffc00000u};
  for (int is_min = 0; is_min < 2; is_min++) {
    for (int i = 0; i < 3; i++) {
      aotrun_sm_rank n = aotrun_sm_extreme_rank(nans[i], AOTRUN_SM_F32, is_min);
      for (int j = 0; j < 10; j++)
        assert_true(aotrun_sm_rank_greater(
            n, aotrun_sm_extreme_rank(f32[j], AOTRUN_SM_F32, is_min)));
      if (i > 0)
        assert_true(aotrun_sm_rank_greater(
            n, aotrun_sm_extreme_rank(nans[i - 1], AOTRUN_SM_F32, is_min)));
    }
  }
  assert_true(aotrun_sm_extreme_rank(0xfe00, AOTRUN_SM_F16, 0).nan);
  assert_false(aotrun_sm_extreme_rank(0x7c00, AOTRUN_SM_F16, 0).nan);
  assert_true(aotrun_sm_extreme_rank(0x7f81, AOTRUN_SM_BF16, 1).nan);
  assert_true(aotrun_sm_extreme_rank(0xfff8000000000000u, AOTRUN_SM_F64, 0).nan);
}

static void test_mean_counts(void **state) {
  (void)state;
  assert_int_equal(aotrun_sm_int_count(128, AOTRUN_SM_I8), -128);
  assert_int_equal(aotrun_sm_int_count(256, AOTRUN_SM_I8), 1); /* 0 -> 1 */
  assert_int_equal(aotrun_sm_int_count(255, AOTRUN_SM_U8), 255);
  assert_int_equal(aotrun_sm_int_count(65536, AOTRUN_SM_I16), 1);
  assert_int_equal(aotrun_sm_int_count(5, AOTRUN_SM_I64), 5);
  assert_true(aotrun_sm_float_count(5000, AOTRUN_SM_F16) == 2048.0);
  assert_true(aotrun_sm_float_count(300, AOTRUN_SM_BF16) == 256.0);
  assert_true(aotrun_sm_float_count(255, AOTRUN_SM_BF16) == 255.0);
  assert_true(aotrun_sm_float_count((int64_t)1 << 25, AOTRUN_SM_F32) ==
              16777216.0);
  assert_true(aotrun_sm_float_count(0, AOTRUN_SM_F32) == 1.0);
  /* 128 int8 ones: the sum wraps to -128 and so does the count: 1. */
  int64_t s = aotrun_sm_int_wrap(128, AOTRUN_SM_I8);
  assert_int_equal(
      aotrun_sm_floor_div(s, aotrun_sm_int_count(128, AOTRUN_SM_I8),
                          AOTRUN_SM_I8),
      1);
}

static void test_floor_div(void **state) {
  (void)state;
  assert_int_equal(aotrun_sm_floor_div(-5, 3, AOTRUN_SM_I64), -2);
  assert_int_equal(aotrun_sm_floor_div(5, -3, AOTRUN_SM_I64), -2);
  assert_int_equal(aotrun_sm_floor_div(-6, 3, AOTRUN_SM_I64), -2);
  assert_int_equal(aotrun_sm_floor_div(-7, 2, AOTRUN_SM_I32), -4);
  assert_int_equal(aotrun_sm_floor_div(7, 2, AOTRUN_SM_I32), 3);
  assert_int_equal(aotrun_sm_floor_div(0, -3, AOTRUN_SM_I32), 0);
  assert_int_equal(aotrun_sm_floor_div(-128, -1, AOTRUN_SM_I8), -128);
  assert_true(aotrun_sm_floor_div(INT64_MIN, -1, AOTRUN_SM_I64) == INT64_MIN);
  assert_int_equal(aotrun_sm_floor_div(200, 3, AOTRUN_SM_U8), 66);
  assert_int_equal(aotrun_sm_int_value(0xff, AOTRUN_SM_I8), -1);
  assert_int_equal(aotrun_sm_int_value(0xff, AOTRUN_SM_U8), 255);
  assert_int_equal(aotrun_sm_int_value(0x8000, AOTRUN_SM_I16), -32768);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_args),
      cmocka_unit_test(test_reduce_names),
      cmocka_unit_test(test_cpu_tensors),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_reduce_dtypes),
      cmocka_unit_test(test_dims),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_overlap),
      cmocka_unit_test(test_empty_index_in_place),
      cmocka_unit_test(test_value_conversion),
      cmocka_unit_test(test_half_round_trip_and_ties),
      cmocka_unit_test(test_bf16_rounding),
      cmocka_unit_test(test_extreme_order),
      cmocka_unit_test(test_mean_counts),
      cmocka_unit_test(test_floor_div),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
