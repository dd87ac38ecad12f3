/* cli_plugins.c: `aotrun plugins`: what was found, whether it can run, and
 * each backend's identity and devices (ABI 1.1 get_info / devices). */
#include <stdio.h>

#include "plugin_api/cli.h"

static void print_bytes(const char *what, uint64_t bytes) {
  printf("%s %.1f GiB", what, (double)bytes / (1024.0 * 1024.0 * 1024.0));
}

/* "  device 0: NVIDIA H200, 139.8 GiB (free 139.2 GiB), compute 9.0". */
static void print_device(const aotrun_backend *b, int32_t i) {
  aotrun_device_info d;
  if (aotrun_backend_device_info(b, i, &d) != AOTRUN_OK) {
    printf("  device %d: %s\n", (int)i, aotrun_host_last_error());
    return;
  }
  printf("  device %d: %s,", (int)i, d.name);
  print_bytes("", d.total_memory);
  print_bytes(" (free", d.free_memory);
  printf(")");
  if (d.compute_major > 0)
    printf(", compute capability %d.%d", (int)d.compute_major,
           (int)d.compute_minor);
  printf("\n");
}

static void print_identity(const aotrun_backend *b) {
  aotrun_backend_info info;
  if (aotrun_backend_get_info(b, &info) == AOTRUN_OK)
    printf("  version %s, vendor %s, build %s\n", info.version, info.vendor,
           info.build);
  else
    printf("  info: %s\n", aotrun_host_last_error());
  int32_t n = 0;
  if (aotrun_backend_device_count(b, &n) != AOTRUN_OK) {
    printf("  devices: %s\n", aotrun_host_last_error());
    return;
  }
  if (n == 0) printf("  devices: none\n");
  for (int32_t i = 0; i < n; i++) print_device(b, i);
}

int cli_plugins(int argc, char **argv) {
  cli_options o;
  int rc = cli_parse(argc, argv, 2, CLI_PLUGINS_OPTIONS, 0, &o);
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
    print_identity(b);
  }
  if (n == 0 && failures == 0)
    printf("no plugins found (searched --plugin, $AOTRUN_PLUGIN_PATH and %s)\n",
           cli_binary_dir());
  aotrun_registry_destroy(reg);
  return rc;
}
