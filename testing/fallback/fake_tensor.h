/*
 * fake_tensor.h: tensors for the argument-check tests of the CUDA fallback
 * ops, which run without a GPU: every check runs before any CUDA call, so a
 * "CUDA" tensor can be a never-owning blob over host memory that is never
 * read. One helper for every test_*_args.c instead of a copy in each.
 */
#ifndef AOTRUN_TESTING_FALLBACK_FAKE_TENSOR_H
#define AOTRUN_TESTING_FALLBACK_FAKE_TENSOR_H

#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

/* Bytes behind fake() and fake_strided() tensors (16-byte aligned). */
#define FAKE_TENSOR_BYTES (1 << 16)

/* A tensor over `data` on device (dev_type, dev). strides NULL:
 * contiguous, where a size of 0 or 1 steps like 1. Fails the test if the
 * shim refuses it. */
AtenTensorHandle fake_blob(void *data, int32_t dtype, int32_t dev_type,
                           int32_t dev, int64_t ndim, const int64_t *sizes,
                           const int64_t *strides);
/* fake_blob over the shared never-read bytes, device index 0. */
AtenTensorHandle fake_strided(int32_t dtype, int32_t dev_type, int64_t ndim,
                              const int64_t *sizes, const int64_t *strides);
/* The same, contiguous. */
AtenTensorHandle fake(int32_t dtype, int32_t dev_type, int64_t ndim,
                      const int64_t *sizes);
/* A handle value that is not NULL, for result slots a failed call must not
 * overwrite; never dereferenced. */
AtenTensorHandle fake_sentinel(void);

/* Asserts a failure whose message (aotrun_shim_last_error) contains
 * `want`. */
void expect_fail(AOTITorchError err, const char *want);
/* Asserts success, printing the message otherwise. */
void expect_ok(AOTITorchError err);

#endif /* AOTRUN_TESTING_FALLBACK_FAKE_TENSOR_H */
