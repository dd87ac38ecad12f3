/* grad_mode.c: libtorch's thread-local grad mode flag. Nothing here records
 * gradients; models save, clear and restore the flag around a run. */
#include "shim_lib/aotrun_shim.h"

/* On by default, as in libtorch. */
static _Thread_local AOTRUN_SHIM_BOOL tls_grad_enabled = 1;

AOTRUN_SHIM_BOOL aoti_torch_grad_mode_is_enabled(void) {
  return tls_grad_enabled;
}

void aoti_torch_grad_mode_set_enabled(AOTRUN_SHIM_BOOL enabled) {
  tls_grad_enabled = enabled;
}
