/*
 * copy.h: the strided copy engine behind copy_, clone, clone_preserve_strides
 * and zero_: any strides, broadcasting src, dtype conversion between real
 * dtypes, host<->device in every direction on the current stream.
 */
#ifndef AOTRUN_SHIM_COPY_H
#define AOTRUN_SHIM_COPY_H

#include <stdint.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/tensor.h"

/* A strided view described by raw pointers (need not be a tensor). */
typedef struct aotrun_strided {
  void *data; /* element 0 */
  int32_t dtype;
  int32_t device_type;
  int32_t device_index;
  int64_t ndim;
  const int64_t *sizes;
  const int64_t *strides;
} aotrun_strided;

aotrun_strided aotrun_strided_of(const aotrun_tensor_impl *t);

/* dst = src (src broadcast to dst's shape). blocking: wait for the copy
 * when host memory is involved. fn names the shim in messages. */
AOTITorchError aotrun_copy(const char *fn, const aotrun_strided *dst,
                           const aotrun_strided *src, int blocking);

/* Sets every element of dst to zero. */
AOTITorchError aotrun_zero(const char *fn, const aotrun_strided *dst);

#endif /* AOTRUN_SHIM_COPY_H */
