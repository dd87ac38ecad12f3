/*
 * constant_target.h: where a method's constants go, as a table of functions
 * so that method_weights can be tested against an in-memory fake. The real
 * target is a loaded model library (aotrun_constant_target_of_library).
 */
#ifndef AOTRUN_CONSTANT_TARGET_H
#define AOTRUN_CONSTANT_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/model_library.h"

typedef struct aotrun_constant_target {
  void *ctx;
  /* AOTRUN_ERR_NOT_SUPPORTED when the constants cannot be listed. */
  aotrun_status (*num_constants)(void *ctx, size_t *count, aotrun_error *err);
  aotrun_status (*constant_info)(void *ctx, size_t index,
                                 aotrun_constant_info *out, aotrun_error *err);
  /* Zero-copy hand-over by internal name; the handles stay the caller's.
   * AOTRUN_ERR_NOT_SUPPORTED when the library cannot take user-managed
   * constants (the blob path is used instead). */
  aotrun_status (*set_user_managed_constants)(void *ctx,
                                              const aotrun_constant_pair *pairs,
                                              size_t count, aotrun_error *err);
  aotrun_status (*blob_size)(void *ctx, uint64_t *size, aotrun_error *err);
  /* The blob is borrowed for the call (the container copies it). */
  aotrun_status (*load_constants_blob)(void *ctx, const void *blob,
                                       uint64_t size, aotrun_error *err);
} aotrun_constant_target;

/* A target that forwards to lib's aotrun_model_library_* functions. */
aotrun_constant_target aotrun_constant_target_of_library(
    aotrun_model_library *lib);

#endif /* AOTRUN_CONSTANT_TARGET_H */
