/* cuda_managed_output.c: see cuda_managed_output.h. */
#include "backend_cuda/cuda_managed_output.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/dl_dtype.h"
#include "plugin_api/aotrun_plugin.h"

#define SHIM_DEVICE_CPU 0

typedef struct managed {
  DLManagedTensor mt; /* first: the deleter gets &mt */
  AtenTensorHandle handle;
  aotrun_managed_owner owner;
  int64_t shape[AOTRUN_MAX_DIMS];
  int64_t strides[AOTRUN_MAX_DIMS];
} managed;

static atomic_long g_alive;

long aotrun_cuda_managed_outputs_alive(void) {
  return atomic_load(&g_alive);
}

/* Drops the handle on the owner's stream of its device (see the header);
 * a CPU tensor needs no guard. Then releases the owner. */
static void drop_handle(AtenTensorHandle h, const DLDevice *device,
                        const aotrun_managed_owner *owner) {
  CUDAStreamGuardHandle guard = NULL;
  if (device->device_type == kDLCUDA &&
      aoti_torch_create_cuda_stream_guard(owner->stream, device->device_id,
                                          &guard) != AOTI_TORCH_SUCCESS)
    guard = NULL; /* still freed, on the thread's current stream */
  aoti_torch_delete_tensor_object(h);
  if (guard != NULL) (void)aoti_torch_delete_cuda_stream_guard(guard);
  if (owner->release != NULL) owner->release(owner->ctx);
}

static void deleter(DLManagedTensor *self) {
  if (self == NULL) return;
  managed *m = (managed *)self;
  drop_handle(m->handle, &m->mt.dl_tensor.device, &m->owner);
  atomic_fetch_sub(&g_alive, 1);
  free(m);
}

static aotrun_status describe(managed *m, const char *what,
                              aotrun_error *err) {
  AtenTensorHandle h = m->handle;
  int64_t ndim = 0, *sizes = NULL, *strides = NULL;
  int32_t dtype = 0, device_type = 0, device_index = 0;
  void *data = NULL;
  if (aoti_torch_get_dim(h, &ndim) || aoti_torch_get_sizes(h, &sizes) ||
      aoti_torch_get_strides(h, &strides) ||
      aoti_torch_get_dtype(h, &dtype) || aoti_torch_get_data_ptr(h, &data) ||
      aoti_torch_get_device_type(h, &device_type) ||
      aoti_torch_get_device_index(h, &device_index))
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "%s: reading the tensor failed: %s", what,
                            aotrun_shim_last_error());
  DLTensor *t = &m->mt.dl_tensor;
  if (ndim < 0 || ndim > AOTRUN_MAX_DIMS ||
      !aotrun_dl_dtype_from_scalar_type(dtype, &t->dtype))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: %lld dims of scalar type %d cannot cross "
                            "the ABI (at most %d dims)",
                            what, (long long)ndim, (int)dtype,
                            AOTRUN_MAX_DIMS);
  memcpy(m->shape, sizes, (size_t)ndim * sizeof *sizes);
  memcpy(m->strides, strides, (size_t)ndim * sizeof *strides);
  t->data = data;
  t->byte_offset = 0;
  t->ndim = (int32_t)ndim;
  t->shape = m->shape;
  t->strides = m->strides;
  t->device = device_type == SHIM_DEVICE_CPU
                  ? (DLDevice){kDLCPU, 0}
                  : (DLDevice){kDLCUDA, device_index};
  return AOTRUN_OK;
}

/* The handle's device ({kDLCPU, 0} when it cannot be read). */
static DLDevice device_of(AtenTensorHandle h) {
  int32_t type = SHIM_DEVICE_CPU, index = 0;
  if (aoti_torch_get_device_type(h, &type) ||
      aoti_torch_get_device_index(h, &index))
    return (DLDevice){kDLCPU, 0};
  return type == SHIM_DEVICE_CPU ? (DLDevice){kDLCPU, 0}
                                 : (DLDevice){kDLCUDA, index};
}

aotrun_status aotrun_cuda_managed_output(AtenTensorHandle h, const char *what,
                                         const aotrun_managed_owner *owner,
                                         DLManagedTensor **out,
                                         aotrun_error *err) {
  *out = NULL;
  aotrun_managed_owner none = {NULL, NULL, NULL};
  if (owner == NULL) owner = &none;
  DLDevice device = device_of(h);
  managed *m = calloc(1, sizeof *m);
  if (m == NULL) {
    drop_handle(h, &device, owner);
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "%s: out of memory for its DLManagedTensor",
                            what);
  }
  m->handle = h;
  m->owner = *owner;
  aotrun_status st = describe(m, what, err);
  if (st != AOTRUN_OK) {
    drop_handle(h, &device, owner);
    free(m);
    return st;
  }
  m->mt.manager_ctx = m;
  m->mt.deleter = deleter;
  atomic_fetch_add(&g_alive, 1);
  *out = &m->mt;
  return AOTRUN_OK;
}
