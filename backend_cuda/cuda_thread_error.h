/*
 * cuda_thread_error.h: the CUDA backend's per-thread error for calls that
 * have no method handle to keep it in: a failed init, backend-wide options,
 * any call given a NULL handle. The ABI's last_error(NULL) returns it.
 */
#ifndef AOTRUN_CUDA_THREAD_ERROR_H
#define AOTRUN_CUDA_THREAD_ERROR_H

#include "aot_loader/aotrun_error.h"

/* The calling thread's error (static thread-local storage, never NULL). */
aotrun_error *aotrun_cuda_thread_error(void);

/* Records "<call>: the method handle is NULL" as the thread's error and
 * returns AOTRUN_ERR_INVALID_ARGUMENT. */
aotrun_status aotrun_cuda_null_handle(const char *call);

#endif /* AOTRUN_CUDA_THREAD_ERROR_H */
