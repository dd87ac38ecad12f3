/* constant_target.c: the model-library constant target. */
#include "aot_loader/constant_target.h"

static aotrun_status lib_num_constants(void *ctx, size_t *count,
                                       aotrun_error *err) {
  return aotrun_model_library_num_constants(ctx, count, err);
}

static aotrun_status lib_constant_info(void *ctx, size_t index,
                                       aotrun_constant_info *out,
                                       aotrun_error *err) {
  return aotrun_model_library_constant_info(ctx, index, out, err);
}

static aotrun_status lib_set_user_managed(void *ctx,
                                          const aotrun_constant_pair *pairs,
                                          size_t count, aotrun_error *err) {
  return aotrun_model_library_set_user_managed_constants(ctx, pairs, count,
                                                         err);
}

static aotrun_status lib_blob_size(void *ctx, uint64_t *size,
                                   aotrun_error *err) {
  return aotrun_model_library_blob_size(ctx, size, err);
}

static aotrun_status lib_load_blob(void *ctx, const void *blob, uint64_t size,
                                   aotrun_error *err) {
  return aotrun_model_library_load_constants_blob_sized(ctx, blob, size, err);
}

aotrun_constant_target aotrun_constant_target_of_library(
    aotrun_model_library *lib) {
  aotrun_constant_target t = {lib,           lib_num_constants,
                              lib_constant_info, lib_set_user_managed,
                              lib_blob_size, lib_load_blob};
  return t;
}
