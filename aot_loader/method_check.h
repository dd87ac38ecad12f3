/*
 * method_check.h: whether a backend could load one method of a program,
 * judged without loading it (the plugin ABI's can_run): the manifest parses
 * and has the method; the method's model library, read through the host's
 * named data, is a shared library for this machine whose GPU kernels run on
 * the target (kernel_arch.h; a CPU target needs a library without GPU
 * kernels); and every aoti_torch_* function the manifest says it imports
 * (the exporter's "aoti_torch_imports") is exported by the shim library
 * this process uses. Nothing is uploaded, no library is dlopened.
 */
#ifndef AOTRUN_METHOD_CHECK_H
#define AOTRUN_METHOD_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "plugin_api/aotrun_plugin.h"

typedef struct aotrun_method_check_config {
  /* Named data of the program; NULL (or without get_named_data): the
   * library is not checked. Borrowed. */
  const aotrun_host_api *host;
  const void *manifest; /* manifest.json bytes, borrowed */
  size_t manifest_size;
  const char *method;   /* method name */
  const char *device;   /* "cpu" or "cuda:N", for messages */
  /* The GPU's compute capability (major * 10 + minor), or 0 for a CPU
   * target. */
  uint32_t gpu_arch;
} aotrun_method_check_config;

/* AOTRUN_OK, or the status loading would fail with and a message naming
 * the method, library, architecture or import:
 *   INVALID_ARGUMENT  malformed manifest, a library that is not a shared
 *                     library for this machine;
 *   NOT_FOUND         no such method, no such named data;
 *   NOT_SUPPORTED     a newer manifest format, kernels for other GPUs (or
 *                     any GPU kernels for a CPU target), an import the
 *                     shim lacks. */
aotrun_status aotrun_method_check(const aotrun_method_check_config *config,
                                  aotrun_error *err);

#endif /* AOTRUN_METHOD_CHECK_H */
