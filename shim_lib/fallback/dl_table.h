/*
 * dl_table.h: a vendor library opened with dlopen at its first use and a
 * table of its functions resolved by name (cuBLAS/cuBLASLt in
 * cublas_loader.c, cuDNN in cudnn_loader.c), so that libaotrun_shim.so has
 * no link-time dependency on them and programs that never call them never
 * load them. The errors name the op that needed the library, the library,
 * the missing symbol and how to point aotrun at another copy.
 */
#ifndef AOTRUN_FB_DL_TABLE_H
#define AOTRUN_FB_DL_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/fallback_tensor.h" /* AOTRUN_FB_HIDDEN */

/* What the messages say about a library. */
typedef struct aotrun_fb_dl_library {
  const char *what;     /* "cuBLAS" */
  const char *needed;   /* "matrix multiplications" */
  const char *install;  /* "the CUDA 13 cuBLAS (the toolkit's lib64, ...)" */
  const char *required; /* "CUDA 13's cuBLAS" */
  const char *env;      /* the variable naming another copy */
} aotrun_fb_dl_library;

/* One function of a table: its exported name and where its pointer goes. */
typedef struct aotrun_fb_dl_symbol {
  const char *name;
  size_t offset;
} aotrun_fb_dl_symbol;

/* dlopen(name, RTLD_NOW | RTLD_LOCAL) into *handle; on failure the shim's
 * error names op, the library, dlerror() and the way out. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_dl_open(const char *op,
                                 const aotrun_fb_dl_library *lib,
                                 const char *name, void **handle);

/* Each symbol's address stored at its offset in `table`; on the first
 * missing one the shim's error names op, the library file and the symbol. */
AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_dl_resolve(const char *op,
                                    const aotrun_fb_dl_library *lib,
                                    const char *name, void *handle,
                                    const aotrun_fb_dl_symbol *symbols,
                                    size_t count, void *table);

/* A table loaded once per process: `load` runs under the lock until it
 * succeeds and returns the complete table; afterwards every caller gets it
 * without the lock. */
typedef struct aotrun_fb_dl_once {
  pthread_mutex_t lock;
  _Atomic(const void *) table;
} aotrun_fb_dl_once;

#define AOTRUN_FB_DL_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, NULL}

AOTRUN_FB_HIDDEN AOTITorchError aotrun_fb_dl_once_get(aotrun_fb_dl_once *once,
                                     AOTITorchError (*load)(const char *op,
                                                            const void **table),
                                     const char *op, const void **table);

/* The table once loaded, else NULL (no load). */
AOTRUN_FB_HIDDEN const void *aotrun_fb_dl_once_peek(aotrun_fb_dl_once *once);

#endif /* AOTRUN_FB_DL_TABLE_H */
