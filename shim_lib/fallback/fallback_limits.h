/*
 * fallback_limits.h: constants shared by the C and the CUDA (.cu) side of the
 * fallback ops. Self-contained so the nvcc genrules need no other header.
 */
#ifndef AOTRUN_FALLBACK_LIMITS_H
#define AOTRUN_FALLBACK_LIMITS_H

/* Internal helpers stay out of libaotrun_shim.so's dynamic symbol table. */
#define AOTRUN_FB_HIDDEN __attribute__((visibility("hidden")))

/* Most dims a fallback op accepts (the copy kernels take this many). */
#define AOTRUN_FB_MAX_DIMS 16

#endif /* AOTRUN_FALLBACK_LIMITS_H */
