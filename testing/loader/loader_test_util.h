/*
 * loader_test_util.h: helpers shared by the model-library tests: a fresh
 * private TMPDIR per test (and the check that it ends up empty), reading
 * fixture files, CPU tensors through the shim.
 */
#ifndef AOTRUN_LOADER_TEST_UTIL_H
#define AOTRUN_LOADER_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

typedef struct test_bytes {
  unsigned char *data;
  size_t size;
} test_bytes;

/* Reads a whole file (fails the test when it cannot). Free with free(). */
test_bytes test_read_file(const char *path);

/* Creates a fresh directory and points $TMPDIR at it; returns its path
 * (static storage, valid until test_tmpdir_end). */
const char *test_tmpdir_begin(void);
/* Number of entries in the current test directory (besides . and ..). */
int test_tmpdir_count(void);
/* Asserts the directory is empty, removes it and restores $TMPDIR. */
void test_tmpdir_end(void);

/* In loader_test_tensors.c (needs the shim). */
/* A contiguous float32 CPU tensor [rows, cols] holding values (copied). */
AtenTensorHandle test_f32_tensor(int64_t rows, int64_t cols,
                                 const float *values);
/* The float32 data of a tensor (asserts dtype and device). */
const float *test_f32_data(AtenTensorHandle t);

#endif /* AOTRUN_LOADER_TEST_UTIL_H */
