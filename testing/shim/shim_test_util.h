/* shim_test_util.h: assertions shared by the shim's CMocka tests. Include
 * after <cmocka.h>. */
#ifndef AOTRUN_SHIM_TEST_UTIL_H
#define AOTRUN_SHIM_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "shim_lib/aotrun_shim.h"

/* The call must succeed; on failure the shim's message is printed. */
#define ASSERT_OK(call)                                                  \
  do {                                                                   \
    AOTITorchError err_ = (call);                                        \
    if (err_ != AOTI_TORCH_SUCCESS)                                      \
      print_message("%s failed: %s\n", #call, aotrun_shim_last_error()); \
    assert_int_equal(err_, AOTI_TORCH_SUCCESS);                          \
  } while (0)

/* The call must fail and the message must contain every given piece. */
#define ASSERT_FAILS_WITH(call, ...)                                       \
  do {                                                                     \
    aotrun_shim_clear_error();                                             \
    assert_int_equal((call), AOTI_TORCH_FAILURE);                          \
    const char *pieces_[] = {__VA_ARGS__};                                 \
    for (size_t i_ = 0; i_ < sizeof pieces_ / sizeof pieces_[0]; i_++) {   \
      if (!strstr(aotrun_shim_last_error(), pieces_[i_]))                  \
        print_message("message \"%s\" lacks \"%s\"\n",                     \
                      aotrun_shim_last_error(), pieces_[i_]);              \
      assert_non_null(strstr(aotrun_shim_last_error(), pieces_[i_]));      \
    }                                                                      \
  } while (0)

/* A new contiguous CPU tensor of dtype with the given sizes. */
static inline AtenTensorHandle test_cpu_tensor(int32_t dtype, int64_t ndim,
                                               const int64_t *sizes) {
  int64_t strides[16], s = 1;
  for (int64_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= sizes[d];
  }
  AtenTensorHandle t = NULL;
  if (aoti_torch_empty_strided(ndim, sizes, strides, dtype, 0, 0, &t))
    print_message("empty_strided: %s\n", aotrun_shim_last_error());
  return t;
}

static inline void *test_data(AtenTensorHandle t) {
  void *p = NULL;
  aoti_torch_get_data_ptr(t, &p);
  return p;
}

#endif /* AOTRUN_SHIM_TEST_UTIL_H */
