/* failing_entry_plugin.c: a plugin whose entry fails with an unknown code
 * (the host must map it to AOTRUN_ERR_INTERNAL). */
#include "plugin_api/aotrun_plugin.h"

AOTRUN_DECLARE_PLUGIN_ENTRY {
  (void)host_abi_version;
  *out = NULL;
  return 99;
}
