/*
 * model_library.c: one AOTInductor model library loaded from bytes (see
 * model_library.h).
 *
 * Load order: check the bytes are a complete ELF shared library, then
 * (model_library_checks.c, all problems at once) that a GPU has kernels it
 * and its driver can run, make the shim (and libcudart for CUDA) global and
 * check every aoti_torch_* import against the shim; write the bytes to
 * their image (memfd, else a temp file: library_image.h), dlopen it
 * RTLD_NOW|RTLD_LOCAL (two models must not bind to each other's
 * default-visibility C++ symbols), bind its aoti_torch_* imports to the
 * shim (shim_binding.h: libtorch may be first in the global scope),
 * resolve the entry points, create the container with one model instance,
 * read the input/output counts. Every failure undoes the steps already done, in
 * reverse, through the same release() that destroy uses.
 */
#include "aot_loader/model_library.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aot_loader/container_api.h"
#include "aot_loader/elf_check.h"
#include "aot_loader/fault_point.h"
#include "aot_loader/global_symbols.h"
#include "aot_loader/model_library_internal.h"

/* The test seam (model_library.h). */
static void (*g_hook)(void *ctx, const char *phase);
static void *g_hook_ctx;

void aotrun_model_library_test_hook(void (*fn)(void *ctx, const char *phase),
                                    void *ctx) {
  g_hook_ctx = ctx;
  g_hook = fn;
}

static void at_phase(const char *phase) {
  if (g_hook != NULL) g_hook(g_hook_ctx, phase);
}

/* "cpu", "cuda" or "cuda:N" (N decimal, at most 9 digits). Sets *is_cuda. */
static int valid_device(const char *device, int *is_cuda) {
  *is_cuda = 0;
  if (strcmp(device, "cpu") == 0) return 1;
  if (strncmp(device, "cuda", 4) != 0) return 0;
  *is_cuda = 1;
  const char *p = device + 4;
  if (*p == '\0') return 1;
  if (*p++ != ':') return 0;
  size_t digits = strspn(p, "0123456789");
  return digits > 0 && digits <= 9 && p[digits] == '\0';
}

/* The library's name in messages. */
static const char *label(const aotrun_model_library *lib) {
  if (lib->name[0] != '\0') return lib->name;
  return lib->path != NULL ? lib->path : "a model library";
}

/* model_library_internal.h */
const char *aotrun_model_library_label(const aotrun_model_library *lib) {
  return label(lib);
}

/* Under ThreadSanitizer only, model libraries stay mapped after dlclose:
 * ld.so maps and unmaps libraries without TSan seeing it, so a library
 * mapped where an unloaded one was inherits stale shadow state and its
 * first accesses are reported as races with the unloaded copy (seen in
 * test_concurrency). Every method loads its own private copy, so keeping
 * the mappings changes nothing else. Their image descriptors stay open too
 * (KEEP_IMAGES): ld.so finds loaded libraries by name, and a reused
 * /proc/self/fd/N would name the old, still loaded, library. */
#if defined(__SANITIZE_THREAD__)
#define KEEP_IMAGES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KEEP_IMAGES 1
#endif
#endif
#ifdef KEEP_IMAGES
#define MODEL_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
#else
#define KEEP_IMAGES 0
#define MODEL_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#endif

/* Undoes a (possibly partial) load: Delete the container, dlclose, release
 * the image (close the memfd, or remove a temp file still there), free.
 * The container's destructors run code inside the library: it goes first. */
static void release(aotrun_model_library *lib) {
  if (lib == NULL) return;
  if (lib->container != NULL && lib->api.delete_container != NULL) {
    if (lib->api.delete_container(lib->container) != AOTRUN_AOTI_SUCCESS)
      fprintf(stderr,
              "aotrun: AOTInductorModelContainerDelete failed for "
              "%s (its memory may leak)\n",
              label(lib));
    lib->container = NULL;
  }
  if (lib->dl != NULL) dlclose(lib->dl);
  /* A library that was mapped stays loaded under TSan (KEEP_IMAGES): its
   * image's name must stay unique, so its descriptor stays open. */
  if (!(KEEP_IMAGES && lib->dl != NULL))
    aotrun_library_image_release(&lib->image);
  free(lib);
}

/* See model_library_internal.h. The shim's message is the only detail we
 * can get: 2.11 prints the model's own reason to stderr and returns 1. */
aotrun_status aotrun_model_library_call_failed(const aotrun_model_library *lib,
                                               aotrun_error *err,
                                               aotrun_status code,
                                               const char *entry,
                                               aotrun_aoti_error rc) {
  const char *shim = aotrun_global_symbols_shim_last_error();
  if (shim[0] != '\0')
    return aotrun_error_set(err, code, "%s returned %d for %s: %s", entry,
                            (int)rc, label(lib), shim);
  return aotrun_error_set(err, code,
                          "%s returned %d for %s (the model printed the "
                          "reason to stderr)",
                          entry, (int)rc, label(lib));
}

/* dlerror() starts with the path dlopen was given ("/proc/self/fd/3:
 * undefined symbol: ..."): the copy's name means nothing to the user, who
 * knows the library by its manifest name. */
static const char *without_path(const char *why, const char *path) {
  size_t n = path != NULL ? strlen(path) : 0;
  if (n > 0 && strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
    return why + n + 2;
  return why;
}

/* dlopens the image; a named temp file is unlinked at once: the mapping
 * keeps the bytes, and a process that dies later (signal, crashing
 * constructor or model) leaves nothing behind. */
static aotrun_status map_image(aotrun_model_library *lib, aotrun_error *err) {
  int fault = aotrun_fault_point("model_library.dlopen");
  lib->dl = fault ? NULL : dlopen(lib->path, MODEL_DLOPEN_FLAGS);
  const char *why = fault              ? strerror(fault)
                    : lib->dl == NULL ? dlerror()
                                      : NULL;
  aotrun_library_image_mapped(&lib->image);
  if (lib->dl == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_ACCESS_FAILED,
                            "cannot dlopen model library %s (from a %s): %s",
                            label(lib),
                            aotrun_library_image_kind_name(lib->image.kind),
                            without_path(why ? why : "unknown error",
                                         lib->path));
  return AOTRUN_OK;
}

static aotrun_status create_container(aotrun_model_library *lib,
                                      aotrun_error *err) {
  aotrun_global_symbols_shim_clear_error();
  /* The fault point stands for a model whose constructor throws. */
  aotrun_aoti_error rc =
      aotrun_fault_point("model_library.create")
          ? 1
          : lib->api.create_with_device(&lib->container, 1, lib->device, NULL);
  if (rc != AOTRUN_AOTI_SUCCESS) {
    lib->container = NULL; /* never trust an out value on failure */
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_ACCESS_FAILED,
        "AOTInductorModelContainerCreateWithDevice", rc);
  }
  if (lib->container == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "AOTInductorModelContainerCreateWithDevice "
                            "returned no container for %s",
                            label(lib));
  return AOTRUN_OK;
}

static aotrun_status read_counts(aotrun_model_library *lib,
                                 aotrun_error *err) {
  aotrun_aoti_error rc =
      lib->api.get_num_inputs(lib->container, &lib->num_inputs);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL, "AOTInductorModelContainerGetNumInputs",
        rc);
  rc = lib->api.get_num_outputs(lib->container, &lib->num_outputs);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL, "AOTInductorModelContainerGetNumOutputs",
        rc);
  return AOTRUN_OK;
}

/* Steps after the image exists: dlopen, bind to the shim, resolve,
 * create, count. */
static aotrun_status open_library(aotrun_model_library *lib,
                                  const aotrun_shim_plan *plan,
                                  aotrun_load_report *report,
                                  aotrun_error *err) {
  at_phase("image_written");
  int64_t t = aotrun_load_clock_ns();
  aotrun_status st = map_image(lib, err);
  if (st == AOTRUN_OK) st = aotrun_model_library_bind_shim(lib, plan, report, err);
  aotrun_load_report_add(report, AOTRUN_LOAD_DLOPEN, t);
  if (st != AOTRUN_OK) return st;
  at_phase("library_opened");
  st = aotrun_container_api_resolve(lib->dl, label(lib), &lib->api, err);
  if (st != AOTRUN_OK) return st;
  t = aotrun_load_clock_ns();
  st = create_container(lib, err);
  aotrun_load_report_add(report, AOTRUN_LOAD_CONTAINER, t);
  return st == AOTRUN_OK ? read_counts(lib, err) : st;
}

/* Everything about the arguments and the bytes that needs no side effect. */
static aotrun_status check_load(const void *bytes, size_t size,
                                const aotrun_model_library_config *c,
                                int *is_cuda, aotrun_error *err) {
  if (c == NULL || c->device == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "model library load: device is NULL");
  if (strlen(c->device) >= AOTRUN_DEVICE_MAX ||
      !valid_device(c->device, is_cuda))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "model library load: device \"%.*s\" is not "
                            "\"cpu\", \"cuda\" or \"cuda:N\"",
                            AOTRUN_DEVICE_MAX, c->device);
  const char *what = c->name != NULL ? c->name : "model library";
  if (size == 0 || bytes == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "%s is empty (%zu bytes)", what, size);
  return aotrun_elf_check_shared_library(bytes, size, what, err);
}

static aotrun_status write_image(aotrun_model_library *lib, const void *bytes,
                                 size_t size,
                                 const aotrun_model_library_config *c,
                                 aotrun_error *err) {
  int64_t t = aotrun_load_clock_ns();
  aotrun_status st = aotrun_library_image_create(bytes, size, c->temp_file,
                                                 &lib->image, err);
  aotrun_load_report_add(c->report, AOTRUN_LOAD_LIBRARY_WRITE, t);
  if (st != AOTRUN_OK) return st;
  lib->path = lib->image.path;
  if (c->report != NULL) {
    c->report->library_bytes = size;
    aotrun_load_report_text(c->report->image, sizeof c->report->image,
                            aotrun_library_image_kind_name(lib->image.kind));
    aotrun_load_report_text(c->report->image_note,
                            sizeof c->report->image_note, lib->image.note);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_model_library_load_with(
    const void *bytes, size_t size, const aotrun_model_library_config *c,
    aotrun_model_library **out, aotrun_error *err) {
  if (out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "model library load: out is NULL");
  *out = NULL;
  int is_cuda = 0;
  aotrun_status st = check_load(bytes, size, c, &is_cuda, err);
  if (st != AOTRUN_OK) return st;
  aotrun_shim_plan plan;
  st = aotrun_model_library_precheck(bytes, size, c, is_cuda, &plan, err);
  if (st != AOTRUN_OK) return st;

  aotrun_model_library *lib = calloc(1, sizeof *lib);
  if (lib == NULL) {
    aotrun_shim_plan_free(&plan);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory loading a model library");
  }
  lib->image.fd = -1;
  snprintf(lib->device, sizeof lib->device, "%s", c->device);
  aotrun_load_report_text(lib->name, sizeof lib->name, c->name);
  st = write_image(lib, bytes, size, c, err);
  if (st == AOTRUN_OK) st = open_library(lib, &plan, c->report, err);
  aotrun_shim_plan_free(&plan);
  if (st != AOTRUN_OK) {
    release(lib);
    return st;
  }
  *out = lib;
  return AOTRUN_OK;
}

aotrun_status aotrun_model_library_load(const void *bytes, size_t size,
                                        const char *device,
                                        aotrun_model_library **out,
                                        aotrun_error *err) {
  aotrun_model_library_config c = {.device = device};
  return aotrun_model_library_load_with(bytes, size, &c, out, err);
}

void aotrun_model_library_destroy(aotrun_model_library *lib) { release(lib); }

size_t aotrun_model_library_num_inputs(const aotrun_model_library *lib) {
  return lib ? lib->num_inputs : 0;
}

size_t aotrun_model_library_num_outputs(const aotrun_model_library *lib) {
  return lib ? lib->num_outputs : 0;
}

int aotrun_model_library_has_run_single_threaded(
    const aotrun_model_library *lib) {
  return lib != NULL && lib->api.run_single_threaded != NULL;
}

const char *aotrun_model_library_path(const aotrun_model_library *lib) {
  return lib ? lib->path : NULL;
}

const char *aotrun_model_library_image_kind(const aotrun_model_library *lib) {
  return lib ? aotrun_library_image_kind_name(lib->image.kind) : NULL;
}

const char *aotrun_model_library_device(const aotrun_model_library *lib) {
  return lib ? lib->device : NULL;
}

/* ---- run ---- */

/* Everything the model would throw on (a C++ exception across the C
 * boundary kills the process) is refused here, before it runs. */
static aotrun_status check_run_args(const aotrun_model_library *lib,
                                    AtenTensorHandle *inputs, size_t num_inputs,
                                    AtenTensorHandle *outputs,
                                    size_t num_outputs, aotrun_error *err) {
  if (lib == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "run: model library is NULL");
  if (num_inputs != lib->num_inputs)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "run: %s takes %zu inputs, got %zu", label(lib),
                            lib->num_inputs, num_inputs);
  if (num_outputs != lib->num_outputs)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "run: %s returns %zu outputs, got room for %zu",
                            label(lib), lib->num_outputs, num_outputs);
  if ((num_inputs > 0 && inputs == NULL) ||
      (num_outputs > 0 && outputs == NULL))
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "run: %s array is NULL",
                            inputs == NULL ? "input" : "output");
  for (size_t i = 0; i < num_inputs; i++)
    if (inputs[i] == NULL)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "run: input %zu is a NULL tensor handle", i);
  return AOTRUN_OK;
}

void aotrun_model_library_delete_outputs(AtenTensorHandle *outputs,
                                         size_t n) {
  if (outputs == NULL) return;
  aotrun_delete_tensor_fn del = aotrun_global_symbols_shim_delete_tensor();
  for (size_t i = 0; i < n; i++) {
    int again = 0; /* one handle in two slots is one reference */
    for (size_t k = 0; k < i && !again; k++) again = outputs[k] == outputs[i];
    if (outputs[i] != NULL && del != NULL && !again) del(outputs[i]);
  }
  for (size_t i = 0; i < n; i++) outputs[i] = NULL;
}

aotrun_status aotrun_model_library_run(aotrun_model_library *lib,
                                       AtenTensorHandle *inputs,
                                       size_t num_inputs,
                                       AtenTensorHandle *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err) {
  aotrun_status st =
      check_run_args(lib, inputs, num_inputs, outputs, num_outputs, err);
  if (st != AOTRUN_OK) return st;
  for (size_t i = 0; i < num_outputs; i++) outputs[i] = NULL;
  /* RunSingleThreaded: no lock and no completion event (Run's event breaks
   * CUDA graph capture and blocks back-to-back calls). */
  int single = lib->api.run_single_threaded != NULL;
  aotrun_container_run_fn run =
      single ? lib->api.run_single_threaded : lib->api.run;
  aotrun_global_symbols_shim_clear_error();
  aotrun_aoti_error rc = run(lib->container, inputs, num_inputs, outputs,
                             num_outputs, stream, NULL);
  /* The fault point stands for a kernel error found after the model ran
   * (it has consumed the inputs and made its outputs). */
  if (rc == AOTRUN_AOTI_SUCCESS && aotrun_fault_point("model_library.run"))
    rc = 1;
  if (rc == AOTRUN_AOTI_SUCCESS) return AOTRUN_OK;
  /* After a failed run, hand nothing back. */
  aotrun_model_library_delete_outputs(outputs, num_outputs);
  return aotrun_model_library_call_failed(
      lib, err, AOTRUN_ERR_INTERNAL,
      single ? "AOTInductorModelContainerRunSingleThreaded"
             : "AOTInductorModelContainerRun",
      rc);
}
