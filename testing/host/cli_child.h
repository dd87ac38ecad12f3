/*
 * cli_child.h: runs the aotrun CLI as a child process for the C tests of
 * the command line (test_cli_tensor_files.c, test_cli_managed_outputs.c),
 * capturing its stdout and stderr together.
 */
#ifndef AOTRUN_TESTING_HOST_CLI_CHILD_H
#define AOTRUN_TESTING_HOST_CLI_CHILD_H

#include <stdarg.h>
#include <stddef.h>

/* Runs `aotrun` with the arguments `first` and then those of `ap` up to a
 * NULL (at most 62 in all). Its stdout and stderr go to TMP/aotrun.log and
 * are read back into out[0..cap) (NUL-terminated, cut at cap - 1 bytes).
 * Returns the exit code, 128 when it did not exit normally. */
int cli_child_runv(const char *aotrun, const char *tmp, char *out,
                   size_t cap, const char *first, va_list ap);

/* Fails the test (CMocka) unless `needle` occurs in `haystack`. */
void assert_contains(const char *haystack, const char *needle);

#endif /* AOTRUN_TESTING_HOST_CLI_CHILD_H */
