/* test_warm_up_plan.c: which one-time library work a method's init does
 * ahead, from its manifest's aoti_torch_imports (backend_cuda/warm_up_plan.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend_cuda/warm_up_plan.h"
#include "shim_lib/aotrun_shim.h"

static uint32_t plan(const char *json, const char *method) {
  return aotrun_warm_up_plan(json, strlen(json), method);
}

static void test_bits_of_imports(void **state) {
  (void)state;
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda_mm_out"),
                   AOTRUN_SHIM_WARM_GEMM);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda_addmm_out"),
                   AOTRUN_SHIM_WARM_GEMM);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda_bmm_out"),
                   AOTRUN_SHIM_WARM_GEMM);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda__addmm_activation"),
                   AOTRUN_SHIM_WARM_GEMM);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda_convolution"),
                   AOTRUN_SHIM_WARM_CONV);
  /* Our own kernels or no library work: nothing. */
  assert_int_equal(
      aotrun_warm_up_bits_of("aoti_torch_cuda__scaled_dot_product_flash_attention"),
      0);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cuda_index_Tensor"), 0);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_empty_strided"), 0);
  assert_int_equal(aotrun_warm_up_bits_of("aoti_torch_cpu_mm_out"), 0);
  assert_int_equal(aotrun_warm_up_bits_of(NULL), 0);
}

static void test_plan_of_a_method(void **state) {
  (void)state;
  const char *json =
      "{\"methods\": {"
      "\"forward\": {\"aoti_torch_imports\": [\"aoti_torch_empty_strided\","
      " \"aoti_torch_cuda_addmm_out\", \"aoti_torch_cuda_convolution\"]},"
      "\"decode\": {\"aoti_torch_imports\": [\"aoti_torch_cuda_topk\"]},"
      "\"old\": {\"library\": \"old.so\"}}}";
  assert_int_equal(plan(json, "forward"), AOTRUN_SHIM_WARM_ALLOC |
                                              AOTRUN_SHIM_WARM_GEMM |
                                              AOTRUN_SHIM_WARM_CONV);
  assert_int_equal(plan(json, "decode"), AOTRUN_SHIM_WARM_ALLOC);
  /* No list (hand-written or older manifest): nothing guessed. */
  assert_int_equal(plan(json, "old"), AOTRUN_SHIM_WARM_ALLOC);
  assert_int_equal(plan(json, "missing"), AOTRUN_SHIM_WARM_ALLOC);
  assert_int_equal(plan("not json", "forward"), AOTRUN_SHIM_WARM_ALLOC);
  assert_int_equal(plan("{\"methods\": {\"forward\": {\"aoti_torch_imports\": "
                        "[1, null, \"aoti_torch_cuda_mm_out\"]}}}",
                        "forward"),
                   AOTRUN_SHIM_WARM_ALLOC | AOTRUN_SHIM_WARM_GEMM);
  assert_int_equal(aotrun_warm_up_plan(NULL, 0, "forward"),
                   AOTRUN_SHIM_WARM_ALLOC);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bits_of_imports),
      cmocka_unit_test(test_plan_of_a_method),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
