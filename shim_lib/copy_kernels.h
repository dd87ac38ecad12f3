/*
 * copy_kernels.h: the CUDA strided copy (copy_kernels.cu), callable from C.
 */
#ifndef AOTRUN_SHIM_COPY_KERNELS_H
#define AOTRUN_SHIM_COPY_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AOTRUN_COPY_MAX_DIMS 64

/* An elementwise copy over sizes (after broadcasting and merging dims);
 * strides in elements of each side's dtype. ndim 0 is one element. */
typedef struct aotrun_copy_plan {
  int32_t ndim;
  int64_t numel;
  int64_t sizes[AOTRUN_COPY_MAX_DIMS];
  int64_t dst_strides[AOTRUN_COPY_MAX_DIMS];
  int64_t src_strides[AOTRUN_COPY_MAX_DIMS];
} aotrun_copy_plan;

/* Queues dst[i] = convert(src[i]) on stream (current device). src NULL
 * writes zeros. Dtypes must be equal or both real (aotrun_dtype_is_real).
 * Returns a cudaError_t (0 on success). */
int aotrun_cuda_strided_copy(void *dst, int32_t dst_dtype, const void *src,
                             int32_t src_dtype, const aotrun_copy_plan *plan,
                             void *stream);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_COPY_KERNELS_H */
