/* cli_plugins.c: `aotrun plugins`: what was found and whether it can run. */
#include <stdio.h>

#include "plugin_api/cli.h"

int cli_plugins(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, CLI_OPT_PLUGIN, 0, &o);
  if (rc != CLI_EXIT_OK) return rc;
  aotrun_registry *reg = NULL;
  size_t failures = 0;
  rc = cli_load_plugins(&o, 1, &reg, &failures);
  size_t n = aotrun_registry_count(reg);
  for (size_t i = 0; i < n; i++) {
    const aotrun_backend *b = aotrun_registry_at(reg, i);
    uint32_t v = aotrun_backend_abi_version(b);
    char reason[256];
    int ok = aotrun_backend_is_available(b, reason, sizeof reason);
    printf("%s\tABI %u.%u\t%s%s%s\t%s\n", aotrun_backend_name(b),
           AOTRUN_VERSION_MAJOR(v), AOTRUN_VERSION_MINOR(v),
           ok ? "available" : "unavailable", ok ? "" : ": ", ok ? "" : reason,
           aotrun_backend_path(b));
  }
  if (n == 0 && failures == 0)
    printf("no plugins found (searched --plugin, $AOTRUN_PLUGIN_PATH and %s)\n",
           cli_binary_dir());
  aotrun_registry_destroy(reg);
  return rc;
}
