/*
 * test_weight_fixture.h: an in-memory program for the method-weights tests:
 * a manifest with four constants (weight, bias, scale64 on cuda; calls on
 * cpu), a matching safetensors file, the library's constant list, and fakes
 * for the constant target, the tensor views and the device memory.
 */
#ifndef AOTRUN_TEST_WEIGHT_FIXTURE_H
#define AOTRUN_TEST_WEIGHT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/method_weights.h"

#define FAKE_MAX_CONSTANTS 8

/* A view made by the fake view ops (what an AtenTensorHandle points to). */
typedef struct fake_tensor {
  void *data;
  int32_t ndim;
  int64_t sizes[AOTRUN_PROGRAM_MAX_DIMS];
  int64_t strides[AOTRUN_PROGRAM_MAX_DIMS];
  int64_t storage_offset;
  int32_t dtype, device_type, device_index;
} fake_tensor;

/* The fake library: what it reports and what it was given. */
typedef struct fake_library {
  aotrun_constant_info infos[FAKE_MAX_CONSTANTS];
  size_t num_infos;
  int no_introspection;   /* num_constants -> NOT_SUPPORTED */
  int no_user_managed;    /* set_user_managed -> NOT_SUPPORTED */
  int fail_user_managed;  /* set_user_managed -> INTERNAL */
  uint64_t blob_size;
  /* Received: */
  int set_calls;
  size_t num_pairs;
  char pair_names[FAKE_MAX_CONSTANTS][32];
  fake_tensor pair_views[FAKE_MAX_CONSTANTS]; /* copies (the "aliases") */
  int blob_calls;
  uint8_t blob[512];
  uint64_t blob_len;
} fake_library;

typedef struct fake_views {
  int live;           /* handles created and not yet destroyed */
  int created;
  int fail_at;        /* create number (1-based) that fails; 0: none */
} fake_views;

typedef struct fake_memory {
  int allocs, frees, uploads;
} fake_memory;

typedef struct weight_fixture {
  aotrun_program *program;
  const aotrun_program_method *forward;
  uint8_t *file;
  size_t file_size;
  aotrun_safetensors *weights;
  fake_library lib;
  aotrun_constant_target target;
  fake_views views_state;
  aotrun_tensor_view_ops views;
  fake_memory cuda_mem, host_mem;
  aotrun_device_ops cuda_ops, host_ops;
  int log_count;
  char last_log[1024];
  aotrun_weight_cache *cache;
} weight_fixture;

/* Builds everything; manifest_edit_* edit the manifest first (see
 * json_with; path NULL for none). The library reports the manifest's
 * constants plus a folded one between bias and scale64. */
weight_fixture *weight_fixture_new(const char *edit_path,
                                   const char *edit_value);
/* Frees everything and asserts no view and no device memory leaked. */
void weight_fixture_free(weight_fixture *f);

/* The bytes of the weights file's entry for fqn. */
const uint8_t *weight_fixture_bytes(weight_fixture *f, const char *fqn);

/* Sets library constant i's fields (by manifest position, folded skipped). */
aotrun_constant_info *weight_fixture_lib_constant(weight_fixture *f,
                                                  const char *name);

#endif /* AOTRUN_TEST_WEIGHT_FIXTURE_H */
