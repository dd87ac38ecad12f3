/*
 * fallback_abi.h: the CUDA fallback ops this package exports (signatures of
 * torch 2.11's aoti_torch/generated/c_shim_cuda.h, our own declarations).
 *
 * Everything else (types, tensor getters, empty_strided, delete, the
 * aotrun_shim_* hooks) comes from shim_lib/aotrun_shim.h: the fallback ops
 * call the shim only through its public functions.
 */
#ifndef AOTRUN_FALLBACK_ABI_H
#define AOTRUN_FALLBACK_ABI_H

#include <stdint.h>

#include "shim_lib/aotrun_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = self @ mat2 (2-D). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out,
                                                      AtenTensorHandle self,
                                                      AtenTensorHandle mat2);
/* out = beta * self + alpha * (mat1 @ mat2); self broadcasts to out's shape;
 * beta == 0 ignores self (NaN included). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_addmm_out(
    AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, double beta, double alpha);
/* out[b] = self[b] @ mat2[b] (3-D). */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out,
                                                       AtenTensorHandle self,
                                                       AtenTensorHandle mat2);
/* *ret0 = self[indices] (new reference). indices[i] points at a handle or is
 * NULL for None (Tensor?[]). Refuses a bool mask inside a graph capture. */
AOTRUN_SHIM_API AOTITorchError aoti_torch_cuda_index_Tensor(
    AtenTensorHandle self, const AtenTensorHandle **indices,
    int64_t indices_len_, AtenTensorHandle *ret0);

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_FALLBACK_ABI_H */
