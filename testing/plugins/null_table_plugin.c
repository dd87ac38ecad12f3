/* null_table_plugin.c: a broken plugin whose entry returns OK and no table. */
#include "plugin_api/aotrun_plugin.h"

AOTRUN_DECLARE_PLUGIN_ENTRY {
  (void)host_abi_version;
  *out = NULL;
  return AOTRUN_OK;
}
