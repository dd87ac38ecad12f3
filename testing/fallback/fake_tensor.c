/* fake_tensor.c: see fake_tensor.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "testing/fallback/fake_tensor.h"

static _Alignas(16) char g_bytes[FAKE_TENSOR_BYTES]; /* never read */

AtenTensorHandle fake_blob(void *data, int32_t dtype, int32_t dev_type,
                           int32_t dev, int64_t ndim, const int64_t *sizes,
                           const int64_t *strides) {
  int64_t st[16];
  int64_t s = 1;
  assert_true(ndim >= 0 && ndim <= 16);
  for (int64_t d = ndim - 1; d >= 0; d--) {
    st[d] = strides ? strides[d] : s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
  AtenTensorHandle h = NULL;
  assert_int_equal(aoti_torch_create_tensor_from_blob(
                       data, ndim, sizes, st, 0, dtype, dev_type, dev, &h),
                   AOTI_TORCH_SUCCESS);
  return h;
}

AtenTensorHandle fake_strided(int32_t dtype, int32_t dev_type, int64_t ndim,
                              const int64_t *sizes, const int64_t *strides) {
  return fake_blob(g_bytes, dtype, dev_type, 0, ndim, sizes, strides);
}

AtenTensorHandle fake(int32_t dtype, int32_t dev_type, int64_t ndim,
                      const int64_t *sizes) {
  return fake_strided(dtype, dev_type, ndim, sizes, NULL);
}

AtenTensorHandle fake_sentinel(void) { return (AtenTensorHandle)g_bytes; }

void expect_fail(AOTITorchError err, const char *want) {
  assert_int_equal(err, AOTI_TORCH_FAILURE);
  const char *msg = aotrun_shim_last_error();
  if (strstr(msg, want) == NULL)
    fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

void expect_ok(AOTITorchError err) {
  if (err != AOTI_TORCH_SUCCESS)
    fail_msg("unexpected failure: %s", aotrun_shim_last_error());
}
