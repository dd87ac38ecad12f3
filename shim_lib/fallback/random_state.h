/*
 * random_state.h: the process-wide random generator of the random ops, one
 * per CUDA device (docs/random.md).
 *
 * State: aotrun_fb_rng_state {seed, offset} in device memory, allocated and
 * seeded lazily by the first random op on that device, and kept for the
 * process's life (captured CUDA graphs hold its address). The kernels read
 * the seed and reserve their Philox blocks with an atomicAdd on the offset
 * themselves (random_kernels.h), so the host never tracks the offset and a
 * replayed graph draws new numbers.
 *
 * Seed, at seeding: aotrun_shim_random_set_seed's value if one was set,
 * else AOTRUN_SEED=<u64> from the environment (decimal or 0x-hex), else 64
 * bits from the OS (getrandom(2); never the clock), so two processes started
 * at the same moment draw different numbers.
 *
 * Seeding failures (the seed source, the allocation, the copy to the GPU)
 * are logged on stderr ("aotrun error: ..."), free what was allocated, fail
 * that call with the message, and leave the device unseeded: the next call
 * tries again. aotrun_shim_random_fail_next_seed injects one failure.
 */
#ifndef AOTRUN_FALLBACK_RANDOM_STATE_H
#define AOTRUN_FALLBACK_RANDOM_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "shim_lib/fallback/fallback_tensor.h"
#include "shim_lib/fallback/random_kernels.h"

/* Device indices the generator keeps a state for. */
#define AOTRUN_FB_RANDOM_MAX_DEVICES 64

/* aotrun_shim_random_fail_next_seed steps. */
enum {
  AOTRUN_FB_SEED_FAIL_NONE = 0,
  AOTRUN_FB_SEED_FAIL_SOURCE = 1, /* the seed source (getrandom) */
  AOTRUN_FB_SEED_FAIL_COPY = 2,   /* the copy of the state to the GPU */
};

/* The device address of cuda:<device>'s generator state, seeding it first
 * when needed (device need not be current). Seeding refuses to run inside a
 * CUDA graph capture on the current stream (it copies to the GPU). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_random_state(
    const char *op, int32_t device, aotrun_fb_rng_state **state);

/* ---- the seed source (random_seed.c); no CUDA ---- */

/* 64 random bits from getrandom(2). Fails (message naming op, errno text)
 * when the OS cannot provide them. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_random_os_seed(const char *op,
                                                         uint64_t *seed);

/* Parses AOTRUN_SEED's value: a decimal or 0x-prefixed hex unsigned 64-bit
 * integer, nothing else (no sign, spaces or trailing text). Fails with a
 * message naming op and the text. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_random_parse_seed(const char *op,
                                                            const char *text,
                                                            uint64_t *seed);

/* The seed for a new state: `fixed` (when has_fixed), else AOTRUN_SEED,
 * else the OS. *source says which ("aotrun_shim_random_set_seed",
 * "AOTRUN_SEED", "getrandom"). */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_random_pick_seed(
    const char *op, int has_fixed, uint64_t fixed, uint64_t *seed,
    const char **source);

/* Frees every device's state (aotrun_shim_release_process_state): the next
 * random op seeds its device again, as in a new process (a seed fixed by
 * aotrun_shim_random_set_seed is kept: the sequence starts over). Only
 * while no random op runs or is queued. */
AOTRUN_FB_HIDDEN void aotrun_fb_random_release(void);

#endif /* AOTRUN_FALLBACK_RANDOM_STATE_H */
