/*
 * test_library_image.c: where a model library's bytes live while loaded
 * (aot_loader/library_image.h): a memfd by default, an unnamed temp file
 * or a named one as fallbacks (forced through the test seam
 * aotrun_library_image_test_refuse and the library_temp_file option), and
 * nothing left in $TMPDIR even when the process is SIGKILLed in the middle
 * of a load (a child stopped at a seam point of model_library.c).
 *
 * argv: fixture_model.so
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "aot_loader/library_image.h"
#include "aot_loader/model_library.h"
#include "testing/loader/loader_test_util.h"

static test_bytes g_fixture;

static int setup(void **state) {
  (void)state;
  test_tmpdir_begin();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  aotrun_library_image_test_refuse(0);
  aotrun_model_library_test_hook(NULL, NULL);
  test_tmpdir_end();
  return 0;
}

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

static aotrun_model_library *load(int temp_file, aotrun_load_report *r) {
  aotrun_model_library_config c = {
      .device = "cpu", .name = "forward.so", .temp_file = temp_file,
      .report = r};
  aotrun_model_library *lib = NULL;
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_model_library_load_with(g_fixture.data, g_fixture.size, &c, &lib,
                                     &err) != AOTRUN_OK)
    fail_msg("load failed: %s", err.message);
  return lib;
}

/* ---- which image ---- */

static void test_memfd_by_default(void **state) {
  (void)state;
  aotrun_load_report r;
  aotrun_load_report_init(&r);
  aotrun_model_library *lib = load(0, &r);
  assert_string_equal(aotrun_model_library_image_kind(lib), "memfd");
  assert_int_equal(strncmp(aotrun_model_library_path(lib), "/proc/self/fd/",
                           14),
                   0);
  assert_int_equal(test_tmpdir_count(), 0); /* never on disk */
  /* /proc names the descriptor after the memfd. */
  char link[256] = "";
  ssize_t n = readlink(aotrun_model_library_path(lib), link, sizeof link - 1);
  assert_true(n > 0);
  link[n] = '\0';
  assert_contains(link, "memfd:aotrun-model");
  assert_string_equal(r.image, "memfd");
  assert_string_equal(r.image_note, "");
  assert_int_equal(r.library_bytes, g_fixture.size);
  assert_true(r.phase_ns[AOTRUN_LOAD_LIBRARY_WRITE] >= 0);
  assert_true(r.phase_ns[AOTRUN_LOAD_DLOPEN] > 0);
  assert_true(r.phase_ns[AOTRUN_LOAD_CONTAINER] >= 0);
  assert_int_equal(r.phase_ns[AOTRUN_LOAD_WEIGHT_READ], -1);
  assert_string_equal(r.kernels, "none"); /* a CPU library */
  aotrun_model_library_destroy(lib);
}

/* Two loads of the same bytes hold two descriptors: /proc/self/fd/N names
 * stay unique while loaded (glibc finds loaded objects by name). */
static void test_two_memfds_two_names(void **state) {
  (void)state;
  aotrun_model_library *a = load(0, NULL);
  aotrun_model_library *b = load(0, NULL);
  assert_string_not_equal(aotrun_model_library_path(a),
                          aotrun_model_library_path(b));
  aotrun_model_library_destroy(a);
  aotrun_model_library *c = load(0, NULL); /* may reuse a's number */
  assert_string_not_equal(aotrun_model_library_path(b),
                          aotrun_model_library_path(c));
  aotrun_model_library_destroy(c);
  aotrun_model_library_destroy(b);
}

static void test_option_forces_a_file(void **state) {
  (void)state;
  aotrun_load_report r;
  aotrun_load_report_init(&r);
  aotrun_model_library *lib = load(1, &r);
  assert_string_equal(aotrun_model_library_image_kind(lib),
                      "unnamed temp file");
  assert_string_equal(r.image, "unnamed temp file");
  assert_contains(r.image_note, "memfd: not used (library_temp_file)");
  char link[4300] = "";
  ssize_t n = readlink(aotrun_model_library_path(lib), link, sizeof link - 1);
  assert_true(n > 0);
  link[n] = '\0';
  assert_contains(link, getenv("TMPDIR")); /* on disk, in $TMPDIR */
  assert_contains(link, "(deleted)");      /* with no name */
  assert_int_equal(test_tmpdir_count(), 0);
  aotrun_model_library_destroy(lib);
}

static void test_refused_memfd_falls_back(void **state) {
  (void)state;
  aotrun_library_image_test_refuse(1u << AOTRUN_IMAGE_MEMFD);
  aotrun_load_report r;
  aotrun_load_report_init(&r);
  aotrun_model_library *lib = load(0, &r);
  assert_string_equal(r.image, "unnamed temp file");
  assert_contains(r.image_note, "memfd: refused (test seam)");
  aotrun_model_library_destroy(lib);
  aotrun_library_image_test_refuse(1u << AOTRUN_IMAGE_MEMFD |
                                   1u << AOTRUN_IMAGE_UNNAMED_FILE);
  aotrun_load_report_init(&r);
  lib = load(0, &r);
  assert_string_equal(r.image, "temp file");
  assert_contains(r.image_note,
                  "memfd: refused (test seam); unnamed temp file: refused");
  assert_int_equal(test_tmpdir_count(), 0); /* unlinked once mapped */
  aotrun_model_library_destroy(lib);
  assert_int_equal(test_tmpdir_count(), 0);
}

/* A library dlopen refuses: nothing stays open or on disk, whatever the
 * image. */
static void test_failed_dlopen_leaves_nothing(void **state) {
  (void)state;
  unsigned char *copy = malloc(g_fixture.size);
  assert_non_null(copy);
  memcpy(copy, g_fixture.data, g_fixture.size);
  copy[6] = 0; /* EI_VERSION: passes our checks, dlopen refuses it */
  for (int kind = 0; kind < 3; kind++) {
    aotrun_library_image_test_refuse(kind == 2 ? 3u : 0u);
    aotrun_model_library_config c = {.device = "cpu", .name = "bad.so",
                                     .temp_file = kind > 0};
    aotrun_model_library *lib = NULL;
    aotrun_error err;
    assert_int_equal(
        aotrun_model_library_load_with(copy, g_fixture.size, &c, &lib, &err),
        AOTRUN_ERR_ACCESS_FAILED);
    assert_contains(err.message, "cannot dlopen model library bad.so (");
    assert_null(lib);
    assert_int_equal(test_tmpdir_count(), 0);
  }
  free(copy);
}

/* ---- killed in the middle of a load ---- */

typedef struct stop_at {
  const char *phase;
  int fd; /* the pipe the child signals on */
} stop_at;

/* In the child: tell the parent, then wait to be killed. */
static void stop_here(void *ctx, const char *phase) {
  stop_at *s = ctx;
  if (strcmp(phase, s->phase) != 0) return;
  char c = 1;
  if (write(s->fd, &c, 1) != 1) _exit(3);
  for (;;) pause();
}

/* Forks a child that loads the fixture (memfd refused per `refuse`,
 * library_temp_file per `temp_file`) and stops at `phase`; kills it there
 * with SIGKILL. Returns what is left in $TMPDIR. */
static int killed_at(const char *phase, unsigned refuse, int temp_file) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    stop_at s = {phase, p[1]};
    aotrun_library_image_test_refuse(refuse);
    aotrun_model_library_test_hook(stop_here, &s);
    aotrun_model_library_config c = {.device = "cpu", .temp_file = temp_file};
    aotrun_model_library *lib = NULL;
    aotrun_model_library_load_with(g_fixture.data, g_fixture.size, &c, &lib,
                                   NULL);
    _exit(4); /* the hook never returns: reaching this is a failure */
  }
  close(p[1]);
  char c = 0;
  assert_int_equal(read(p[0], &c, 1), 1); /* the child is at the phase */
  close(p[0]);
  assert_int_equal(kill(pid, SIGKILL), 0);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  return test_tmpdir_count();
}

static void test_killed_mid_load_leaves_nothing(void **state) {
  (void)state;
  const unsigned no_memfd = 1u << AOTRUN_IMAGE_MEMFD;
  const char *phases[] = {"image_written", "library_opened"};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(killed_at(phases[i], 0, 0), 0);         /* memfd */
    assert_int_equal(killed_at(phases[i], 0, 1), 0);         /* option */
    assert_int_equal(killed_at(phases[i], no_memfd, 0), 0);  /* O_TMPFILE */
  }
  /* The named temp file (no memfd, no O_TMPFILE) is unlinked right after
   * dlopen: killed after that, nothing is left. */
  assert_int_equal(killed_at("library_opened", 3u, 0), 0);
}

/* The documented window of the last fallback: killed between the write
 * and the dlopen, the named temp file stays (docs/loading.md). */
static void test_named_file_window_is_documented(void **state) {
  (void)state;
  assert_int_equal(killed_at("image_written", 3u, 0), 1);
  /* Clean up what the killed child left. */
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "rm -f '%s'/aotrun-model-*.so", getenv("TMPDIR"));
  assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s fixture_model.so\n", argv[0]);
    return 2;
  }
  g_fixture = test_read_file(argv[1]);
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(test_memfd_by_default),
      T(test_two_memfds_two_names),
      T(test_option_forces_a_file),
      T(test_refused_memfd_falls_back),
      T(test_failed_dlopen_leaves_nothing),
      T(test_killed_mid_load_leaves_nothing),
      T(test_named_file_window_is_documented),
#undef T
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(g_fixture.data);
  return rc;
}
