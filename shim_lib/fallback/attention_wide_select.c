/* attention_wide_select.c: AOTRUN_ATTN_TC=wide selects the wide tensor-core
 * attention kernel (attention_wide.h); the default kernel otherwise. */
#include <stdlib.h>
#include <string.h>

#include "shim_lib/fallback/attention_wide.h"

int aotrun_fb_attn_tc_wide_enabled(void) {
  const char *v = getenv("AOTRUN_ATTN_TC");
  return v != NULL && strcmp(v, "wide") == 0;
}
