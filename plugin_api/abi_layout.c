/*
 * abi_layout.c: the host's compile-time checks of the ABI. The member
 * offsets and table sizes of every released version are asserted in the
 * public header (aotrun_plugin.h), so plugin builds check them too; this
 * file adds what only the host relies on. Members are appended only: add an
 * assert for each new member or version, never edit the ones there.
 */
#include <stddef.h>

#include "plugin_api/abi_layout.h"

/* Every released minor has a size, and sizes only grow. */
_Static_assert(AOTRUN_BACKEND_API_SIZE_1_0 < AOTRUN_BACKEND_API_SIZE_1_1,
               "tables only grow");
_Static_assert(AOTRUN_ABI_VERSION_MINOR == 1,
               "a new minor: add its size to aotrun_backend_api_size_of_minor "
               "and AOTRUN_BACKEND_API_SIZE_1_<N> to the header");
_Static_assert(AOTRUN_BACKEND_API_SIZE ==
                   AOTRUN_BACKEND_API_SIZE_1_1,
               "this header's table is the newest minor's");
_Static_assert(AOTRUN_HOST_API_SIZE == AOTRUN_HOST_API_SIZE_1_0,
               "the host table did not grow in 1.1");

/* Status codes, versions and dtype codes are ABI values. */
_Static_assert(AOTRUN_ERR_VERSION_MISMATCH == 7 &&
                   AOTRUN_ERR_OUTPUT_TOO_SMALL == 8,
               "status codes are frozen");
_Static_assert(AOTRUN_ABI_VERSION_MAJOR == 1, "this file freezes major 1");
_Static_assert(AOTRUN_DL_BOOL == 6 && AOTRUN_DL_FLOAT8_E4M3FN == 10 &&
                   AOTRUN_DL_FLOAT8_E5M2 == 12,
               "DLPack dtype codes are frozen");
_Static_assert(AOTRUN_MAX_DIMS == 16 && AOTRUN_DYNAMIC_DIM == -1,
               "io_info constants are frozen");

/* Part of the host library so every host build runs these checks. */
int aotrun_abi_layout_checked(void);
int aotrun_abi_layout_checked(void) { return 1; }
