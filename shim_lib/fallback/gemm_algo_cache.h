/*
 * gemm_algo_cache.h: cuBLASLt's heuristic answers, remembered. A heuristic
 * query costs microseconds on every call (ATen asks on every call); the
 * answer depends only on the problem's description, so it is asked once
 * per distinct problem and reused, "no algorithm" included (a caller that
 * then falls back to cublasGemmEx does not ask again on every call).
 * Thread-safe; entries live until the library is unloaded or the process
 * state is released; when the table is full, answers are not cached (the
 * caller asks cuBLASLt as before).
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
  int64_t batch, stride_a, stride_b, stride_c; /* batch 1: strides 0 */
  uint32_t align_a, align_b, align_c, has_bias;
  uint64_t workspace_bytes;
} aotrun_fb_algo_key;

typedef enum aotrun_fb_algo_answer {
  AOTRUN_FB_ALGO_UNKNOWN = 0, /* not cached: ask the heuristic */
  AOTRUN_FB_ALGO_FOUND = 1,   /* *algo filled */
  AOTRUN_FB_ALGO_NONE = 2,    /* the heuristic had no algorithm */
} aotrun_fb_algo_answer;

/* What is cached for key (*algo filled for FOUND). */
AOTRUN_FB_HIDDEN aotrun_fb_algo_answer aotrun_fb_algo_cache_find(
    const aotrun_fb_algo_key *key, cublasLtMatmulAlgo_t *algo);

/* Remembers key -> algo, or key -> "no algorithm" when algo is NULL
 * (ignored when the table is full or key is already cached). */
AOTRUN_FB_HIDDEN void aotrun_fb_algo_cache_put(const aotrun_fb_algo_key *key,
                              const cublasLtMatmulAlgo_t *algo);

/* Entries cached, and lookups answered from the cache (for tests). */
AOTRUN_FB_HIDDEN int aotrun_fb_algo_cache_size(void);
AOTRUN_FB_HIDDEN uint64_t aotrun_fb_algo_cache_hits(void);
/* Forgets every entry (aotrun_shim_release_process_state). */
AOTRUN_FB_HIDDEN void aotrun_fb_algo_cache_clear(void);

#endif /* AOTRUN_FALLBACK_GEMM_ALGO_CACHE_H */
