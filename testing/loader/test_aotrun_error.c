/*
 * test_aotrun_error.c: aot_loader/aotrun_error.h (set, prefix, clear).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/aotrun_error.h"

static void test_set_formats_and_returns_code(void **state) {
  (void)state;
  aotrun_error err;
  aotrun_error_clear(&err);
  assert_int_equal(aotrun_error_set(&err, AOTRUN_ERR_NOT_FOUND,
                                    "constant '%s' (%d)", "lin.weight", 3),
                   AOTRUN_ERR_NOT_FOUND);
  assert_int_equal(err.code, AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(err.message, "constant 'lin.weight' (3)");
}

static void test_null_error_object(void **state) {
  (void)state;
  assert_int_equal(aotrun_error_set(NULL, AOTRUN_ERR_INTERNAL, "x %d", 1),
                   AOTRUN_ERR_INTERNAL);
  /* No code to return: never report success from a failure path. */
  assert_int_equal(aotrun_error_prefix(NULL, "ctx: "), AOTRUN_ERR_INTERNAL);
  aotrun_error_clear(NULL);
}

static void test_prefix_keeps_code(void **state) {
  (void)state;
  aotrun_error err;
  aotrun_error_set(&err, AOTRUN_ERR_ACCESS_FAILED, "file missing");
  assert_int_equal(aotrun_error_prefix(&err, "loading %s: ", "forward.so"),
                   AOTRUN_ERR_ACCESS_FAILED);
  assert_string_equal(err.message, "loading forward.so: file missing");
  assert_int_equal(err.code, AOTRUN_ERR_ACCESS_FAILED);
}

static void test_message_may_be_an_argument(void **state) {
  (void)state;
  aotrun_error err;
  aotrun_error_set(&err, AOTRUN_ERR_INVALID_ARGUMENT, "inner");
  aotrun_error_set(&err, err.code, "outer (%s) again (%s)", err.message,
                   err.message);
  assert_string_equal(err.message, "outer (inner) again (inner)");
}

static void test_long_messages_truncate(void **state) {
  (void)state;
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  aotrun_error err;
  aotrun_error_set(&err, AOTRUN_ERR_INTERNAL, "%s", big);
  assert_int_equal(strlen(err.message), AOTRUN_ERROR_MESSAGE_SIZE - 1);
  aotrun_error_prefix(&err, "P: ");
  assert_int_equal(strlen(err.message), AOTRUN_ERROR_MESSAGE_SIZE - 1);
  assert_int_equal(strncmp(err.message, "P: aaa", 6), 0);
  aotrun_error_prefix(&err, "%s", big); /* a prefix longer than the buffer */
  assert_int_equal(strlen(err.message), AOTRUN_ERROR_MESSAGE_SIZE - 1);
  assert_int_equal(err.message[0], 'a');
}

static void test_clear(void **state) {
  (void)state;
  aotrun_error err;
  aotrun_error_set(&err, AOTRUN_ERR_INTERNAL, "boom");
  aotrun_error_clear(&err);
  assert_int_equal(err.code, AOTRUN_OK);
  assert_string_equal(err.message, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set_formats_and_returns_code),
      cmocka_unit_test(test_null_error_object),
      cmocka_unit_test(test_prefix_keeps_code),
      cmocka_unit_test(test_message_may_be_an_argument),
      cmocka_unit_test(test_long_messages_truncate),
      cmocka_unit_test(test_clear),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
