/*
 * random_kernels.h: the device side of the random ops (rand, randn, randint,
 * randperm, uniform, normal, bernoulli), shared by the C code and
 * random_kernels.cu. Plain C with fixed-width fields.
 *
 * Numbers come from cuRAND's counter-based Philox4x32-10
 * (curand_Philox4x32_10): one call maps a 128-bit counter and the 64-bit
 * seed (the key) to four 32-bit words, a "Philox block". Each CUDA device
 * has one generator state in device memory (aotrun_fb_rng_state, see
 * random_state.h): the seed and a 64-bit offset counted in Philox blocks.
 *
 * A job that needs B blocks reserves them ON THE DEVICE with
 * atomicAdd(&state->offset, B), which returns its base offset; block g of
 * the job uses counter base + g (128-bit). The offset is never a kernel
 * argument, so a CUDA graph that captured a random op reserves a new range
 * on every replay and draws new numbers; concurrent jobs on several streams
 * get disjoint ranges. A job of at most AOTRUN_FB_RAND_FUSED_BLOCKS blocks
 * runs as one thread block whose thread 0 reserves (one launch); a larger
 * job first runs a 1-thread reservation kernel that writes the base into an
 * 8-byte per-call scratch word (`ticket`), then the grid reads it.
 *
 * The grid runs one thread per Philox block (grid-stride past 2^20 thread
 * blocks). Element k is the k-th element of out in storage order (dense
 * out) or in row-major order (strided out, BERNOULLI_P). Block g's values
 * go to chunks of W consecutive elements of at most 16 bytes: chunk c
 * starts at element c * blocks * W + g * W. That is elements
 * per_block * g + i, except for four 8-byte values (randint / bernoulli
 * into int64, uint64, float64: two chunks of two, the first two values of
 * every block in [0, 2 * blocks), the last two in [2 * blocks,
 * 4 * blocks)). Dense outputs are written with one vector store per chunk
 * (consecutive threads, consecutive chunks), by kernels specialised per
 * store dtype; strided outputs walk their strides.
 */
#ifndef AOTRUN_FALLBACK_RANDOM_KERNELS_H
#define AOTRUN_FALLBACK_RANDOM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "shim_lib/device_error.h"
#include "shim_lib/fallback/fallback_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One per CUDA device, in device memory, kept until
 * aotrun_shim_release_process_state (captured graphs hold its address). */
typedef struct aotrun_fb_rng_state {
  uint64_t seed;   /* Philox key */
  uint64_t offset; /* next free Philox block (advanced by the kernels) */
} aotrun_fb_rng_state;

/* Jobs of at most this many Philox blocks run in one thread block. */
#define AOTRUN_FB_RAND_FUSED_BLOCKS 2048

enum {
  /* out = u * c + a rounded to the dtype, u uniform in (0, 1] (cuRAND's
   * conversion); a value equal to b (= to) becomes a (= from), ATen's rule.
   * a, b, c are from, to and (to - from) already rounded as ATen rounds
   * them. Float dtypes only. */
  AOTRUN_FB_RAND_UNIFORM = 1,
  /* out = z * b + a, z standard normal (cuRAND's Box-Muller). Floats. */
  AOTRUN_FB_RAND_NORMAL = 2,
  /* out = low + r, r uniform in [0, range) (multiply-high of 32 random
   * bits when range <= 2^32, else of 64). Every store dtype. */
  AOTRUN_FB_RAND_INT = 3,
  /* out = (u < a), u uniform in [0, 1) with 32 bits. Every store dtype. */
  AOTRUN_FB_RAND_BERNOULLI = 4,
  /* out = (u < p[k]), p a float tensor broadcast to out (p_strides); a p
   * outside [0, 1] (or NaN) writes 0 and reports through the device error
   * slot. */
  AOTRUN_FB_RAND_BERNOULLI_P = 5,
  /* randperm's sort input: out = random keys (key_bytes 4 or 8, dense),
   * out2 = 0, 1, ..., n-1 (val_bytes 4 or 8). */
  AOTRUN_FB_RAND_PERM_KEYS = 6,
};

typedef struct aotrun_fb_rand_job {
  int32_t kind;     /* AOTRUN_FB_RAND_* */
  int32_t dtype;    /* ScalarType code of out */
  int32_t per_block; /* elements per Philox block: 4 or 2 */
  int32_t ndim;     /* 0: out is dense, element k at out[k]; else strided */
  void *out;
  int64_t n; /* elements */
  int64_t sizes[AOTRUN_FB_MAX_DIMS];
  int64_t strides[AOTRUN_FB_MAX_DIMS];   /* out's, in elements */
  int64_t p_strides[AOTRUN_FB_MAX_DIMS]; /* p's, expanded to sizes */
  const void *p;    /* BERNOULLI_P */
  int32_t p_dtype;
  int32_t key_bytes; /* PERM_KEYS */
  int32_t val_bytes; /* PERM_KEYS */
  int32_t pad_;
  void *out2;        /* PERM_KEYS: the 0..n-1 values */
  double a, b, c;
  int64_t low;
  uint64_t range; /* INT: high - low as unsigned, >= 1 */
  aotrun_fb_rng_state *state; /* device address */
  aotrun_device_error *err;   /* device error slot (BERNOULLI_P) */
  uint64_t op;  /* address of the op's static name, for the report */
  uint64_t arg; /* address of the static argument name ("p") */
} aotrun_fb_rand_job;

/* Philox blocks the job consumes: ceil(n / per_block). */
AOTRUN_FB_HIDDEN int64_t aotrun_fb_rand_blocks(const aotrun_fb_rand_job *j);

/* True when the job needs the reservation kernel and an 8-byte ticket. */
AOTRUN_FB_HIDDEN int aotrun_fb_rand_needs_ticket(const aotrun_fb_rand_job *j);

/* Queues the job on stream (ticket: 8 bytes of device scratch when
 * aotrun_fb_rand_needs_ticket, else NULL). Nothing synchronises. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_rand_launch(
    const aotrun_fb_rand_job *j, unsigned long long *ticket,
    cudaStream_t stream);

/* out[k] = src[k] converted to dtype (k < n; out dense), for randperm of a
 * dtype the sort cannot write directly. */
AOTRUN_FB_HIDDEN cudaError_t aotrun_fb_rand_convert_index(
    void *out, int32_t dtype, const int64_t *src, int64_t n,
    cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_RANDOM_KERNELS_H */
