/* test_plugin_loader.c: loading plugins, ABI negotiation, the registry. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "plugin_api/aotrun_host.h"
#include "testing/host/test_paths.h"
#include "testing/plugins/minimal_ext.h"

#define V(major, minor) AOTRUN_MAKE_VERSION(major, minor)

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

static aotrun_backend *open_ok(const char *file, uint32_t host) {
  aotrun_backend *b = NULL;
  aotrun_status s = aotrun_backend_open(test_path(file), host, &b);
  if (s != AOTRUN_OK) fail_msg("%s: %s", file, aotrun_host_last_error());
  return b;
}

static void expect_refusal(const char *file, uint32_t host,
                           aotrun_status code, const char *message) {
  aotrun_backend *b = (aotrun_backend *)&b; /* must be reset to NULL */
  assert_int_equal(aotrun_backend_open(test_path(file), host, &b), code);
  assert_null(b);
  assert_contains(aotrun_host_last_error(), message);
}

static void test_loads_minimal(void **state) {
  (void)state;
  aotrun_backend *b = open_ok("libminimal_plugin.so", AOTRUN_ABI_VERSION);
  assert_string_equal(aotrun_backend_name(b), "minimal");
  assert_int_equal(aotrun_backend_abi_version(b), AOTRUN_ABI_VERSION);
  assert_non_null(strstr(aotrun_backend_path(b), "libminimal_plugin.so"));
  char reason[64] = "junk";
  assert_int_equal(aotrun_backend_is_available(b, reason, sizeof reason), 1);
  assert_string_equal(reason, "");
  assert_non_null(aotrun_backend_table(b)->execute);
  aotrun_backend_close(b);
}

static void test_newer_minor_plugin_accepted(void **state) {
  (void)state;
  aotrun_backend *b =
      open_ok("libminimal_plugin_newer_minor.so", AOTRUN_ABI_VERSION);
  uint32_t v = aotrun_backend_abi_version(b);
  assert_int_equal(AOTRUN_VERSION_MAJOR(v), AOTRUN_ABI_VERSION_MAJOR);
  assert_int_equal(AOTRUN_VERSION_MINOR(v), AOTRUN_ABI_VERSION_MINOR + 1);
  /* Its table grew by one appended member; the host ignores it. */
  const aotrun_backend_api *t = aotrun_backend_table(b);
  assert_int_equal(t->struct_size,
                   sizeof(aotrun_backend_api) + sizeof(void (*)(void)));
  assert_true(AOTRUN_TABLE_HAS(t, aotrun_backend_api, last_error));
  aotrun_backend_close(b);
}

static void test_older_minor_plugin_accepted(void **state) {
  (void)state;
  /* A v1.0 table loaded by this 1.1 host. */
  aotrun_backend *b = open_ok("libminimal_plugin_older_minor.so", V(1, 1));
  assert_string_equal(aotrun_backend_name(b), "minimal_older");
  assert_int_equal(aotrun_backend_abi_version(b), V(1, 0));
  const aotrun_backend_api *t = aotrun_backend_table(b);
  assert_int_equal(t->struct_size,
                   offsetof(aotrun_backend_api, last_error) + sizeof(void *));
  assert_int_equal(t->struct_size, AOTRUN_BACKEND_API_SIZE_1_0);
  /* Its get_extension pointer is set in memory but outside struct_size:
   * the host never reads it. */
  assert_non_null(t->get_extension);
  assert_false(AOTRUN_TABLE_HAS(t, get_extension));
  assert_false(AOTRUN_TABLE_CAN(t, get_extension));
  assert_null(aotrun_backend_get_extension(b, MINIMAL_EXT_STATS_V1));
  aotrun_backend_close(b);
  /* And the plain plugin with a host of a newer minor. */
  b = open_ok("libminimal_plugin.so", V(1, 7));
  aotrun_backend_close(b);
}

/* A plugin compiled against the frozen 1.0 header, in this 1.1 host. */
static void test_genuine_1_0_plugin(void **state) {
  (void)state;
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  const aotrun_backend *b = NULL;
  assert_int_equal(
      aotrun_registry_load(r, test_path("libminimal_plugin_abi_1_0.so"), &b),
      AOTRUN_OK);
  assert_int_equal(aotrun_backend_abi_version(b), V(1, 0));
  assert_int_equal(aotrun_backend_table(b)->struct_size,
                   AOTRUN_BACKEND_API_SIZE_1_0);
  assert_null(aotrun_backend_get_extension(b, MINIMAL_EXT_STATS_V1));
  /* Every 1.0 call works: init, io_info, options, execute, destroy. */
  aotrun_host_api host = {.abi_version = AOTRUN_ABI_VERSION,
                          .struct_size = sizeof host};
  aotrun_host_method *m = NULL;
  assert_int_equal(aotrun_host_method_open(r, "minimal_1_0", &host, "3", 1,
                                           NULL, 0, &m),
                   AOTRUN_OK);
  aotrun_io_info info;
  assert_int_equal(aotrun_host_method_io_info(m, AOTRUN_IO_INPUT, 0, &info),
                   AOTRUN_OK);
  assert_string_equal(info.name, "x");
  /* A 1.0 plugin leaves the caller's struct_size. */
  assert_int_equal(info.struct_size, sizeof info);
  aotrun_option off = {.key = "offset", .type = AOTRUN_OPTION_INT,
                       .int_value = 1};
  assert_int_equal(aotrun_host_method_set_option(m, &off), AOTRUN_OK);
  float x[2] = {1, 2}, y[2] = {0};
  int64_t xs[1] = {2}, ys[1] = {2};
  DLTensor in = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, xs, NULL, 0};
  DLTensor out = {y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, ys, NULL, 0};
  assert_int_equal(aotrun_host_method_execute(m, &in, 1, &out, 1), AOTRUN_OK);
  assert_float_equal(y[0], 4.0f, 0);
  assert_float_equal(y[1], 7.0f, 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

/* The 1.1 extension hook: the minimal plugin offers one extension. */
static void test_extension(void **state) {
  (void)state;
  aotrun_backend *b = open_ok("libminimal_plugin.so", AOTRUN_ABI_VERSION);
  const aotrun_backend_api *t = aotrun_backend_table(b);
  assert_int_equal(t->struct_size, AOTRUN_BACKEND_API_SIZE_1_1);
  assert_true(AOTRUN_TABLE_CAN(t, get_extension));
  const minimal_stats_v1 *stats =
      aotrun_backend_get_extension(b, MINIMAL_EXT_STATS_V1);
  assert_non_null(stats);
  assert_int_equal(stats->struct_size, sizeof(minimal_stats_v1));
  assert_true(AOTRUN_TABLE_HAS(stats, backend));
  assert_string_equal(stats->backend(), "minimal");
  aotrun_host_api host = {.abi_version = AOTRUN_ABI_VERSION,
                          .struct_size = sizeof host};
  aotrun_method *m = NULL;
  assert_int_equal(t->init(&host, "2", 1, NULL, 0, &m), AOTRUN_OK);
  assert_int_equal(stats->call_count(m), 0);
  float x[1] = {1}, y[1];
  int64_t s1[1] = {1}, s2[1] = {1};
  DLTensor in = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, s1, NULL, 0};
  DLTensor out = {y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, s2, NULL, 0};
  assert_int_equal(t->execute(m, &in, 1, &out, 1), AOTRUN_OK);
  assert_int_equal(stats->call_count(m), 1);
  t->destroy(m);
  /* Unknown names and NULL give NULL, and set no error. */
  assert_null(aotrun_backend_get_extension(b, "minimal.stats.v2"));
  assert_null(aotrun_backend_get_extension(b, NULL));
  assert_null(aotrun_backend_get_extension(NULL, MINIMAL_EXT_STATS_V1));
  aotrun_backend_close(b);
  /* A plugin of a newer minor (1.2) still offers it. */
  b = open_ok("libminimal_plugin_newer_minor.so", AOTRUN_ABI_VERSION);
  assert_non_null(aotrun_backend_get_extension(b, MINIMAL_EXT_STATS_V1));
  aotrun_backend_close(b);
}

/* struct_size is bounded by what the declared minor can hold. */
static void test_oversized_tables_refused(void **state) {
  (void)state;
  char want[256];
  snprintf(want, sizeof want,
           "libminimal_plugin_oversized.so (ABI 1.0): backend table is "
           "4294967280 bytes, but the table of ABI 1.0 is at most %zu bytes",
           (size_t)AOTRUN_BACKEND_API_SIZE_1_0);
  expect_refusal("libminimal_plugin_oversized.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, want);
  snprintf(want, sizeof want,
           "libminimal_plugin_1_0_claims_1_1.so (ABI 1.0): backend table is "
           "%zu bytes, but the table of ABI 1.0 is at most %zu bytes",
           (size_t)AOTRUN_BACKEND_API_SIZE_1_1,
           (size_t)AOTRUN_BACKEND_API_SIZE_1_0);
  expect_refusal("libminimal_plugin_1_0_claims_1_1.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, want);
  snprintf(want, sizeof want,
           "libminimal_plugin_newer_oversized.so (ABI 1.%d): backend table is "
           "%zu bytes, a table of any ABI 1.x is at most %zu bytes",
           AOTRUN_ABI_VERSION_MINOR + 1,
           (size_t)AOTRUN_TABLE_MAX_SIZE + 8, (size_t)AOTRUN_TABLE_MAX_SIZE);
  expect_refusal("libminimal_plugin_newer_oversized.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, want);
}

/* The end-of-member rule: a member appended into an older struct's tail
 * padding is not "present" in a struct of the older size. */
typedef struct old_t {
  uint32_t struct_size;
  void *p;
  uint32_t a;
} old_t; /* 64-bit: a ends at 20, sizeof is 24 */
typedef struct new_t {
  uint32_t struct_size;
  void *p;
  uint32_t a;
  uint32_t b; /* appended: lives in old_t's tail padding on 64-bit */
} new_t;

static void test_table_has_member_end(void **state) {
  (void)state;
  new_t t = {.struct_size = AOTRUN_MEMBER_END(old_t, a)};
  assert_true(AOTRUN_TABLE_HAS(&t, a));
  assert_true(AOTRUN_TABLE_HAS(&t, new_t, a)); /* the 1.0 spelling */
  assert_false(AOTRUN_TABLE_HAS(&t, b));
  assert_false(AOTRUN_TABLE_HAS(&t, new_t, b));
  if (sizeof(void *) == 8) /* starts inside: a start-based test says yes */
    assert_true(offsetof(new_t, b) < sizeof(old_t));
  t.struct_size = sizeof t;
  assert_true(AOTRUN_TABLE_HAS(&t, b));
  /* Each version's size constant is its last member's end. */
  assert_int_equal(AOTRUN_BACKEND_API_SIZE_1_0,
                   AOTRUN_MEMBER_END(aotrun_backend_api, last_error));
  assert_int_equal(AOTRUN_BACKEND_API_SIZE_1_1,
                   AOTRUN_MEMBER_END(aotrun_backend_api, deinit));
  assert_int_equal(AOTRUN_HOST_API_SIZE_1_0,
                   AOTRUN_MEMBER_END(aotrun_host_api, free));
}

static void test_plugin_major_mismatch_refused(void **state) {
  (void)state;
  char want[256];
  snprintf(want, sizeof want, "has ABI 2.%d, host has %d.%d",
           AOTRUN_ABI_VERSION_MINOR, AOTRUN_ABI_VERSION_MAJOR,
           AOTRUN_ABI_VERSION_MINOR);
  expect_refusal("libminimal_plugin_major2.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, want);
  expect_refusal("libminimal_plugin_major2.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, "libminimal_plugin_major2.so");
}

static void test_host_major_mismatch_refused_by_plugin(void **state) {
  (void)state;
  /* A 2.3 host: the plugin itself refuses; the message names the host's
   * version and the file. */
  expect_refusal("libminimal_plugin.so", V(2, 3),
                 AOTRUN_ERR_VERSION_MISMATCH,
                 "libminimal_plugin.so refused host ABI 2.3");
}

static void test_truncated_table_refused(void **state) {
  (void)state;
  char want[128];
  snprintf(want, sizeof want, "backend table is %zu bytes, ABI 1.0 needs at "
           "least %zu",
           offsetof(aotrun_backend_api, get_io_info),
           offsetof(aotrun_backend_api, last_error) + sizeof(void *));
  expect_refusal("libminimal_plugin_truncated.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_VERSION_MISMATCH, want);
}

static void test_missing_member_refused(void **state) {
  (void)state;
  expect_refusal("libminimal_plugin_missing_member.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_INVALID_ARGUMENT,
                 "required member get_io_info is NULL");
}

static void test_null_table_refused(void **state) {
  (void)state;
  expect_refusal("libnull_table_plugin.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_INVALID_ARGUMENT,
                 "libnull_table_plugin.so returned OK but a NULL backend "
                 "table");
}

static void test_failing_entry_maps_unknown_status(void **state) {
  (void)state;
  expect_refusal("libfailing_entry_plugin.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_INTERNAL,
                 "aotrun_plugin_get_api failed with status 99");
}

static void test_no_entry_symbol(void **state) {
  (void)state;
  expect_refusal("libnot_a_plugin.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_NOT_FOUND,
                 "libnot_a_plugin.so is not an aotrun plugin: it does not "
                 "export aotrun_plugin_get_api");
}

static void test_text_file_not_loadable(void **state) {
  (void)state;
  expect_refusal("not_a_library.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_ACCESS_FAILED, "cannot load plugin ");
  /* The dlerror text is included. */
  expect_refusal("not_a_library.so", AOTRUN_ABI_VERSION,
                 AOTRUN_ERR_ACCESS_FAILED, "not_a_library.so: ");
  assert_true(strstr(aotrun_host_last_error(), "invalid ELF header") ||
              strstr(aotrun_host_last_error(), "file too short"));
}

static void test_missing_file_and_bad_args(void **state) {
  (void)state;
  aotrun_backend *b = NULL;
  assert_int_equal(aotrun_backend_open("/nonexistent/libx.so",
                                       AOTRUN_ABI_VERSION, &b),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_contains(aotrun_host_last_error(),
                  "cannot load plugin /nonexistent/libx.so: ");
  assert_contains(aotrun_host_last_error(), "No such file");
  assert_int_equal(aotrun_backend_open("", AOTRUN_ABI_VERSION, &b),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_int_equal(aotrun_backend_open("x", AOTRUN_ABI_VERSION, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_backend_close(NULL); /* accepted */
}

static void test_registry(void **state) {
  (void)state;
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  const aotrun_backend *a = NULL, *b = NULL, *found = NULL;
  assert_int_equal(aotrun_registry_load(r, test_path("libminimal_plugin.so"),
                                        &a),
                   AOTRUN_OK);
  assert_int_equal(
      aotrun_registry_load(r, test_path("libminimal_plugin_b.so"), &b),
      AOTRUN_OK);
  assert_int_equal(aotrun_registry_count(r), 2);
  assert_ptr_equal(aotrun_registry_at(r, 0), a);
  assert_ptr_equal(aotrun_registry_at(r, 1), b);
  assert_null(aotrun_registry_at(r, 2));
  assert_int_equal(aotrun_registry_find(r, "minimal_b", &found), AOTRUN_OK);
  assert_ptr_equal(found, b);
  /* Unknown names list what is loaded. */
  assert_int_equal(aotrun_registry_find(r, "cuda", &found),
                   AOTRUN_ERR_NOT_FOUND);
  assert_null(found);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'cuda' is not loaded (loaded: minimal, "
                      "minimal_b)");
  /* A second backend called "minimal" is refused, naming both files. */
  const aotrun_backend *dup = (const aotrun_backend *)&dup;
  assert_int_equal(
      aotrun_registry_load(r, test_path("libminimal_plugin.so"), &dup),
      AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(dup);
  assert_contains(aotrun_host_last_error(), "backend 'minimal' from ");
  assert_contains(aotrun_host_last_error(), "is already loaded from ");
  assert_int_equal(aotrun_registry_count(r), 2);
  /* A failing load leaves the registry as it was. */
  assert_int_equal(
      aotrun_registry_load(r, test_path("libnot_a_plugin.so"), NULL),
      AOTRUN_ERR_NOT_FOUND);
  assert_int_equal(aotrun_registry_count(r), 2);
  aotrun_registry_destroy(r);
  aotrun_registry_destroy(NULL);
}

static void test_empty_registry_find(void **state) {
  (void)state;
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  const aotrun_backend *found;
  assert_int_equal(aotrun_registry_find(r, "x", &found), AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'x' is not loaded (loaded: none)");
  aotrun_registry_destroy(r);
}

static void test_unavailable_reason(void **state) {
  (void)state;
  aotrun_backend *b =
      open_ok("libminimal_plugin_unavailable.so", AOTRUN_ABI_VERSION);
  char reason[16]; /* shorter than the reason: truncated, terminated */
  assert_int_equal(aotrun_backend_is_available(b, reason, sizeof reason), 0);
  assert_string_equal(reason, "no scaling hard");
  assert_int_equal(aotrun_backend_is_available(b, NULL, 0), 0);
  aotrun_backend_close(b);
}

static void test_backend_wide_option(void **state) {
  (void)state;
  aotrun_backend *b = open_ok("libminimal_plugin.so", AOTRUN_ABI_VERSION);
  aotrun_option bad = {.key = "offset", .type = AOTRUN_OPTION_STRING,
                       .string_value = "x"};
  assert_int_equal(aotrun_backend_set_option(b, &bad),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': set_option 'offset' failed: "
                      "option 'offset' is INT");
  aotrun_option unknown = {.key = "nope", .type = AOTRUN_OPTION_INT};
  assert_int_equal(aotrun_backend_set_option(b, &unknown),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "unknown option nope");
  assert_int_equal(aotrun_backend_set_option(b, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_option got = {0};
  assert_int_equal(aotrun_backend_get_option(b, "label", &got), AOTRUN_OK);
  assert_int_equal(got.type, AOTRUN_OPTION_STRING);
  assert_string_equal(got.string_value, "minimal");
  assert_int_equal(aotrun_backend_get_option(b, "nope", &got),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': get_option 'nope' failed: "
                      "unknown option nope");
  assert_int_equal(aotrun_backend_get_option(b, NULL, &got),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_backend_close(b);
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loads_minimal),
      cmocka_unit_test(test_newer_minor_plugin_accepted),
      cmocka_unit_test(test_older_minor_plugin_accepted),
      cmocka_unit_test(test_genuine_1_0_plugin),
      cmocka_unit_test(test_extension),
      cmocka_unit_test(test_oversized_tables_refused),
      cmocka_unit_test(test_table_has_member_end),
      cmocka_unit_test(test_plugin_major_mismatch_refused),
      cmocka_unit_test(test_host_major_mismatch_refused_by_plugin),
      cmocka_unit_test(test_truncated_table_refused),
      cmocka_unit_test(test_missing_member_refused),
      cmocka_unit_test(test_null_table_refused),
      cmocka_unit_test(test_failing_entry_maps_unknown_status),
      cmocka_unit_test(test_no_entry_symbol),
      cmocka_unit_test(test_text_file_not_loadable),
      cmocka_unit_test(test_missing_file_and_bad_args),
      cmocka_unit_test(test_registry),
      cmocka_unit_test(test_empty_registry_find),
      cmocka_unit_test(test_unavailable_reason),
      cmocka_unit_test(test_backend_wide_option),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
