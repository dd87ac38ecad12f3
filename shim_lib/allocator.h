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

#endif /* AOTRUN_SHIM_ALLOCATOR_H */
