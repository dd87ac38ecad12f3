/*
 * shim_release.h: the parts of aotrun_shim_release_process_state that live
 * in the shim's core (shim_lib/), for shim_lib/fallback/process_state.c
 * (the fallback library sees the core only through headers).
 */
#ifndef AOTRUN_SHIM_RELEASE_H
#define AOTRUN_SHIM_RELEASE_H

#include <stddef.h>

/* allocator.c: frees every cached block of every device and empties the
 * block cache (aotrun_block_cache_reset), then trims the devices' memory
 * pools. Synchronises every device the allocator used. Returns the bytes
 * released. */
size_t aotrun_allocator_release_all(void);

/* device_error.c: frees every device's error slot; only when no kernel or
 * captured graph holding a slot's address can run again. The next
 * aotrun_shim_device_error_slot makes a new one. */
void aotrun_device_error_release(void);

#endif /* AOTRUN_SHIM_RELEASE_H */
