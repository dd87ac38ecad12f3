/*
 * tensor.h: the tensor object behind an AtenTensorHandle.
 *
 * A handle is one reference to a tensor impl (sizes, strides, storage
 * offset in elements, dtype, device) which references refcounted storage.
 * new_tensor_handle makes a second handle to the same impl; views make new
 * impls over the same storage. The last handle of an impl drops it, the
 * last impl of a storage frees the memory.
 *
 * Internal, C only (C11 atomics); other code uses the aoti_torch_* getters.
 */
#ifndef AOTRUN_SHIM_TENSOR_H
#define AOTRUN_SHIM_TENSOR_H

#include <stdatomic.h>
#include <stdint.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/storage.h"

/* Most dims a tensor may have (libtorch has no fixed limit; real models
 * stay far below). */
#define AOTRUN_SHIM_MAX_DIMS 64

typedef struct aotrun_tensor_impl {
  atomic_long refcount;
  aotrun_storage *storage; /* NULL: undefined (new_uninitialized_tensor) */
  int64_t ndim;
  int64_t *sizes;   /* = dims */
  int64_t *strides; /* = dims + ndim */
  int64_t storage_offset; /* elements */
  int32_t dtype;
  int32_t device_type;
  int32_t device_index;
  int64_t dims[]; /* sizes then strides */
} aotrun_tensor_impl;

struct AtenTensorOpaque {
  aotrun_tensor_impl *impl;
};

/* Checks a shape from the ABI: ndim in [0, MAX], sizes/strides non-NULL
 * when ndim > 0, no negative size or stride, and computes the number of
 * elements the strided span covers (1 + sum((size-1)*stride), 0 when any
 * size is 0) and numel, both overflow-checked. fn names the shim. */
AOTITorchError aotrun_shape_check(const char *fn, int64_t ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int64_t *span, int64_t *numel);

/* span * itemsize (+ offset * itemsize), overflow-checked, as bytes. */
AOTITorchError aotrun_span_bytes(const char *fn, int64_t span, int64_t offset,
                                 int32_t dtype, size_t *out);

/* A new handle to a new impl over storage (takes a storage reference of
 * its own; the caller keeps its reference). Shape must be checked. */
AOTITorchError aotrun_tensor_new(const char *fn, aotrun_storage *storage,
                                 int64_t ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset,
                                 int32_t dtype, AtenTensorHandle *ret);

/* A new handle to the same impl. */
AOTITorchError aotrun_tensor_new_ref(const char *fn, aotrun_tensor_impl *impl,
                                     AtenTensorHandle *ret);

void aotrun_tensor_impl_release(aotrun_tensor_impl *impl);

/* The handle's impl, failing for NULL or an undefined tensor; name is the
 * argument's name in the message ("self", "src"). */
AOTITorchError aotrun_tensor_get(const char *fn, const char *name,
                                 AtenTensorHandle h, aotrun_tensor_impl **out);

int64_t aotrun_tensor_numel(const aotrun_tensor_impl *t);
/* Elements the strided span covers (see aotrun_shape_check). */
int64_t aotrun_tensor_span(const aotrun_tensor_impl *t);
/* Address of element 0 (NULL when the storage has no memory). */
void *aotrun_tensor_data(const aotrun_tensor_impl *t);
/* Row-major contiguous (size-1 dims' strides do not matter; any size-0
 * dim: yes); the first also for a request before its tensor exists. */
int aotrun_strides_contiguous(int64_t ndim, const int64_t *sizes,
                              const int64_t *strides);
int aotrun_tensor_is_contiguous(const aotrun_tensor_impl *t);
/* No gaps and no overlap: the span holds exactly numel elements. */
int aotrun_tensor_is_dense(const aotrun_tensor_impl *t);
/* Fails unless [offset, offset + span) of dtype fits the storage. */
AOTITorchError aotrun_view_check(const char *fn, const aotrun_storage *s,
                                 int64_t span, int64_t offset, int32_t dtype);

#endif /* AOTRUN_SHIM_TENSOR_H */
