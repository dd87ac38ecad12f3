/*
 * warm_up_plan.h: which families of one-time library work a method's init
 * does ahead of its first call (aotrun_shim_warm_up's AOTRUN_SHIM_WARM_*
 * bits), from the aoti_torch_* functions its manifest entry says the
 * library imports. Pure C (no CUDA): tested on the CPU.
 */
#ifndef AOTRUN_WARM_UP_PLAN_H
#define AOTRUN_WARM_UP_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* The AOTRUN_SHIM_WARM_* bits for `method` of the manifest: ALLOC always;
 * GEMM when it imports a cuBLAS-backed op (mm, addmm, bmm, baddbmm, addmv,
 * _addmm_activation, mm_dtype); CONV when it imports a convolution. A
 * manifest without "aoti_torch_imports" (written by hand, or by an older
 * exporter), or one that does not parse, gets ALLOC only: nothing is
 * guessed. */
uint32_t aotrun_warm_up_plan(const void *manifest, size_t size,
                             const char *method);

/* One import name's bits (0 when it needs no warm-up). */
uint32_t aotrun_warm_up_bits_of(const char *import);

#endif /* AOTRUN_WARM_UP_PLAN_H */
