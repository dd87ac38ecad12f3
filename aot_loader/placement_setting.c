/* placement_setting.c: see placement_setting.h. */
#include "aot_loader/placement_setting.h"

#include <stdlib.h>
#include <string.h>

int aotrun_output_placement_wanted(void) {
  const char *env = getenv("AOTRUN_OUTPUT_PLACEMENT");
  return env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)
             ? env[0] == '1'
             : AOTRUN_OUTPUT_PLACEMENT_DEFAULT;
}
