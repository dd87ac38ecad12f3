/*
 * crash_backtrace.c: an LD_PRELOAD library that prints the native stack of
 * a process that dies of a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT), then lets the signal kill it as it would have:
 *
 *   LD_PRELOAD=libcrash_backtrace.so python3 -c '...'   # torch's runner
 *
 * For the GPU machine, which has no gdb: torch's AOTI runner dies there
 * with SIGSEGV on its own package, and Python's faulthandler shows only
 * the Python frames (testing/gpu/probe_torch_runner.py). Each frame is
 * printed as its library and offset (for addr2line or nm on that machine)
 * and the nearest dynamic symbol. Python's faulthandler, installed later,
 * runs first and then hands the signal on to this handler.
 * A development tool, not linked into anything: built by
 * testing/gpu/build_gpu_bundle.sh, and by Bazel for its CPU test
 * (test_crash_backtrace.sh).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, sigaltstack */
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
/* Its own stack: a stack overflow is one of the crashes to report. */
static char g_alt_stack[1 << 16];

static void say(const char *text) {
  size_t n = strlen(text);
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= (size_t)w;
  }
}

/* One frame: "#i 0xPC lib+0xoff (symbol+0xoff)". */
static void print_frame(int i, void *pc) {
  char line[768];
  Dl_info info;
  memset(&info, 0, sizeof info);
  if (dladdr(pc, &info) == 0 || info.dli_fname == NULL) {
    snprintf(line, sizeof line, "crash_backtrace:   #%d %p (no library)\n", i, pc);
  } else {
    uintptr_t off = (uintptr_t)pc - (uintptr_t)info.dli_fbase;
    if (info.dli_sname != NULL)
      snprintf(line, sizeof line, "crash_backtrace:   #%d %p %s+0x%lx (%s+0x%lx)\n", i,
               pc, info.dli_fname, (unsigned long)off, info.dli_sname,
               (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_saddr));
    else
      snprintf(line, sizeof line, "crash_backtrace:   #%d %p %s+0x%lx\n", i, pc,
               info.dli_fname, (unsigned long)off);
  }
  say(line);
}

static void on_fatal(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  char head[160];
  snprintf(head, sizeof head,
           "crash_backtrace: signal %d (%s), fault address %p\n", sig,
           sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", si->si_addr);
  say(head);
  void *frames[64];
  int n = backtrace(frames, 64);
  for (int i = 0; i < n; i++) print_frame(i, frames[i]);
  say("crash_backtrace: end\n");
  /* SA_RESETHAND put the default action back: the signal kills the
   * process as it would have (a core, the exit status). */
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void *warm[1];
  (void)backtrace(warm, 1); /* loads libgcc_s now, not inside the handler */
  stack_t ss = {.ss_sp = g_alt_stack, .ss_size = sizeof g_alt_stack, .ss_flags = 0};
  (void)sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof kSignals / sizeof *kSignals; i++)
    (void)sigaction(kSignals[i], &sa, NULL);
}
