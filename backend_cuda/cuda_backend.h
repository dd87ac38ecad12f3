/*
 * cuda_backend.h: the CUDA backend's per-backend object (the table's
 * backend_data): the backend-wide option values that method handles
 * created afterwards start from. CUDA-free, so its thread rules are tested
 * on the CPU (under TSan: testing/backend/test_cuda_backend_options.c).
 *
 * Thread rules: every function may run in many threads at once and while
 * methods are created (a mutex guards the values). Backend-wide reads never
 * hand out storage another thread can overwrite: into the caller's buffer
 * (get_backend_option), or, for the 1.0 get_option(NULL, ...), into a copy
 * owned by the calling thread, valid until that thread's next backend-wide
 * read (a set from another thread does not touch it).
 */
#ifndef AOTRUN_CUDA_BACKEND_H
#define AOTRUN_CUDA_BACKEND_H

#include <pthread.h>
#include <stddef.h>

#include "aot_loader/aotrun_error.h"
#include "backend_cuda/cuda_options.h"
#include "plugin_api/aotrun_plugin.h"

typedef struct aotrun_cuda_backend {
  const char *name;
  pthread_mutex_t mu;
  int defaults_ready; /* under mu: defaults filled */
  aotrun_cuda_options defaults;
} aotrun_cuda_backend;

/* Designated: the options grow without touching this (they are filled by
 * aotrun_cuda_options_default on first use). */
#define AOTRUN_CUDA_BACKEND_INIT(backend_name) \
  { .name = (backend_name), .mu = PTHREAD_MUTEX_INITIALIZER, .defaults_ready = 0 }

/* A copy of the backend-wide values (for a new method handle). */
void aotrun_cuda_backend_defaults(aotrun_cuda_backend *b,
                                  aotrun_cuda_options *out);

/* set_option(NULL, ...) / set_backend_option. */
aotrun_status aotrun_cuda_backend_set_option(aotrun_cuda_backend *b,
                                             const aotrun_option *option,
                                             aotrun_error *err);

/* get_backend_option: a string value goes into buf[0..buf_size) (too
 * small or NULL: AOTRUN_ERR_INVALID_ARGUMENT naming the key and both
 * sizes; out->string_value NULL). */
aotrun_status aotrun_cuda_backend_get_option(aotrun_cuda_backend *b,
                                             const char *key,
                                             aotrun_option *out, char *buf,
                                             size_t buf_size,
                                             aotrun_error *err);
/* The 1.0 get_option(NULL, ...): a string value points into the calling
 * thread's copy, valid until this thread's next call of this function. */
aotrun_status aotrun_cuda_backend_get_option_1_0(aotrun_cuda_backend *b,
                                                 const char *key,
                                                 aotrun_option *out,
                                                 aotrun_error *err);

#endif /* AOTRUN_CUDA_BACKEND_H */
