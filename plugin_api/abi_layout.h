/*
 * abi_layout.h: what the host library knows about each released minor
 * version's table size (private to the host). The public constants and the
 * layout asserts are in aotrun_plugin.h; abi_layout.c adds the host's own.
 */
#ifndef AOTRUN_ABI_LAYOUT_H
#define AOTRUN_ABI_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_api/aotrun_plugin.h"

/* 1.0 spellings kept for the host's older code and tests. */
#define AOTRUN_BACKEND_API_V1_0_SIZE AOTRUN_BACKEND_API_SIZE_1_0
#define AOTRUN_HOST_API_V1_0_SIZE AOTRUN_HOST_API_SIZE_1_0

/* Size of the backend table of minor version `minor` of major 1 (the end of
 * its last member), or 0 when this host does not know that minor (newer). */
static inline size_t aotrun_backend_api_size_of_minor(uint32_t minor) {
  switch (minor) {
    case 0: return AOTRUN_BACKEND_API_SIZE_1_0;
    case 1: return AOTRUN_BACKEND_API_SIZE_1_1;
    default: return 0;
  }
}

#endif /* AOTRUN_ABI_LAYOUT_H */
