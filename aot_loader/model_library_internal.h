/*
 * model_library_internal.h: the model library object, shared by
 * model_library.c (load, run, destroy) and model_library_constants.c
 * (constant introspection and weights). Not part of the public API.
 */
#ifndef AOTRUN_MODEL_LIBRARY_INTERNAL_H
#define AOTRUN_MODEL_LIBRARY_INTERNAL_H

#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/container_api.h"
#include "aot_loader/library_image.h"
#include "aot_loader/model_library.h"

#define AOTRUN_DEVICE_MAX 32
#define AOTRUN_LIBRARY_NAME_MAX 128

struct aotrun_model_library {
  aotrun_library_image image; /* the bytes dlopen mapped (memfd, file) */
  const char *path;           /* image.path: what dlopen was given */
  char name[AOTRUN_LIBRARY_NAME_MAX]; /* for messages: "forward.so" */
  void *dl;                          /* dlopen handle */
  aotrun_container_api api;          /* resolved entry points */
  aotrun_container_handle container; /* NULL until created */
  size_t num_inputs;
  size_t num_outputs;
  int blob_loaded; /* UpdateConstantsFromBlob was called */
  char device[AOTRUN_DEVICE_MAX];
};

/* Records "<entry> returned <rc> for <lib path>: <shim's last error>" (or a
 * note that the model printed the reason to stderr, which is all 2.11 does)
 * with `code`, and returns code. */
aotrun_status aotrun_model_library_call_failed(
    const aotrun_model_library *lib, aotrun_error *err, aotrun_status code,
    const char *entry, aotrun_aoti_error rc);

#endif /* AOTRUN_MODEL_LIBRARY_INTERNAL_H */
