/*
 * gemm_algo_cache.h: cuBLASLt's heuristic answers, remembered. A heuristic
 * query costs microseconds on every call (ATen asks on every call); the
 * answer depends only on the problem's description, so it is asked once
 * per distinct problem and reused. Thread-safe; entries live until the
 * library is unloaded; when the table is full, answers are not cached
 * (the caller asks cuBLASLt as before).
 */
#ifndef AOTRUN_FALLBACK_GEMM_ALGO_CACHE_H
#define AOTRUN_FALLBACK_GEMM_ALGO_CACHE_H

#include <cublasLt.h>
#include <stdint.h>

#include "shim_lib/fallback/fallback_limits.h"

#define AOTRUN_FB_ALGO_CACHE_SLOTS 512

/* Everything the heuristic's answer depends on. Zero it first (memset):
 * keys are compared byte for byte, padding included. */
typedef struct aotrun_fb_algo_key {
  int32_t device, dtype, out_dtype, trans_a, trans_b, epilogue;
  int64_t m, n, k, lda, ldb, ldc;
  uint32_t align_a, align_b, align_c, has_bias;
  uint64_t workspace_bytes;
} aotrun_fb_algo_key;

/* 1 and *algo filled when key was cached, else 0. */
AOTRUN_FB_HIDDEN int aotrun_fb_algo_cache_find(const aotrun_fb_algo_key *key,
                              cublasLtMatmulAlgo_t *algo);

/* Remembers key -> algo (ignored when the table is full). */
AOTRUN_FB_HIDDEN void aotrun_fb_algo_cache_put(const aotrun_fb_algo_key *key,
                              const cublasLtMatmulAlgo_t *algo);

/* Entries cached, and lookups answered from the cache (for tests). */
AOTRUN_FB_HIDDEN int aotrun_fb_algo_cache_size(void);
AOTRUN_FB_HIDDEN uint64_t aotrun_fb_algo_cache_hits(void);
/* Forgets every entry (aotrun_shim_release_process_state). */
AOTRUN_FB_HIDDEN void aotrun_fb_algo_cache_clear(void);

#endif /* AOTRUN_FALLBACK_GEMM_ALGO_CACHE_H */
