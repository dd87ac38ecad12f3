/*
 * abi_layout.c: compile-time asserts that freeze the v1.0 layout of the ABI
 * tables. A change that moves a member breaks every plugin already built, so
 * it must fail the build here instead. Members are appended only: add an
 * assert for each new member, never edit the ones below.
 */
#include <stddef.h>

#include "plugin_api/abi_layout.h"

#define P sizeof(void *) /* every member after the header is a pointer */

/* aotrun_backend_api v1.0: two uint32 then ten function pointers. */
_Static_assert(offsetof(aotrun_backend_api, abi_version) == 0, "abi_version");
_Static_assert(offsetof(aotrun_backend_api, struct_size) == 4, "struct_size");
_Static_assert(offsetof(aotrun_backend_api, get_name) == 8, "get_name");
_Static_assert(offsetof(aotrun_backend_api, is_available) == 8 + 1 * P, "");
_Static_assert(offsetof(aotrun_backend_api, init) == 8 + 2 * P, "init");
_Static_assert(offsetof(aotrun_backend_api, execute) == 8 + 3 * P, "execute");
_Static_assert(offsetof(aotrun_backend_api, destroy) == 8 + 4 * P, "destroy");
_Static_assert(offsetof(aotrun_backend_api, set_option) == 8 + 5 * P, "");
_Static_assert(offsetof(aotrun_backend_api, get_option) == 8 + 6 * P, "");
_Static_assert(offsetof(aotrun_backend_api, get_num_io) == 8 + 7 * P, "");
_Static_assert(offsetof(aotrun_backend_api, get_io_info) == 8 + 8 * P, "");
_Static_assert(offsetof(aotrun_backend_api, last_error) == 8 + 9 * P, "");
_Static_assert(AOTRUN_BACKEND_API_V1_0_SIZE == 8 + 10 * P, "v1.0 size");
_Static_assert(sizeof(aotrun_backend_api) >= AOTRUN_BACKEND_API_V1_0_SIZE,
               "tables only grow");

/* aotrun_host_api v1.0: two uint32, ctx, then five function pointers. */
_Static_assert(offsetof(aotrun_host_api, abi_version) == 0, "abi_version");
_Static_assert(offsetof(aotrun_host_api, struct_size) == 4, "struct_size");
_Static_assert(offsetof(aotrun_host_api, ctx) == 8, "ctx");
_Static_assert(offsetof(aotrun_host_api, log) == 8 + 1 * P, "log");
_Static_assert(offsetof(aotrun_host_api, get_named_data) == 8 + 2 * P, "");
_Static_assert(offsetof(aotrun_host_api, release_named_data) == 8 + 3 * P,
               "");
_Static_assert(offsetof(aotrun_host_api, alloc) == 8 + 4 * P, "alloc");
_Static_assert(offsetof(aotrun_host_api, free) == 8 + 5 * P, "free");
_Static_assert(AOTRUN_HOST_API_V1_0_SIZE == 8 + 6 * P, "v1.0 size");
_Static_assert(sizeof(aotrun_host_api) >= AOTRUN_HOST_API_V1_0_SIZE, "");

/* Plain structs passed by pointer: their layout is ABI too. */
_Static_assert(offsetof(aotrun_key_value, value) == P, "key_value");
_Static_assert(offsetof(aotrun_option, type) == P, "option.type");
_Static_assert(offsetof(aotrun_option, bool_value) == P + 4, "");
_Static_assert(offsetof(aotrun_option, int_value) == P + 8, "");
_Static_assert(offsetof(aotrun_option, string_value) == P + 16, "");
_Static_assert(offsetof(aotrun_io_info, ndim) == 4, "io_info.ndim");
_Static_assert(offsetof(aotrun_io_info, name) == 8, "io_info.name");
_Static_assert(offsetof(aotrun_io_info, dtype) == 8 + P, "io_info.dtype");
_Static_assert(offsetof(aotrun_io_info, shape) == 16 + P, "io_info.shape");
_Static_assert(sizeof(((aotrun_io_info *)0)->shape) ==
                   AOTRUN_MAX_DIMS * sizeof(int64_t),
               "io_info.shape");

/* Status codes and versions are ABI values. */
_Static_assert(AOTRUN_ERR_VERSION_MISMATCH == 7, "status codes are frozen");
_Static_assert(AOTRUN_ABI_VERSION_MAJOR == 1, "this file freezes major 1");

/* Part of the host library so every host build runs these checks. */
int aotrun_abi_layout_checked(void);
int aotrun_abi_layout_checked(void) { return 1; }
