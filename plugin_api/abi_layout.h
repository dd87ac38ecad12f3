/*
 * abi_layout.h: sizes of the frozen v1.0 tables (private to the host).
 * A plugin table smaller than AOTRUN_BACKEND_API_V1_0_SIZE lacks required
 * members and is refused. abi_layout.c asserts these at compile time.
 */
#ifndef AOTRUN_ABI_LAYOUT_H
#define AOTRUN_ABI_LAYOUT_H

#include <stddef.h>

#include "plugin_api/aotrun_plugin.h"

#define AOTRUN_MEMBER_END(type, field) \
  (offsetof(type, field) + sizeof(((type *)0)->field))

/* Bytes up to and including the last member of version 1.0. */
#define AOTRUN_BACKEND_API_V1_0_SIZE \
  AOTRUN_MEMBER_END(aotrun_backend_api, last_error)
#define AOTRUN_HOST_API_V1_0_SIZE AOTRUN_MEMBER_END(aotrun_host_api, free)

#endif /* AOTRUN_ABI_LAYOUT_H */
