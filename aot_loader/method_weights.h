/*
 * method_weights.h: binds one method's constants (FQN weight metadata from
 * the manifest, bytes from the weights file) to its model library.
 *
 * 1. Validation: counts, names, FQNs, types, dtypes and byte sizes must agree
 *    between the manifest, the library (GetConstant*; folded constants are
 *    skipped) and the weights file. Any mismatch is AOTRUN_ERR_INVALID_ARGUMENT
 *    "malformed FQN weight metadata: ..." naming the constant and both values.
 * 2. When the library lists its constants and takes user-managed ones: each
 *    FQN is copied once into the program's weight cache (cuda constants into
 *    device memory, cpu constants into host memory), a non-owning view is
 *    made with the manifest's sizes/strides/offset, the views are handed to
 *    the container by internal name, and our view handles are deleted (the
 *    container keeps its own aliases).
 * 3. Otherwise (AOTRUN_ERR_NOT_SUPPORTED) the binary-blob path: the manifest's
 *    constants, in order, each `nbytes` bytes, 64-byte padded records unless
 *    every constant is on cuda (DESIGN.md §2.2), checked against the
 *    library's blob size, loaded with load_constants_blob (the container
 *    copies it; the blob is freed before bind returns).
 *
 * Required destroy order (the container aliases cache memory):
 *   aotrun_model_library_destroy(lib);       -- deletes the container
 *   aotrun_method_weights_release(w);        -- drops this method's copies
 *   ... and, once every method of the program is gone,
 *   aotrun_weight_cache_destroy(cache);
 * The weights file's bytes (and the aotrun_safetensors view) may be released
 * as soon as bind returns: everything bound was copied.
 */
#ifndef AOTRUN_METHOD_WEIGHTS_H
#define AOTRUN_METHOD_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/constant_target.h"
#include "aot_loader/model_library.h"
#include "aot_loader/program.h"
#include "aot_loader/safetensors.h"
#include "aot_loader/tensor_views.h"
#include "aot_loader/weight_cache.h"

/* Record alignment of the binary blob when not every constant is on cuda. */
#define AOTRUN_BLOB_ALIGNMENT 64

/* Pure checks (no side effects), exposed for tests and tools. */

/* The library's constants (num_library entries, folded ones included, in
 * index order) against the manifest's. */
aotrun_status aotrun_method_weights_check_library(
    const aotrun_program_method *method, const aotrun_constant_info *library,
    size_t num_library, aotrun_error *err);

/* The manifest's constants against the weights file: an entry per FQN with
 * the same dtype and byte size. weights may be NULL only when the method has
 * no constants. */
aotrun_status aotrun_method_weights_check_weights(
    const aotrun_program_method *method, const aotrun_safetensors *weights,
    aotrun_error *err);

/* Size of the binary blob for the method's constants: packed (padded = 0) or
 * with AOTRUN_BLOB_ALIGNMENT-byte records (padded = 1). Fails on overflow. */
aotrun_status aotrun_method_weights_blob_size(
    const aotrun_program_method *method, int padded, uint64_t *size,
    aotrun_error *err);

typedef struct aotrun_method_weights aotrun_method_weights;

/* Validates and binds (see above). device_index: the cuda device of the
 * method, used for cuda constants' views. On failure nothing is kept: views
 * are deleted and cache references released. */
aotrun_status aotrun_method_weights_bind(
    const aotrun_constant_target *target, const aotrun_program_method *method,
    const aotrun_safetensors *weights, aotrun_weight_cache *cache,
    const aotrun_tensor_view_ops *views, int32_t device_index,
    aotrun_method_weights **out, aotrun_error *err);

/* Constants kept in host memory (manifest device "cpu"), by internal name:
 * such a method runs without a CUDA graph. */
size_t aotrun_method_weights_num_host_constants(
    const aotrun_method_weights *w);
const char *aotrun_method_weights_host_constant(const aotrun_method_weights *w,
                                                size_t index);
/* 1 when the library could not list its constants (the blob path was used
 * without introspection), so the library's own view of host constants is
 * unknown: the host-constant list is only the manifest's. */
int aotrun_method_weights_constants_unlisted(const aotrun_method_weights *w);
/* 1 when the constants were loaded as a binary blob. */
int aotrun_method_weights_used_blob(const aotrun_method_weights *w);

/* Releases the method's cache references. Only after the container that
 * aliases them is deleted. Accepts NULL. */
void aotrun_method_weights_release(aotrun_method_weights *w);

#endif /* AOTRUN_METHOD_WEIGHTS_H */
