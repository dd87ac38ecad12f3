/*
 * allocator.h: where device memory for CUDA tensors comes from: the
 * calling thread's aotrun_shim_allocator (default: cudaMallocAsync /
 * cudaFreeAsync on the current stream).
 */
#ifndef AOTRUN_SHIM_ALLOCATOR_H
#define AOTRUN_SHIM_ALLOCATOR_H

#include "shim_lib/aotrun_shim.h"

/* The calling thread's allocator (the default one when none is set). */
const aotrun_shim_allocator *aotrun_thread_allocator(void);

/* The default allocator: cudaMallocAsync / cudaFreeAsync on the stream. On
 * first use per device it raises the default pool's release threshold so
 * memory is not returned to the driver at every synchronize. */
const aotrun_shim_allocator *aotrun_default_allocator(void);

/* Whether `a` is the default allocator. */
int aotrun_is_default_allocator(const aotrun_shim_allocator *a);

/* The default allocator for a known device (a storage's): a block from the
 * block cache costs no CUDA call; only a miss (cudaMallocAsync) or a free
 * the cache does not keep (cudaFreeAsync) makes `device` current, and
 * restores the caller's device. Same results as the table's alloc/free
 * with `device` current, without the device switch and cudaGetDevice the
 * table's forms need. */
void *aotrun_default_alloc_on(int device, size_t bytes, void *stream);
void aotrun_default_free_on(int device, void *ptr, void *stream);

#endif /* AOTRUN_SHIM_ALLOCATOR_H */
