/* test_kernel_options.c: which implementation the fallback ops run where
 * two exist (shim_lib/fallback/kernel_options.h): the defaults, the exact
 * values that pick the older kernels, the convolution log switch, TF32
 * for float32 convolutions, the choice read once (a later setenv
 * changes nothing), and aotrun_shim_read_kernel_options reading it again.
 * No GPU needed: nothing here calls CUDA. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/kernel_options.h"

static const char *const VARS[] = {"AOTRUN_ATTN_TC", "AOTRUN_ATTN_F32",
                                   "AOTRUN_CONV_API", "AOTRUN_GEMM_LT",
                                   "AOTRUN_BADDBMM_BIAS", "AOTRUN_CONV_LOG",
                                   "AOTRUN_CONV_TF32"};

static void clear_env(void) {
  for (size_t i = 0; i < sizeof VARS / sizeof *VARS; i++) unsetenv(VARS[i]);
}

static int reset(void **state) {
  (void)state;
  clear_env();
  aotrun_shim_read_kernel_options();
  return 0;
}

/* wide, tiled, graph, baddbmm epilogue: the four choices as one number
 * for messages. */
static int choice(void) {
  return aotrun_fb_attn_tc_wide_enabled() * 1000 +
         aotrun_fb_attn_f32_tiled_enabled() * 100 +
         aotrun_fb_conv_graph_enabled() * 10 +
         aotrun_fb_baddbmm_bias_epilogue_enabled();
}

static void test_defaults_are_the_faster_kernels(void **state) {
  (void)state;
  assert_int_equal(choice(), 1111);
}

static void test_exact_values_pick_the_older_kernels(void **state) {
  (void)state;
  setenv("AOTRUN_ATTN_TC", "narrow", 1);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 111);
  setenv("AOTRUN_ATTN_F32", "simt", 1);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 11);
  setenv("AOTRUN_CONV_API", "legacy", 1);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 1);
  setenv("AOTRUN_BADDBMM_BIAS", "copy", 1);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 0);
}

static void test_other_values_keep_the_defaults(void **state) {
  (void)state;
  /* Case matters; the old opt-in spellings select what is now default. */
  const char *tc[] = {"NARROW", "", "wide", "default"};
  const char *f32[] = {"SIMT", "", "tiled", "default"};
  const char *conv[] = {"LEGACY", "", "graph", "default"};
  const char *bias[] = {"COPY", "", "epilogue", "default"};
  for (int i = 0; i < 4; i++) {
    setenv("AOTRUN_ATTN_TC", tc[i], 1);
    setenv("AOTRUN_ATTN_F32", f32[i], 1);
    setenv("AOTRUN_CONV_API", conv[i], 1);
    setenv("AOTRUN_BADDBMM_BIAS", bias[i], 1);
    aotrun_shim_read_kernel_options();
    assert_int_equal(choice(), 1111);
  }
}

static void test_gemm_lt_is_opt_in(void **state) {
  (void)state;
  assert_false(aotrun_fb_plain_lt_enabled());
  const char *off[] = {"0", "", "true", "on", "11"};
  for (int i = 0; i < 5; i++) {
    setenv("AOTRUN_GEMM_LT", off[i], 1);
    aotrun_shim_read_kernel_options();
    assert_false(aotrun_fb_plain_lt_enabled());
  }
  setenv("AOTRUN_GEMM_LT", "1", 1);
  aotrun_shim_read_kernel_options();
  assert_true(aotrun_fb_plain_lt_enabled());
  assert_int_equal(choice(), 1111); /* the others untouched */
  unsetenv("AOTRUN_GEMM_LT");
  assert_true(aotrun_fb_plain_lt_enabled()); /* read once */
}

/* A diagnostic, not a kernel choice: any value but empty or "0" is on. */
static void test_conv_log_is_opt_in(void **state) {
  (void)state;
  assert_false(aotrun_fb_conv_log_enabled());
  const char *off[] = {"0", ""};
  for (int i = 0; i < 2; i++) {
    setenv("AOTRUN_CONV_LOG", off[i], 1);
    aotrun_shim_read_kernel_options();
    assert_false(aotrun_fb_conv_log_enabled());
  }
  const char *on[] = {"1", "yes", "00"};
  for (int i = 0; i < 3; i++) {
    setenv("AOTRUN_CONV_LOG", on[i], 1);
    aotrun_shim_read_kernel_options();
    assert_true(aotrun_fb_conv_log_enabled());
    assert_int_equal(choice(), 1111); /* the kernels untouched */
  }
  unsetenv("AOTRUN_CONV_LOG");
  assert_true(aotrun_fb_conv_log_enabled()); /* read once */
}

/* As torch 2.11's default (cudnn.allow_tf32 True): on unless turned off. */
static void test_conv_tf32_is_the_default(void **state) {
  (void)state;
  assert_true(aotrun_fb_conv_tf32_enabled());
  const char *on[] = {"1", "", "true", "00", "OFF"};
  for (int i = 0; i < 5; i++) {
    setenv("AOTRUN_CONV_TF32", on[i], 1);
    aotrun_shim_read_kernel_options();
    assert_true(aotrun_fb_conv_tf32_enabled());
  }
  const char *off[] = {"false", "off", "no", "0"};
  for (int i = 0; i < 4; i++) {
    setenv("AOTRUN_CONV_TF32", off[i], 1);
    aotrun_shim_read_kernel_options();
    assert_false(aotrun_fb_conv_tf32_enabled());
  }
  assert_int_equal(choice(), 1111); /* the kernels untouched */
  unsetenv("AOTRUN_CONV_TF32");
  assert_false(aotrun_fb_conv_tf32_enabled()); /* read once */
}

static void test_read_once_until_asked_again(void **state) {
  (void)state;
  assert_int_equal(choice(), 1111);
  /* No lookup per call: a change is seen only after the re-read. */
  setenv("AOTRUN_ATTN_TC", "narrow", 1);
  setenv("AOTRUN_CONV_API", "legacy", 1);
  assert_int_equal(choice(), 1111);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 101);
  clear_env();
  assert_int_equal(choice(), 101);
  aotrun_shim_read_kernel_options();
  assert_int_equal(choice(), 1111);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_defaults_are_the_faster_kernels, reset),
      cmocka_unit_test_setup(test_exact_values_pick_the_older_kernels, reset),
      cmocka_unit_test_setup(test_other_values_keep_the_defaults, reset),
      cmocka_unit_test_setup(test_gemm_lt_is_opt_in, reset),
      cmocka_unit_test_setup(test_conv_log_is_opt_in, reset),
      cmocka_unit_test_setup(test_conv_tf32_is_the_default, reset),
      cmocka_unit_test_setup(test_read_once_until_asked_again, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
