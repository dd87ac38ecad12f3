/* attention_f32_select.c: AOTRUN_ATTN_F32=tiled selects the register-tiled
 * float32 attention kernel (attention_f32.h); the default SIMT kernel
 * otherwise. */
#include <stdlib.h>
#include <string.h>

#include "shim_lib/fallback/attention_f32.h"

int aotrun_fb_attn_f32_tiled_enabled(void) {
  const char *v = getenv("AOTRUN_ATTN_F32");
  return v != NULL && strcmp(v, "tiled") == 0;
}
