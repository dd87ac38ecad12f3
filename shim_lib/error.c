/* error.c: the thread-local shim error message, warnings and the one
 * aborting check. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim_lib/aotrun_shim.h"

#define AOTRUN_SHIM_ERROR_SIZE 1024

/* Per thread: models may run on several host threads at once. */
static _Thread_local char tls_error[AOTRUN_SHIM_ERROR_SIZE];

AOTITorchError aotrun_shim_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_error, sizeof tls_error, fmt, ap);
  va_end(ap);
  return AOTI_TORCH_FAILURE;
}

const char *aotrun_shim_last_error(void) { return tls_error; }

void aotrun_shim_clear_error(void) { tls_error[0] = '\0'; }

void aoti_torch_warn(const char *func, const char *file, uint32_t line,
                     const char *msg) {
  (void)func;
  fprintf(stderr, "aotrun warning [%s:%u]: %s\n", file ? file : "?",
          (unsigned)line, msg ? msg : "");
}

void aoti_torch_check(AOTRUN_SHIM_BOOL cond, const char *func,
                      const char *file, uint32_t line, const char *msg) {
  if (cond) return;
  /* Generated C++ expects this to throw; a C library cannot, so report and
   * abort (the only abort in the shim library). */
  fprintf(stderr,
          "aotrun: model check failed in %s [%s:%u]: %s\n"
          "aotrun: aoti_torch_check cannot throw from C: aborting\n",
          func ? func : "?", file ? file : "?", (unsigned)line,
          msg ? msg : "");
  fflush(stderr);
  abort();
}
