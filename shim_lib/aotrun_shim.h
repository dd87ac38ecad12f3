/*
 * aotrun_shim.h: the aoti_torch_* C ABI that AOTInductor-compiled model
 * libraries call, as implemented by libaotrun_shim.so, plus the few aotrun_shim_*
 * functions the rest of aotrun uses (error text, allocator hooks).
 *
 * Declarations are our own, written to match the ABI of torch 2.11's
 * torch/csrc/inductor/aoti_torch/c/shim.h (codes in ../shared/DESIGN.md §2.3).
 */
#ifndef AOTRUN_SHIM_H
#define AOTRUN_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AOTRUN_SHIM_API __attribute__((visibility("default")))
#else
#define AOTRUN_SHIM_API
#endif

typedef int32_t AOTITorchError;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1

/* A handle is one reference to a tensor (see DESIGN.md §2.4). */
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque *AtenTensorHandle;

struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque *CUDAStreamGuardHandle;

/* The rest of the ABI is declared below by shim_lib's owner. */

#ifdef __cplusplus
}
#endif

#endif /* AOTRUN_SHIM_H */
