/* cli_child.c: see cli_child.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/host/cli_child.h"

int cli_child_runv(const char *aotrun, const char *tmp, char *out,
                   size_t cap, const char *first, va_list ap) {
  const char *argv[64] = {aotrun, first};
  int argc = 2;
  while (argc < 63 && (argv[argc] = va_arg(ap, const char *)) != NULL) argc++;
  argv[argc] = NULL;
  char log[700];
  snprintf(log, sizeof log, "%s/aotrun.log", tmp);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) _exit(126);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(aotrun, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  FILE *f = fopen(log, "rb");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  if (f) fclose(f);
  out[n] = '\0';
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}
