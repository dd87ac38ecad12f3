/*
 * kernel_arch.h: which GPU architectures a model library has kernels for,
 * and whether one of them runs on this GPU (docs/loading.md, "Portability
 * check").
 *
 * Where kernels live in a library:
 *   - `.nv_fatbin` sections (nvcc-built code): fatbin containers, magic
 *     0xBA55ED50, each a 16-byte header {magic u32, version u16, header
 *     size u16, payload size u64} and entries {kind u16 (1 PTX, 2 ELF
 *     cubin, 16 LTO-IR), version u16, header size u32, payload size u64,
 *     ..., minor u16 at +24, major u16 at +26 (for PTX: the PTX ISA
 *     version, 9.0 from CUDA 13.0's nvcc), arch u32 at +28, ...};
 *   - cubins embedded as data (AOTInductor's embed_kernel_binary: Triton
 *     kernels as `__<kernel>_start` byte arrays): complete CUDA ELF images
 *     (EM_CUDA 190, ELFOSABI_CUDA 0x41) whose e_flags carry the SM: bits
 *     8-15 from ELF ABI version 8 (CUDA >= 12.8), bits 0-7 before.
 * Every offset and size is checked against the bytes before it is read:
 * any input is safe (testing/fuzz/fuzz_kernel_arch.c).
 */
#ifndef AOTRUN_KERNEL_ARCH_H
#define AOTRUN_KERNEL_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

/* Distinct architectures kept per kind; more are counted, not listed. */
#define AOTRUN_KERNEL_ARCH_MAX 32

typedef struct aotrun_kernel_archs {
  /* SM numbers (major * 10 + minor: 90 = sm_90) of cubins (sass) and of
   * PTX, sorted ascending, without duplicates. */
  uint32_t sass[AOTRUN_KERNEL_ARCH_MAX];
  size_t num_sass;
  uint32_t ptx[AOTRUN_KERNEL_ARCH_MAX];
  /* The lowest PTX ISA version among the PTX entries of ptx[i]
   * (major * 10 + minor: 90 = ISA 9.0); 0 when the entry did not say. */
  uint32_t ptx_isa[AOTRUN_KERNEL_ARCH_MAX];
  size_t num_ptx;
  size_t num_images; /* cubins and PTX entries seen, duplicates included */
} aotrun_kernel_archs;

/* Scans a shared library's bytes (any bytes: the ELF section table is
 * read only where it lies inside them). A library without GPU code gives
 * an empty list. Never fails: malformed parts are skipped. */
void aotrun_kernel_archs_scan(const void *bytes, size_t size,
                              aotrun_kernel_archs *out);

/* Whether the kernels can run on a GPU of compute capability `gpu`
 * (major * 10 + minor): a cubin of the same major and a minor at most the
 * GPU's, or PTX of an arch at most the GPU's (the driver JIT-compiles it).
 * No kernels at all passes. Otherwise AOTRUN_ERR_NOT_SUPPORTED:
 * "forward.so has kernels for sm_90 only; this GPU is sm_80 (cuda:0):
 * re-export the program on this GPU (or for sm_80)". `what` names the
 * library, `device` the GPU ("cuda:0"). */
aotrun_status aotrun_kernel_archs_check(const aotrun_kernel_archs *archs,
                                        uint32_t gpu, const char *what,
                                        const char *device, aotrun_error *err);

/* What the check compares the kernels with. */
typedef struct aotrun_kernel_target {
  uint32_t gpu;           /* compute capability, major * 10 + minor */
  /* cudaDriverGetVersion (12080 = CUDA 12.8); 0: unknown, PTX ISA not
   * checked. */
  int driver_version;
  const char *device;     /* "cuda:0", for messages */
} aotrun_kernel_target;

/* aotrun_kernel_archs_check, and PTX counts only when the driver can
 * compile its ISA version (aotrun_ptx_isa_max). When every kernel that
 * could run is PTX too new for the driver: AOTRUN_ERR_NOT_SUPPORTED
 * naming the ISA, the driver's CUDA version and what to do ("update the
 * NVIDIA driver to one for CUDA 13.0 or later, or re-export ..."). */
aotrun_status aotrun_kernel_archs_check_target(const aotrun_kernel_archs *a,
                                               const aotrun_kernel_target *t,
                                               const char *what,
                                               aotrun_error *err);

/* The highest PTX ISA version (major * 10 + minor) a driver of CUDA
 * version `driver` (12080) compiles, from NVIDIA's PTX ISA release table;
 * UINT32_MAX for a driver newer than the table (it knows better than we
 * do) and 0 for one older than CUDA 11.0. */
uint32_t aotrun_ptx_isa_max(int driver);

/* The first CUDA version (12080) whose driver compiles PTX ISA `isa`, or
 * 0 when the table does not know it. */
int aotrun_ptx_isa_cuda(uint32_t isa);

/* "sm_80, sm_90, compute_90 (PTX)" into buf (truncated); "none" when
 * empty. Returns buf. */
const char *aotrun_kernel_archs_describe(const aotrun_kernel_archs *archs,
                                         char *buf, size_t size);

#endif /* AOTRUN_KERNEL_ARCH_H */
