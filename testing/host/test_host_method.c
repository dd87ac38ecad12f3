/* test_host_method.c: running methods through the host wrapper, swapping
 * backends between calls, and every error path's status and message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "plugin_api/aotrun_host.h"
#include "testing/host/test_paths.h"

static void assert_contains(const char *haystack, const char *needle) {
  if (strstr(haystack, needle) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

/* A host without named data: the minimal plugin then needs a number. */
static aotrun_host_api g_host = {.abi_version = AOTRUN_ABI_VERSION,
                                 .struct_size = sizeof(aotrun_host_api)};

static aotrun_registry *load_both(void) {
  aotrun_registry *r = NULL;
  assert_int_equal(aotrun_registry_create(&r), AOTRUN_OK);
  assert_int_equal(aotrun_registry_load(r, test_path("libminimal_plugin.so"),
                                        NULL), AOTRUN_OK);
  assert_int_equal(
      aotrun_registry_load(r, test_path("libminimal_plugin_b.so"), NULL),
      AOTRUN_OK);
  return r;
}

static aotrun_host_method *open_on(aotrun_registry *r, const char *backend,
                                   const char *factor) {
  aotrun_host_method *m = NULL;
  aotrun_key_value spec = {"method", "forward"};
  aotrun_status s = aotrun_host_method_open(r, backend, &g_host, factor,
                                            strlen(factor), &spec, 1, &m);
  if (s != AOTRUN_OK) fail_msg("open: %s", aotrun_host_last_error());
  return m;
}

typedef struct vec3 {
  float in[3], out[3];
  int64_t in_shape[1], out_shape[1];
  DLTensor x, y;
} vec3;

static void vec3_init(vec3 *v, float a, float b, float c) {
  memset(v, 0, sizeof *v);
  v->in[0] = a;
  v->in[1] = b;
  v->in[2] = c;
  v->in_shape[0] = 3;
  v->out_shape[0] = 3;
  v->x = (DLTensor){.data = v->in, .device = {kDLCPU, 0}, .ndim = 1,
                    .dtype = {kDLFloat, 32, 1}, .shape = v->in_shape};
  v->y = v->x;
  v->y.data = v->out;
  v->y.shape = v->out_shape;
}

static void run(aotrun_host_method *m, vec3 *v) {
  aotrun_status s = aotrun_host_method_execute(m, &v->x, 1, &v->y, 1);
  if (s != AOTRUN_OK) fail_msg("execute: %s", aotrun_host_last_error());
}

static void test_execute_and_io_info(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2.5");
  vec3 v;
  vec3_init(&v, 1, 2, -4);
  run(m, &v);
  assert_float_equal(v.out[0], 2.5f, 0);
  assert_float_equal(v.out[1], 5.0f, 0);
  assert_float_equal(v.out[2], -10.0f, 0);
  size_t n = 0;
  assert_int_equal(aotrun_host_method_num_io(m, AOTRUN_IO_INPUT, &n),
                   AOTRUN_OK);
  assert_int_equal(n, 1);
  aotrun_io_info info;
  assert_int_equal(aotrun_host_method_io_info(m, AOTRUN_IO_OUTPUT, 0, &info),
                   AOTRUN_OK);
  assert_string_equal(info.name, "y");
  assert_int_equal(info.ndim, 1);
  assert_int_equal(info.shape[0], AOTRUN_DYNAMIC_DIM);
  assert_int_equal(info.dtype.code, kDLFloat);
  assert_int_equal(info.dtype.bits, 32);
  /* Bad kind and index: status and message. */
  assert_int_equal(aotrun_host_method_num_io(m, 7, &n),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "io kind 7");
  assert_int_equal(aotrun_host_method_io_info(m, AOTRUN_IO_INPUT, 3, &info),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': get_io_info of input 3 failed (not "
                      "found): io index out of range (one input, one "
                      "output)");
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

/* The host checks every tensor before execute (ABI 1.1 strides rule). */
static void test_execute_checks_tensors(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2");
  vec3 v;
  vec3_init(&v, 1, 2, 3);
  int64_t unit[1] = {1};
  v.x.strides = unit; /* explicit row-major: same as NULL */
  run(m, &v);
  assert_float_equal(v.out[2], 6.0f, 0);
  int64_t two[1] = {2};
  v.x.strides = two; /* every other element: not row-major */
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': input 0 (x) is not contiguous "
                      "(row-major strides are required; NULL strides mean "
                      "row-major)");
  vec3_init(&v, 1, 2, 3);
  v.y.strides = two;
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_contains(aotrun_host_last_error(), "output 0 (y) is not contiguous");
  vec3_init(&v, 1, 2, 3);
  v.x.shape = NULL;
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': input 0 (x) has 1 dims but no "
                      "shape array");
  /* A rank other than the declared one, refused by the host: the plugin
   * would read a shape array of the rank it declared. */
  vec3_init(&v, 1, 2, 3);
  int64_t shape2[2] = {3, 1};
  v.x.ndim = 2;
  v.x.shape = shape2;
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': input 0 (x) has rank 2, the method "
                      "declares 1");
  vec3_init(&v, 1, 2, 3);
  v.y.ndim = 0;
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "output 0 (y) has rank 0, the method declares 1");
  vec3_init(&v, 1, 2, 3);
  v.y.ndim = AOTRUN_MAX_DIMS + 1;
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "output 0 (y) has rank 17");
  /* Zero-size: any strides (never used). */
  vec3_init(&v, 1, 2, 3);
  v.in_shape[0] = 0;
  int64_t odd[1] = {7};
  v.x.strides = odd;
  run(m, &v);
  assert_int_equal(v.out_shape[0], 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

/* ABI 1.1: get_io_info writes and reports min(caller size, plugin size). */
static void test_io_info_reports_min_size(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2");
  aotrun_io_info info;
  assert_int_equal(aotrun_host_method_io_info(m, AOTRUN_IO_INPUT, 0, &info),
                   AOTRUN_OK);
  assert_int_equal(info.struct_size, sizeof info);
  /* An older, smaller caller: nothing past its size is written. */
  const aotrun_backend_api *t =
      aotrun_backend_table(aotrun_host_method_backend(m));
  unsigned char buf[sizeof(aotrun_io_info) + 16];
  memset(buf, 0xAB, sizeof buf);
  aotrun_io_info *small = (aotrun_io_info *)(void *)buf;
  uint32_t size = (uint32_t)AOTRUN_MEMBER_END(aotrun_io_info, dtype);
  small->struct_size = size;
  aotrun_method *h = NULL;
  aotrun_host_api host = g_host;
  assert_int_equal(t->init(&host, "2", 1, NULL, 0, &h), AOTRUN_OK);
  assert_int_equal(t->get_io_info(h, AOTRUN_IO_OUTPUT, 0, small), AOTRUN_OK);
  assert_int_equal(small->struct_size, size);
  assert_string_equal(small->name, "y");
  for (size_t i = size; i < sizeof buf; i++) assert_int_equal(buf[i], 0xAB);
  t->destroy(h);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_options(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2");
  aotrun_option offset = {.key = "offset", .type = AOTRUN_OPTION_INT,
                          .int_value = 10};
  assert_int_equal(aotrun_host_method_set_option(m, &offset), AOTRUN_OK);
  vec3 v;
  vec3_init(&v, 1, 2, 3);
  run(m, &v);
  assert_float_equal(v.out[2], 16.0f, 0);
  aotrun_option label = {.key = "label", .type = AOTRUN_OPTION_STRING,
                         .string_value = "mine"};
  assert_int_equal(aotrun_host_method_set_option(m, &label), AOTRUN_OK);
  aotrun_option got = {0};
  assert_int_equal(aotrun_host_method_get_option(m, "label", &got), AOTRUN_OK);
  assert_int_equal(got.type, AOTRUN_OPTION_STRING);
  assert_string_equal(got.string_value, "mine");
  assert_int_equal(aotrun_host_method_get_option(m, "offset", &got),
                   AOTRUN_OK);
  assert_int_equal(got.int_value, 10);
  assert_int_equal(aotrun_host_method_get_option(m, "speed", &got),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': get_option 'speed' failed (not "
                      "found): unknown option speed");
  assert_int_equal(aotrun_host_method_get_option(m, NULL, &got),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_option wrong = {.key = "label", .type = AOTRUN_OPTION_INT};
  assert_int_equal(aotrun_host_method_set_option(m, &wrong),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': set_option 'label' failed (invalid "
                      "argument): option 'label' is STRING");
  aotrun_option unknown = {.key = "speed", .type = AOTRUN_OPTION_INT};
  assert_int_equal(aotrun_host_method_set_option(m, &unknown),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "unknown option speed");
  assert_int_equal(aotrun_host_method_set_option(m, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  /* get_option reads the handle's value back; unknown keys name the key. */
  assert_int_equal(aotrun_host_method_get_option(m, "offset", &got),
                   AOTRUN_OK);
  assert_int_equal(got.type, AOTRUN_OPTION_INT);
  assert_int_equal(got.int_value, offset.int_value);
  assert_int_equal(aotrun_host_method_get_option(m, "label", &got),
                   AOTRUN_OK);
  assert_string_equal(got.string_value, "mine");
  assert_int_equal(aotrun_host_method_get_option(m, "last_gpu_time_ns", &got),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(),
                  "get_option 'last_gpu_time_ns' failed (not found)");
  assert_int_equal(aotrun_host_method_get_option(m, NULL, &got),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_swap_between_calls(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "3");
  vec3 v;
  vec3_init(&v, 1, 2, 3);
  run(m, &v);
  assert_float_equal(v.out[1], 6.0f, 0); /* minimal: x * 3 */
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal_b"),
                   AOTRUN_OK);
  assert_string_equal(aotrun_backend_name(aotrun_host_method_backend(m)),
                      "minimal_b");
  run(m, &v);
  assert_float_equal(v.out[1], 106.0f, 0); /* minimal_b: x * 3 + 100 */
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal"), AOTRUN_OK);
  run(m, &v);
  assert_float_equal(v.out[1], 6.0f, 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_failed_swap_keeps_old_backend(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  /* minimal_b refuses factors above 100, so its init fails. */
  aotrun_host_method *m = open_on(r, "minimal", "1000");
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal_b"),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(aotrun_host_last_error(),
                      "swap from 'minimal' to 'minimal_b' failed, still on "
                      "'minimal': backend 'minimal_b': init failed (not "
                      "supported): factor out of range for backend "
                      "minimal_b");
  assert_string_equal(aotrun_backend_name(aotrun_host_method_backend(m)),
                      "minimal");
  vec3 v;
  vec3_init(&v, 1, 2, 3);
  run(m, &v);
  assert_float_equal(v.out[0], 1000.0f, 0);
  /* An unknown backend is refused the same way. */
  assert_int_equal(aotrun_host_method_swap_backend(m, "cuda"),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "backend 'cuda' is not loaded");
  run(m, &v);
  assert_float_equal(v.out[2], 3000.0f, 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_options_not_carried_over_swap(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "1");
  aotrun_option offset = {.key = "offset", .type = AOTRUN_OPTION_INT,
                          .int_value = 5};
  assert_int_equal(aotrun_host_method_set_option(m, &offset), AOTRUN_OK);
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal_b"),
                   AOTRUN_OK);
  vec3 v;
  vec3_init(&v, 1, 1, 1);
  run(m, &v);
  assert_float_equal(v.out[0], 101.0f, 0); /* no offset on the new handle */
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_execute_errors(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2");
  vec3 v;
  vec3_init(&v, 1, 2, 3);
  v.x.dtype.bits = 64; /* float64 given */
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': execute failed (invalid argument): "
                      "input 0 (x) must be a contiguous float32 vector in "
                      "host memory");
  vec3_init(&v, 1, 2, 3);
  v.out_shape[0] = 2; /* output too small */
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "output 0 (y) must be");
  assert_int_equal(aotrun_host_method_execute(m, &v.x, 2, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(),
                  "execute got 2 inputs, the method takes 1"); /* before any read */
  assert_int_equal(aotrun_host_method_execute(m, NULL, 1, &v.y, 1),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_contains(aotrun_host_last_error(), "NULL method, inputs or outputs");
  /* The output's dynamic dim is written back as the actual size. */
  vec3_init(&v, 1, 2, 3);
  v.out_shape[0] = 3;
  v.in_shape[0] = 2;
  run(m, &v);
  assert_int_equal(v.out_shape[0], 2);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

static void test_open_errors(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = (aotrun_host_method *)&m;
  assert_int_equal(aotrun_host_method_open(r, "minimal", &g_host, "abc", 3,
                                           NULL, 0, &m),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(m);
  assert_string_equal(aotrun_host_last_error(),
                      "backend 'minimal': init failed (invalid argument): "
                      "processed bytes are not a factor and the host serves "
                      "no named data");
  assert_int_equal(aotrun_host_method_open(r, "gpu", &g_host, "1", 1, NULL, 0,
                                           &m),
                   AOTRUN_ERR_NOT_FOUND);
  assert_contains(aotrun_host_last_error(), "backend 'gpu' is not loaded");
  assert_int_equal(aotrun_host_method_open(r, "minimal", NULL, "1", 1, NULL,
                                           0, &m),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_key_value bad = {"method", NULL};
  assert_int_equal(aotrun_host_method_open(r, "minimal", &g_host, "1", 1,
                                           &bad, 1, &m),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "compile spec 0 has a NULL key or value");
  assert_null(m);
  aotrun_host_method_close(NULL);
  aotrun_registry_destroy(r);
}

/* The processed bytes are copied: the caller's buffer may change. */
static void test_processed_bytes_copied(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  char factor[] = "4";
  aotrun_host_method *m = open_on(r, "minimal", factor);
  factor[0] = '9';
  assert_int_equal(aotrun_host_method_swap_backend(m, "minimal_b"),
                   AOTRUN_OK);
  vec3 v;
  vec3_init(&v, 1, 1, 1);
  run(m, &v);
  assert_float_equal(v.out[0], 104.0f, 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

/* issue 13, found by the plugin_abi fuzz target's harness review: NULL
 * pointer arguments are refused (or give NULL / 0), never dereferenced. */
static void test_null_arguments(void **state) {
  (void)state;
  aotrun_registry *r = load_both();
  aotrun_host_method *m = open_on(r, "minimal", "2");
  assert_int_equal(aotrun_host_method_num_io(m, AOTRUN_IO_INPUT, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "aotrun_host_method_num_io: NULL count");
  assert_int_equal(aotrun_host_method_io_info(m, AOTRUN_IO_OUTPUT, 0, NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "aotrun_host_method_io_info: NULL out");
  assert_null(aotrun_host_method_backend(NULL));
  assert_int_equal(aotrun_registry_find(r, "minimal", NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "aotrun_registry_find: NULL out");
  assert_null(aotrun_backend_name(NULL));
  assert_null(aotrun_backend_path(NULL));
  assert_null(aotrun_backend_table(NULL));
  assert_int_equal(aotrun_backend_abi_version(NULL), 0);
  char reason[32];
  assert_int_equal(aotrun_backend_is_available(NULL, reason, sizeof reason),
                   0);
  assert_string_equal(reason, "no backend (NULL)");
  aotrun_option opt = {.key = "factor", .type = AOTRUN_OPTION_INT};
  assert_int_equal(aotrun_backend_set_option(NULL, &opt),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(aotrun_host_last_error(),
                      "aotrun_backend_set_option: NULL backend");
  assert_int_equal(aotrun_log_level_parse("info", NULL),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_null(aotrun_program_dir_host_api(NULL));
  assert_null(aotrun_program_dir_path(NULL));
  aotrun_program_dir_set_log_level(NULL, AOTRUN_LOG_INFO);
  assert_int_equal(aotrun_program_dir_num_mapped(NULL), 0);
  aotrun_host_method_close(m);
  aotrun_registry_destroy(r);
}

int main(int argc, char **argv) {
  test_paths_init(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_execute_and_io_info),
      cmocka_unit_test(test_execute_checks_tensors),
      cmocka_unit_test(test_io_info_reports_min_size),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_swap_between_calls),
      cmocka_unit_test(test_failed_swap_keeps_old_backend),
      cmocka_unit_test(test_options_not_carried_over_swap),
      cmocka_unit_test(test_execute_errors),
      cmocka_unit_test(test_open_errors),
      cmocka_unit_test(test_processed_bytes_copied),
      cmocka_unit_test(test_null_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
