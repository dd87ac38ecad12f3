/* storage.c: refcounted tensor memory on the host or a CUDA device. */
#include "shim_lib/storage.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim_lib/allocator.h"
#include "shim_lib/cuda_context.h"
#include "shim_lib/dtype.h"

/* Host tensors are 64-byte aligned like libtorch's CPU allocator. */
#define AOTRUN_HOST_ALIGN 64

static aotrun_storage *storage_shell(const char *fn, int32_t device_type,
                                     int32_t device_index, size_t nbytes) {
  aotrun_storage *s = calloc(1, sizeof *s);
  if (!s) {
    aotrun_shim_fail("%s: out of host memory", fn);
    return NULL;
  }
  atomic_init(&s->refcount, 1);
  s->nbytes = nbytes;
  s->device_type = device_type;
  s->device_index = device_index;
  s->alloc_seq = -1;
  return s;
}

static AOTITorchError alloc_host(const char *fn, aotrun_storage *s,
                                 int pinned) {
  if (pinned) {
    cudaError_t e = cudaMallocHost(&s->data, s->nbytes);
    if (e != cudaSuccess) return aotrun_cuda_fail(fn, "cudaMallocHost", e);
    s->kind = AOTRUN_MEM_PINNED;
    return AOTI_TORCH_SUCCESS;
  }
  size_t rounded = (s->nbytes + AOTRUN_HOST_ALIGN - 1) / AOTRUN_HOST_ALIGN *
                   AOTRUN_HOST_ALIGN;
  if (rounded < s->nbytes)
    return aotrun_shim_fail("%s: %zu bytes overflow the host allocator", fn,
                            s->nbytes);
  s->data = aligned_alloc(AOTRUN_HOST_ALIGN, rounded);
  if (!s->data)
    return aotrun_shim_fail("%s: out of host memory allocating %zu bytes", fn,
                            s->nbytes);
  s->kind = AOTRUN_MEM_HOST;
  return AOTI_TORCH_SUCCESS;
}

/* The allocator with the storage's device current (a custom one needs
 * it; the default one switches only on a cache miss, see allocator.h). */
static void *device_alloc(const char *fn, const aotrun_shim_allocator *a,
                          aotrun_storage *s) {
  void *stream = aotrun_cuda_stream_for(s->device_index);
  if (aotrun_is_default_allocator(a))
    return aotrun_default_alloc_on(s->device_index, s->nbytes, stream);
  aotrun_device_scope scope;
  if (aotrun_cuda_device_enter(fn, s->device_index, &scope)) return NULL;
  void *p = a->alloc(a->ctx, s->nbytes, stream);
  aotrun_cuda_device_exit(&scope);
  return p;
}

static AOTITorchError alloc_device(const char *fn, aotrun_storage *s) {
  const aotrun_shim_allocator *a = aotrun_thread_allocator();
  aotrun_shim_clear_error();
  s->data = device_alloc(fn, a, s);
  if (!s->data) {
    /* The allocator (or the device switch) may have said why. */
    char why[512];
    snprintf(why, sizeof why, "%s", aotrun_shim_last_error());
    return aotrun_shim_fail("%s: cannot allocate %zu bytes on cuda:%d%s%s", fn,
                            s->nbytes, (int)s->device_index,
                            why[0] ? ": " : "", why);
  }
  s->allocator = *a;
  s->kind = AOTRUN_MEM_DEVICE;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_storage_new(const char *fn, int32_t device_type,
                                  int32_t device_index, size_t nbytes,
                                  int pinned, aotrun_storage **out) {
  *out = NULL;
  if (device_type != AOTRUN_DEV_CPU && device_type != AOTRUN_DEV_CUDA)
    return aotrun_shim_fail("%s: device type %d (%s) is not supported (cpu and cuda are)",
                            fn, (int)device_type, aotrun_device_name(device_type));
  if (pinned && device_type != AOTRUN_DEV_CPU)
    return aotrun_shim_fail("%s: pinned memory is host memory, got device type %s",
                            fn, aotrun_device_name(device_type));
  aotrun_storage *s = storage_shell(fn, device_type, device_index, nbytes);
  if (!s) return AOTI_TORCH_FAILURE;
  AOTITorchError err = AOTI_TORCH_SUCCESS;
  if (nbytes == 0) {
    s->kind = AOTRUN_MEM_BORROWED; /* nothing to free */
  } else if (device_type == AOTRUN_DEV_CPU) {
    err = alloc_host(fn, s, pinned);
  } else {
    err = alloc_device(fn, s);
  }
  if (err) {
    free(s);
    return err;
  }
  *out = s;
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_storage_lend(const char *fn, void *data, size_t nbytes,
                                   int32_t device_type, int32_t device_index,
                                   int64_t *live, aotrun_storage **out) {
  *out = storage_shell(fn, device_type, device_index, nbytes);
  if (!*out) return AOTI_TORCH_FAILURE;
  (*out)->data = data;
  (*out)->kind = AOTRUN_MEM_LENT;
  (*out)->lent_live = live;
  if (live) __atomic_fetch_add(live, 1, __ATOMIC_RELAXED);
  return AOTI_TORCH_SUCCESS;
}

AOTITorchError aotrun_storage_borrow(const char *fn, void *data,
                                     size_t nbytes, int32_t device_type,
                                     int32_t device_index,
                                     aotrun_storage **out) {
  *out = storage_shell(fn, device_type, device_index, nbytes);
  if (!*out) return AOTI_TORCH_FAILURE;
  (*out)->data = data;
  (*out)->kind = AOTRUN_MEM_BORROWED;
  return AOTI_TORCH_SUCCESS;
}

void aotrun_storage_retain(aotrun_storage *s) {
  atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

static void free_device(aotrun_storage *s) {
  /* Stream-ordered on the current stream: kernels queued there may still
   * read this memory. */
  void *stream = aotrun_cuda_stream_for(s->device_index);
  if (aotrun_is_default_allocator(&s->allocator)) {
    aotrun_default_free_on(s->device_index, s->data, stream);
    return;
  }
  aotrun_device_scope scope;
  int entered = aotrun_cuda_device_enter("aoti_torch_delete_tensor_object",
                                         s->device_index, &scope) == 0;
  s->allocator.free(s->allocator.ctx, s->data, stream);
  if (entered) aotrun_cuda_device_exit(&scope);
}

void aotrun_storage_release(aotrun_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
    return;
  switch (s->kind) {
    case AOTRUN_MEM_HOST: free(s->data); break;
    case AOTRUN_MEM_PINNED: (void)cudaFreeHost(s->data); break;
    case AOTRUN_MEM_DEVICE: free_device(s); break;
    case AOTRUN_MEM_BORROWED: break;
    case AOTRUN_MEM_LENT:
      if (s->lent_live) __atomic_fetch_sub(s->lent_live, 1, __ATOMIC_RELEASE);
      break;
  }
  free(s);
}
