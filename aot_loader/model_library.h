/*
 * model_library.h: one AOTInductor model library, loaded from bytes.
 *
 * The bytes are checked (a complete ELF shared library; with a GPU arch
 * given, kernels this GPU can run), written to a memfd (or, where that is
 * refused or the caller asks for it, a private temp file: library_image.h),
 * the shim library and libcudart are made global, the image is dlopened
 * RTLD_NOW|RTLD_LOCAL, the AOTInductorModelContainer* entry points are
 * resolved and a container is created. Every failure path and destroy close
 * what was opened and leave no file.
 */
#ifndef AOTRUN_MODEL_LIBRARY_H
#define AOTRUN_MODEL_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"
#include "aot_loader/load_report.h"
#include "shim_lib/aotrun_shim.h"

typedef struct aotrun_model_library aotrun_model_library;

/* What the library reports about constant i (GetConstant* entry points).
 * Strings are owned by the library object, valid while it lives. */
typedef struct aotrun_constant_info {
  const char *name;  /* internal name */
  const char *fqn;   /* original FQN */
  int32_t dtype;     /* ScalarType code */
  int32_t type;      /* ConstantType code (0 when the library can't tell) */
  uint64_t data_size;
  int32_t from_folded;
} aotrun_constant_info;

/* One {internal name, tensor handle} pair for the user-managed constants. */
typedef struct aotrun_constant_pair {
  const char *name;
  AtenTensorHandle handle;
} aotrun_constant_pair;

/* How to load (aotrun_model_library_load_with). Zero-initialised members
 * give the defaults. */
typedef struct aotrun_model_library_config {
  const char *device; /* "cuda", "cuda:N" or "cpu" (required) */
  const char *name;   /* names the library in messages ("forward.so");
                         NULL: the path dlopen was given */
  int temp_file;      /* 1: never a memfd (option library_temp_file) */
  /* Compute capability of the GPU (major * 10 + minor, 90 for sm_90): the
   * library must have kernels it can run (kernel_arch.h), checked before
   * dlopen. 0: no check (cpu, or unknown). */
  uint32_t gpu_arch;
  /* cudaDriverGetVersion (12080 for CUDA 12.8): PTX the driver cannot
   * compile does not count as a kernel for the GPU. 0: not checked. */
  int driver_version;
  /* NULL, or receives the library_write, dlopen and container phases,
   * library_bytes, image kind and kernels (the rest is left alone). */
  aotrun_load_report *report;
} aotrun_model_library_config;

aotrun_status aotrun_model_library_load_with(
    const void *bytes, size_t size, const aotrun_model_library_config *config,
    aotrun_model_library **out, aotrun_error *err);

/* aotrun_model_library_load_with and only the device set. */
aotrun_status aotrun_model_library_load(const void *bytes, size_t size,
                                        const char *device,
                                        aotrun_model_library **out,
                                        aotrun_error *err);

/* Test seam: fn(ctx, phase) is called at "image_written" (the bytes are in
 * their image, not yet dlopened) and "library_opened" (dlopened, no
 * container yet) of every later load, until set again with NULL. For tests
 * only (e.g. a child process stopped there and killed). */
void aotrun_model_library_test_hook(void (*fn)(void *ctx, const char *phase),
                                    void *ctx);
/* Deletes the container, dlcloses, removes the temp file. Accepts NULL. */
void aotrun_model_library_destroy(aotrun_model_library *lib);

size_t aotrun_model_library_num_inputs(const aotrun_model_library *lib);
size_t aotrun_model_library_num_outputs(const aotrun_model_library *lib);
int aotrun_model_library_has_run_single_threaded(
    const aotrun_model_library *lib);
/* The path dlopen was given ("/proc/self/fd/N" for a memfd or an unnamed
 * temp file, else the temp file's name, already unlinked), valid while the
 * library is loaded (for tests and logs). */
const char *aotrun_model_library_path(const aotrun_model_library *lib);
/* Where the bytes live: "memfd", "unnamed temp file" or "temp file". */
const char *aotrun_model_library_image_kind(const aotrun_model_library *lib);
/* The device string the container was created with. */
const char *aotrun_model_library_device(const aotrun_model_library *lib);

/* AOTRUN_ERR_NOT_SUPPORTED when the library lacks constant introspection. */
aotrun_status aotrun_model_library_num_constants(
    const aotrun_model_library *lib, size_t *count, aotrun_error *err);
aotrun_status aotrun_model_library_constant_info(
    const aotrun_model_library *lib, size_t index, aotrun_constant_info *out,
    aotrun_error *err);

/* Zero-copy hand-over of weight tensors (UpdateUserManagedConstantBufferPairs).
 * The container keeps aliases of the handles: pass non-owning views. Every
 * constant that is not folded must be given exactly once, by internal name;
 * an unknown, folded, duplicate or NULL entry is refused before the model
 * sees any of them. The handles stay the caller's (borrowed for the call). */
aotrun_status aotrun_model_library_set_user_managed_constants(
    aotrun_model_library *lib, const aotrun_constant_pair *pairs, size_t count,
    aotrun_error *err);
/* The binary-blob path (GetConstantsBlobSize / UpdateConstantsFromBlob); a
 * second load is refused (2.11 would allocate again without freeing).
 * load_constants_blob trusts that blob holds blob_size bytes; prefer the
 * _sized variant, which checks it. */
aotrun_status aotrun_model_library_blob_size(const aotrun_model_library *lib,
                                             uint64_t *size,
                                             aotrun_error *err);
aotrun_status aotrun_model_library_load_constants_blob(
    aotrun_model_library *lib, const void *blob, aotrun_error *err);
/* Same, refusing (InvalidArgument, both sizes named) a blob whose size is
 * not blob_size. */
aotrun_status aotrun_model_library_load_constants_blob_sized(
    aotrun_model_library *lib, const void *blob, uint64_t size,
    aotrun_error *err);

/* Runs the model once (RunSingleThreaded when the library has it). inputs
 * are stolen by the model; outputs receive new references. Counts must equal
 * num_inputs/num_outputs or the call is refused before the model runs.
 * stream: a cudaStream_t (NULL for the default stream or for cpu models).
 * Ownership: when the call is refused (bad counts, NULL arrays or handles:
 * InvalidArgument) the inputs are untouched and still the caller's; once the
 * model has been called they are consumed, whether it succeeds or not. On
 * any failure every outputs[i] is NULL (partial outputs are deleted). A
 * failure's message includes the shim's last error when there is one.
 * Not thread-safe per library (RunSingleThreaded takes no lock). */
aotrun_status aotrun_model_library_run(aotrun_model_library *lib,
                                       AtenTensorHandle *inputs,
                                       size_t num_inputs,
                                       AtenTensorHandle *outputs,
                                       size_t num_outputs, void *stream,
                                       aotrun_error *err);

/* Deletes each non-NULL output handle once and sets every slot to NULL. A
 * model that returns one buffer twice (`return y, y`) puts the same handle
 * in two slots (2.11's generate_return: output_handles[j] =
 * output_handles[i]): one reference, deleted once. n is an output count:
 * the quadratic duplicate check is cheap. */
void aotrun_model_library_delete_outputs(AtenTensorHandle *outputs, size_t n);

#endif /* AOTRUN_MODEL_LIBRARY_H */
