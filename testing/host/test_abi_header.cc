// test_abi_header.cc: the public plugin header compiles as C++17 (g++
// -std=c++17 -Wall -Wextra -Werror -pedantic, run by test_abi_header.sh)
// and its macros work there: AOTRUN_TABLE_HAS in both spellings,
// AOTRUN_TABLE_CAN, the size constants and the strides rule.
#include "plugin_api/aotrun_plugin.h"

#include <cstdio>

static int failures = 0;
#define CHECK(c)                                               \
  do {                                                         \
    if (!(c)) {                                                \
      std::printf("FAILED: %s (line %d)\n", #c, __LINE__);     \
      failures++;                                              \
    }                                                          \
  } while (0)

static const char *name() { return "cxx"; }

int main() {
  aotrun_backend_api t = aotrun_backend_api();
  t.abi_version = AOTRUN_MAKE_VERSION(1, 0);
  t.struct_size = static_cast<uint32_t>(AOTRUN_BACKEND_API_SIZE_1_0);
  t.get_name = name;
  CHECK(AOTRUN_TABLE_HAS(&t, last_error));
  CHECK(AOTRUN_TABLE_HAS(&t, aotrun_backend_api, last_error));
  CHECK(!AOTRUN_TABLE_HAS(&t, get_extension));
  CHECK(AOTRUN_TABLE_CAN(&t, get_name));
  CHECK(!AOTRUN_TABLE_CAN(&t, last_error)); /* NULL */
  t.struct_size = static_cast<uint32_t>(AOTRUN_BACKEND_API_SIZE_1_1);
  CHECK(AOTRUN_TABLE_HAS(&t, get_extension));
  CHECK(sizeof(aotrun_backend_api) == AOTRUN_BACKEND_API_SIZE);
  int64_t shape[2] = {2, 3}, row[2] = {3, 1}, col[2] = {1, 2};
  CHECK(aotrun_strides_are_row_major(2, shape, nullptr));
  CHECK(aotrun_strides_are_row_major(2, shape, row));
  CHECK(!aotrun_strides_are_row_major(2, shape, col));
  CHECK(AOTRUN_DL_BOOL == 6u);
  std::printf("C++ header checks: %d failed\n", failures);
  return failures ? 1 : 0;
}
