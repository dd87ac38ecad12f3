/*
 * upload_chunks.c: see upload_chunks.h.
 */
#include "aot_loader/upload_chunks.h"

#include <string.h>

static void direct(uint64_t bytes, aotrun_upload_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->bytes = bytes;
  plan->chunk = bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
  plan->count = bytes > 0 ? 1 : 0;
}

int aotrun_upload_plan_make(uint64_t bytes, size_t staging, size_t align,
                            aotrun_upload_plan *plan) {
  direct(bytes, plan);
  if (align == 0 || (align & (align - 1)) != 0) return -1;
  size_t chunk = staging / 2 / align * align;
  if (chunk == 0) return -1;
  if (bytes < 2 * (uint64_t)chunk) return 0; /* nothing to overlap */
  plan->chunk = chunk;
  plan->count = (size_t)((bytes + chunk - 1) / chunk);
  plan->staged = 1;
  return 0;
}

void aotrun_upload_plan_chunk(const aotrun_upload_plan *plan, size_t i,
                              uint64_t *offset, size_t *size, int *buffer) {
  uint64_t at = (uint64_t)i * plan->chunk;
  uint64_t left = at < plan->bytes ? plan->bytes - at : 0;
  *offset = at;
  *size = left < plan->chunk ? (size_t)left : plan->chunk;
  *buffer = (int)(i % 2);
}
