/* crash_probe.c: for test_crash_backtrace.sh, dies of SIGSEGV two calls
 * deep (crash_probe_outer -> crash_probe_inner), or exits 0 given "ok". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Not static, and the binary linked -rdynamic: dladdr names them. */
__attribute__((noinline)) int crash_probe_inner(volatile int *p) {
  return *p;
}

__attribute__((noinline)) int crash_probe_outer(volatile int *p) {
  return crash_probe_inner(p) + 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ok") == 0) {
    printf("probe ok\n");
    return 0;
  }
  /* An unmapped address that is not null: UBSan's null check would stop
   * the run before the fault. */
  volatile int *bad = (volatile int *)(uintptr_t)16;
  return crash_probe_outer(bad);
}
