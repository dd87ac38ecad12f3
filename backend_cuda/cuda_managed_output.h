/*
 * cuda_managed_output.h: a backend-allocated output (execute_ex's
 * managed_outputs) as a DLPack 0.6 DLManagedTensor that owns one shim
 * tensor handle (CUDA-free: only the shim's API, so CPU tests drive it).
 *
 * The DLTensor describes the handle's memory: data (storage offset
 * included, byte_offset 0), device, dtype, shape and row-major strides
 * (the runner hands over only row-major tensors, copying the others).
 *
 * The deleter may run on any thread, once, also after the method was
 * destroyed; the plugin library must still be loaded. It drops the
 * reference inside the shim's stream guard of the owner's stream (the
 * method's stream the tensor was made on, kept alive by the owner's
 * reference until then; NULL: the legacy default stream) and device, then
 * releases the owner. The shim returns the memory to its allocator ordered
 * on that stream: the block cache hands it to the method's next
 * allocations of that size, as if the model had freed it itself, so a host
 * that takes a managed output on every call does not fill the cache with
 * blocks no stream reuses. The caller therefore calls the deleter once no
 * queued work reads the tensor any more (DLPack's rule: after
 * synchronising the stream that reads it, or ordering that stream before
 * the method's next call, e.g. passing it as execute_ex's stream). The
 * thread's device and current shim stream are restored.
 */
#ifndef AOTRUN_CUDA_MANAGED_OUTPUT_H
#define AOTRUN_CUDA_MANAGED_OUTPUT_H

#include <dlpack/dlpack.h>

#include "aot_loader/aotrun_error.h"
#include "shim_lib/aotrun_shim.h"

/* Who the memory goes back to when the deleter runs. */
typedef struct aotrun_managed_owner {
  void *stream;               /* cudaStream_t the free is ordered on */
  void (*release)(void *ctx); /* after the free; NULL: nothing to release */
  void *ctx;
} aotrun_managed_owner;

/* Wraps h. Takes over h and the owner's reference, also on failure (then
 * dropped and released at once). `what` names the output in messages
 * ("output 0 (y)"). owner may be NULL (legacy stream, nothing released). */
aotrun_status aotrun_cuda_managed_output(AtenTensorHandle h, const char *what,
                                         const aotrun_managed_owner *owner,
                                         DLManagedTensor **out,
                                         aotrun_error *err);

/* How many managed outputs are alive in this process (made and not yet
 * deleted): tests check deleters ran. */
long aotrun_cuda_managed_outputs_alive(void);

#endif /* AOTRUN_CUDA_MANAGED_OUTPUT_H */
