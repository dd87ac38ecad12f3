/* cuda_thread_error.c: see cuda_thread_error.h. */
#include "backend_cuda/cuda_thread_error.h"

/* Fixed-size thread-local storage: nothing for deinit or thread exit to
 * free. */
static _Thread_local aotrun_error tls_error;

aotrun_error *aotrun_cuda_thread_error(void) { return &tls_error; }

aotrun_status aotrun_cuda_null_handle(const char *call) {
  return aotrun_error_set(&tls_error, AOTRUN_ERR_INVALID_ARGUMENT,
                          "%s: the method handle is NULL", call);
}
