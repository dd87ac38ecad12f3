/* cli_text.c: terminal-safe output for the CLI: escaped text, cli_fail and
 * the stdout check at exit. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_api/cli.h"

void cli_put_escaped(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p < 0x20 || *p == 0x7f || *p == '\\')
      fprintf(f, "\\x%02x", *p);
    else
      fputc(*p, f);
  }
}

int cli_fail(int code, const char *fmt, ...) {
  char small[1024], *msg = small;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL) {
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  if (msg == NULL) msg = small; /* out of memory: the truncated message */
  fputs("aotrun: ", stderr);
  cli_put_escaped(stderr, n < 0 ? "(unprintable message)" : msg);
  fputc('\n', stderr);
  if (msg != small) free(msg);
  return code;
}

int cli_finish_stdout(int rc) {
  errno = 0;
  int bad = fflush(stdout) != 0 || ferror(stdout);
  if (!bad) return rc;
  int e = errno;
  fprintf(stderr, "aotrun: error writing to standard output: %s\n",
          e != 0 ? strerror(e) : "write failed");
  return rc == CLI_EXIT_OK ? CLI_EXIT_EXECUTE : rc;
}
