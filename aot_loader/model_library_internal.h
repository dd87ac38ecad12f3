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
#include "aot_loader/shim_binding.h"

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

/* The library's name in messages: config.name ("forward.so"), else the
 * path dlopen was given. Never NULL. */
const char *aotrun_model_library_label(const aotrun_model_library *lib);

/* Records "<entry> returned <rc> for <lib path>: <shim's last error>" (or a
 * note that the model printed the reason to stderr, which is all 2.11 does)
 * with `code`, and returns code. */
aotrun_status aotrun_model_library_call_failed(
    const aotrun_model_library *lib, aotrun_error *err, aotrun_status code,
    const char *entry, aotrun_aoti_error rc);

/* model_library_checks.c. Before anything is mapped: the kernel
 * architectures (and PTX ISA) against the GPU and driver, the shim made
 * global, every aoti_torch_* import against the shim's exports; all
 * problems in one message. On success *plan holds the import slots (free
 * it with aotrun_shim_plan_free; its names point into bytes). */
aotrun_status aotrun_model_library_precheck(const void *bytes, size_t size,
                                            const aotrun_model_library_config *c,
                                            int is_cuda,
                                            aotrun_shim_plan *plan,
                                            aotrun_error *err);
/* After dlopen: points every import slot of the plan at the shim
 * (report->shim_rebound: how many had been bound elsewhere). */
aotrun_status aotrun_model_library_bind_shim(aotrun_model_library *lib,
                                             const aotrun_shim_plan *plan,
                                             aotrun_load_report *report,
                                             aotrun_error *err);

#endif /* AOTRUN_MODEL_LIBRARY_INTERNAL_H */
