/* test_conv_transposed.c: a transposed convolution mapped onto cuDNN's
 * backward-data convolution without a GPU: per spatial dim, the result
 * size against PyTorch's (a table made with torch 2.11's
 * aten.convolution on meta tensors), cuDNN's rule that dx is the exact
 * forward input of dy, and the values: the window of cuDNN's dx (computed
 * here as the adjoint of cuDNN's forward convolution) equals the
 * transposed convolution as ATen defines it. Then the plan of
 * aoti_torch_cuda_convolution: descriptor dims, padding, window, cache
 * key. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/conv.h"
#include "shim_lib/fallback/fallback_abi.h"

typedef struct tcase {
  int64_t in, k, s, p, d, op, torch_out;
} tcase;

/* torch.ops.aten.convolution(x, w, None, [s], [p], [d], True, [op], 1)
 * on meta tensors (1, 1, in) and (1, 1, k): the last dim of the result. */
static const tcase CASES[] = {
    {5, 3, 1, 0, 2, 1, 10},  /* 2d_dilation_op (the 8 failing GPU tests) */
    {7, 3, 2, 1, 1, 1, 14},  /* 2d_s2_op1 H */
    {9, 3, 2, 1, 1, 1, 18},  /* 2d_s2_op1 W */
    {6, 4, 2, 1, 1, 0, 12},  /* 2d_groups */
    {11, 4, 3, 1, 1, 2, 34}, /* 1d */
    {3, 2, 2, 0, 1, 1, 7},   /* 3d D */
    {4, 3, 1, 1, 1, 0, 4},   /* 3d H */
    {5, 3, 2, 1, 1, 1, 10},  /* 3d W */
    {5, 3, 1, 2, 3, 2, 9},   /* op 2 >= stride 1, padding 2 >= op */
    {6, 3, 1, 1, 3, 2, 12},  /* op 2 > padding 1: zeros at the end */
    {4, 2, 2, 0, 4, 3, 14},  /* op 3 >= stride 2, below dilation 4 */
    {1, 1, 1, 1, 3, 2, 1},   /* the window lies past dx: all zeros */
    {3, 5, 2, 3, 3, 2, 13},  /* op 2 == stride 2 */
    {8, 3, 1, 0, 2, 0, 12},  /* dilation, no output_padding */
    {2, 3, 3, 2, 2, 1, 5},   /* op 1 < stride 3 */
};
#define NCASES (sizeof CASES / sizeof CASES[0])

static void test_dims_match_pytorch_and_cudnn(void **state) {
  (void)state;
  for (size_t n = 0; n < NCASES; n++) {
    const tcase *t = &CASES[n];
    aotrun_fb_conv_tdim d;
    aotrun_fb_conv_transposed_dim(t->in, t->k, t->s, t->p, t->d, t->op, &d);
    int64_t dk = t->d * (t->k - 1) + 1;
    if (d.out != t->torch_out)
      fail_msg("case %zu: size %lld, torch %lld", n, (long long)d.out,
               (long long)t->torch_out);
    /* cuDNN's forward shape rule on (dx, pad) gives back dy = input. */
    assert_true(d.dx + 2 * d.pad >= dk);
    if ((d.dx + 2 * d.pad - dk) / t->s + 1 != t->in)
      fail_msg("case %zu: cuDNN's forward of dx %lld pad %lld is %lld, not "
               "the input's %lld",
               n, (long long)d.dx, (long long)d.pad,
               (long long)((d.dx + 2 * d.pad - dk) / t->s + 1),
               (long long)t->in);
    if (t->op < t->s) {
      /* cuDNN takes it as it is: no scratch, no window. */
      assert_int_equal(d.dx, d.out);
      assert_int_equal(d.pad, t->p);
      assert_int_equal(d.offset, 0);
    } else {
      assert_int_equal(d.pad, 0);
      assert_int_equal(d.offset, t->p);
    }
  }
}

#define MAXN 64

/* The values: ATen's transposed convolution (every input scattered
 * through the kernel, padding cropped from both ends, output_padding
 * added at the end) against the window of dx, where dx is cuDNN's
 * backward data: the adjoint of the forward convolution
 * y[i] = sum_j x[i * s - pad + j * d] w[j]. Small integers: exact. */
static void test_window_values_equal_transposed(void **state) {
  (void)state;
  for (size_t n = 0; n < NCASES; n++) {
    const tcase *t = &CASES[n];
    aotrun_fb_conv_tdim d;
    aotrun_fb_conv_transposed_dim(t->in, t->k, t->s, t->p, t->d, t->op, &d);
    assert_true(d.out <= MAXN && d.dx <= MAXN);
    int64_t x[MAXN], w[MAXN], want[MAXN] = {0}, dx[MAXN] = {0};
    for (int64_t i = 0; i < t->in; i++) x[i] = (i * 7 + 3) % 11 - 5;
    for (int64_t j = 0; j < t->k; j++) w[j] = (j * 5 + 1) % 7 - 3;
    for (int64_t i = 0; i < t->in; i++)
      for (int64_t j = 0; j < t->k; j++) {
        int64_t o = i * t->s - t->p + j * t->d;
        if (o >= 0 && o < d.out) want[o] += x[i] * w[j];
      }
    int64_t dk = t->d * (t->k - 1) + 1;
    int64_t fwd_out = (d.dx + 2 * d.pad - dk) / t->s + 1;
    assert_int_equal(fwd_out, t->in);
    for (int64_t i = 0; i < fwd_out; i++)
      for (int64_t j = 0; j < t->k; j++) {
        int64_t pos = i * t->s - d.pad + j * t->d;
        if (pos >= 0 && pos < d.dx) dx[pos] += x[i] * w[j];
      }
    for (int64_t o = 0; o < d.out; o++) {
      int64_t got = o + d.offset < d.dx ? dx[o + d.offset] : 0;
      if (got != want[o])
        fail_msg("case %zu: result[%lld] = %lld, transposed conv %lld", n,
                 (long long)o, (long long)got, (long long)want[o]);
    }
  }
}

/* ---- the plan of aoti_torch_cuda_convolution ---- */

enum { F16 = 5, F32 = 6, CUDA = 1 };
static const char OP[] = "aoti_torch_cuda_convolution";
static char g_dummy[64];

static AtenTensorHandle fake(int32_t dtype, int64_t ndim, const int64_t *sizes,
                             int channels_last) {
  int64_t st[5];
  aotrun_fb_format_strides(sizes, ndim, channels_last, st);
  if (ndim == 3) aotrun_fb_contiguous_strides(sizes, ndim, st);
  AtenTensorHandle h = NULL;
  assert_int_equal(aoti_torch_create_tensor_from_blob(g_dummy, ndim, sizes, st,
                                                      0, dtype, CUDA, 0, &h),
                   AOTI_TORCH_SUCCESS);
  return h;
}

static void plan(AtenTensorHandle x, AtenTensorHandle w, const int64_t *st,
                 const int64_t *pd, const int64_t *dl, const int64_t *op,
                 int64_t n, int64_t groups, aotrun_fb_conv *c) {
  assert_int_equal(aotrun_fb_conv_args(OP, x, w, NULL, st, n, pd, n, dl, n, 1,
                                       op, n, groups, c),
                   AOTI_TORCH_SUCCESS);
}

/* The GPU case that failed: (2, 4, 5, 5) transposed with a 3x3 kernel,
 * stride 1, padding 0, dilation 2, output_padding 1 -> 10x10. cuDNN gets
 * dx 9x9 with padding 0; the last row and column are zeros. */
static void test_plan_dilation_output_padding(void **state) {
  (void)state;
  aotrun_fb_conv c;
  AtenTensorHandle x = fake(F32, 4, (int64_t[]){2, 4, 5, 5}, 0),
                   w = fake(F32, 4, (int64_t[]){4, 4, 3, 3}, 0);
  plan(x, w, (int64_t[]){1, 1}, (int64_t[]){0, 0}, (int64_t[]){2, 2},
       (int64_t[]){1, 1}, 2, 1, &c);
  assert_int_equal(c.windowed, 1);
  const int64_t out[4] = {2, 4, 10, 10}, dx[4] = {2, 4, 9, 9},
                dxs[4] = {324, 81, 9, 1};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(c.out_sizes[i], out[i]);
    assert_int_equal(c.dx_sizes[i], dx[i]);
    assert_int_equal(c.dx_strides[i], dxs[i]);
  }
  for (int i = 0; i < 2; i++) {
    assert_int_equal(c.dx_pad[i], 0);
    assert_int_equal(c.dx_offset[i], 0);
    assert_int_equal(aotrun_fb_conv_window_extent(&c, i), 9);
  }
  /* The algorithm cache keys what cuDNN runs: dx and its padding. */
  aotrun_fb_conv_key key;
  aotrun_fb_conv_key_of(&c, 16, &key);
  assert_int_equal(key.out[2], 9);
  assert_int_equal(key.pad[0], 0);

  /* Stride 2 > output_padding 1 in H, stride 1 in W: W alone windowed,
   * padding 2 kept by cuDNN in H, dropped (offset 2) in W. */
  plan(x, w, (int64_t[]){2, 1}, (int64_t[]){2, 2}, (int64_t[]){2, 2},
       (int64_t[]){1, 1}, 2, 1, &c);
  assert_int_equal(c.windowed, 1);
  assert_int_equal(c.out_sizes[2], 4 * 2 - 4 + 5 + 1);
  assert_int_equal(c.dx_sizes[2], c.out_sizes[2]);
  assert_int_equal(c.dx_pad[0], 2);
  assert_int_equal(c.dx_offset[0], 0);
  assert_int_equal(c.out_sizes[3], 4 - 4 + 5 + 1);
  assert_int_equal(c.dx_sizes[3], 9);
  assert_int_equal(c.dx_pad[1], 0);
  assert_int_equal(c.dx_offset[1], 2);
  assert_int_equal(aotrun_fb_conv_window_extent(&c, 1), 6);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(w);
}

/* Output padding below the stride: no window, dx is the result. */
static void test_plan_not_windowed(void **state) {
  (void)state;
  aotrun_fb_conv c;
  AtenTensorHandle x = fake(F16, 4, (int64_t[]){2, 8, 7, 9}, 1),
                   w = fake(F16, 4, (int64_t[]){8, 6, 3, 3}, 0);
  plan(x, w, (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){1, 1},
       (int64_t[]){1, 1}, 2, 1, &c);
  assert_int_equal(c.windowed, 0);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(c.dx_sizes[i], c.out_sizes[i]);
    assert_int_equal(c.dx_strides[i], c.out_strides[i]);
  }
  assert_int_equal(c.dx_pad[0], 1);
  assert_int_equal(c.dx_pad[1], 1);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(w);
}

/* 1-D as 2-D (unit height) and channels-last scratch. */
static void test_plan_windowed_1d_and_channels_last(void **state) {
  (void)state;
  aotrun_fb_conv c;
  AtenTensorHandle x = fake(F32, 3, (int64_t[]){2, 4, 6}, 0),
                   w = fake(F32, 3, (int64_t[]){4, 3, 3}, 0);
  plan(x, w, (int64_t[]){1}, (int64_t[]){1}, (int64_t[]){3}, (int64_t[]){2},
       1, 1, &c);
  assert_int_equal(c.rd, 4);
  assert_int_equal(c.windowed, 1);
  assert_int_equal(c.ret_sizes[2], 12);
  assert_int_equal(c.dx_sizes[2], 1);
  assert_int_equal(c.dx_sizes[3], 5 + 7);
  assert_int_equal(c.dx_pad[0], 0);
  assert_int_equal(c.dx_offset[0], 0);
  assert_int_equal(c.dx_offset[1], 1);
  assert_int_equal(aotrun_fb_conv_window_extent(&c, 0), 1);
  assert_int_equal(aotrun_fb_conv_window_extent(&c, 1), 11);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(w);

  x = fake(F16, 4, (int64_t[]){1, 8, 5, 5}, 1);
  w = fake(F16, 4, (int64_t[]){8, 2, 3, 3}, 0);
  plan(x, w, (int64_t[]){1, 1}, (int64_t[]){0, 0}, (int64_t[]){2, 2},
       (int64_t[]){1, 1}, 2, 2, &c);
  assert_int_equal(c.channels_last, 1);
  assert_int_equal(c.dx_sizes[1], 4);
  /* NHWC strides of (1, 4, 9, 9). */
  assert_int_equal(c.dx_strides[1], 1);
  assert_int_equal(c.dx_strides[3], 4);
  assert_int_equal(c.dx_strides[2], 36);
  assert_int_equal(c.dx_strides[0], 324);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dims_match_pytorch_and_cudnn),
      cmocka_unit_test(test_window_values_equal_transposed),
      cmocka_unit_test(test_plan_dilation_output_padding),
      cmocka_unit_test(test_plan_not_windowed),
      cmocka_unit_test(test_plan_windowed_1d_and_channels_last),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
