/*
 * upload_chunks.h: how a weight is cut for a staged upload through a
 * bounded pinned buffer (docs/loading.md, "Weights"). Pure arithmetic, so
 * the CUDA copy loop (backend_cuda/cuda_staged_upload.c) only follows it.
 *
 * The pinned staging memory is two buffers of `chunk` bytes used in turn:
 * chunk i goes through buffer i % 2, so the host copy of chunk i + 1 (where
 * the page faults of a memory-mapped weights file happen) overlaps the DMA
 * of chunk i. Chunk boundaries are multiples of `align` (the DMA engine
 * likes aligned starts); only the last chunk may be shorter.
 */
#ifndef AOTRUN_UPLOAD_CHUNKS_H
#define AOTRUN_UPLOAD_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct aotrun_upload_plan {
  uint64_t bytes; /* the whole copy */
  size_t chunk;   /* bytes per chunk (and per staging buffer) */
  size_t count;   /* chunks; 0 for an empty copy */
  int staged;     /* 0: one direct copy is as good (small, or no room) */
} aotrun_upload_plan;

/* Plans a copy of `bytes` with at most `staging` bytes of pinned memory in
 * all (two buffers of staging / 2, rounded down to `align`, a power of
 * two). Copies shorter than two chunks are not staged: there is nothing to
 * overlap. Returns 0, or -1 when align is not a power of two or staging
 * leaves less than `align` per buffer (the plan is then direct). */
int aotrun_upload_plan_make(uint64_t bytes, size_t staging, size_t align,
                            aotrun_upload_plan *plan);

/* Offset and size of chunk i (< count), and its staging buffer (0 or 1). */
void aotrun_upload_plan_chunk(const aotrun_upload_plan *plan, size_t i,
                              uint64_t *offset, size_t *size, int *buffer);

#endif /* AOTRUN_UPLOAD_CHUNKS_H */
