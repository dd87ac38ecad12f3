/* test_warm_up_run_plan.c: when option warm_up_run may run a method at init
 * and the zeroed inputs' shapes (backend_cuda/warm_up_run_plan.h), each
 * refusal with its exact reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "aot_loader/program.h"
#include "backend_cuda/warm_up_run_plan.h"

static int refused(const char *json, const char *method, char *why) {
  return aotrun_warm_up_run_refused(json, strlen(json), method, why, 300);
}

#define METHOD(body) "{\"methods\": {\"forward\": {" body "}}}"

static void test_runnable_method(void **state) {
  (void)state;
  char why[300] = "x";
  assert_int_equal(
      refused(METHOD("\"writes_buffers\": false, \"aoti_torch_imports\": ["
                     "\"aoti_torch_cuda_addmm_out\", "
                     "\"aoti_torch_cuda_native_layer_norm\", "
                     "\"aoti_torch_cuda_index_put\", \"aoti_torch_empty_strided\"]"),
              "forward", why),
      0);
  assert_string_equal(why, "");
}

static void test_refusals(void **state) {
  (void)state;
  char why[300];
  assert_int_equal(refused(METHOD("\"writes_buffers\": true, "
                                  "\"aoti_torch_imports\": []"),
                           "forward", why), 1);
  assert_string_equal(why, "it writes buffers (a run would change its state)");
  assert_int_equal(refused(METHOD("\"aoti_torch_imports\": []"), "forward",
                           why), 1);
  assert_string_equal(why,
                      "its manifest does not say whether it writes buffers "
                      "(no writes_buffers: re-export it with this aotrun)");
  assert_int_equal(refused(METHOD("\"writes_buffers\": \"no\", "
                                  "\"aoti_torch_imports\": []"),
                           "forward", why), 1);
  assert_int_equal(refused(METHOD("\"writes_buffers\": false"), "forward",
                           why), 1);
  assert_string_equal(why, "its manifest does not list its imports (no "
                           "aoti_torch_imports)");
  assert_int_equal(refused(METHOD("\"writes_buffers\": false, "
                                  "\"aoti_torch_imports\": [1, "
                                  "\"aoti_torch_cuda_randn\"]"),
                           "forward", why), 1);
  assert_string_equal(why, "it imports aoti_torch_cuda_randn: a run would "
                           "draw random numbers and shift a fixed seed's "
                           "sequence");
  assert_int_equal(refused(METHOD("\"writes_buffers\": false, "
                                  "\"aoti_torch_imports\": ["
                                  "\"aoti_torch_cuda_bernoulli_p\"]"),
                           "forward", why), 1);
  assert_int_equal(refused(METHOD("\"writes_buffers\": false, "
                                  "\"aoti_torch_imports\": ["
                                  "\"aoti_torch_cuda__assert_async_msg\"]"),
                           "forward", why), 1);
  assert_string_equal(why, "it imports aoti_torch_cuda__assert_async_msg: "
                           "zeroed inputs may fail its device-side assert");
  assert_int_equal(refused(METHOD("\"writes_buffers\": false"), "decode",
                           why), 1);
  assert_string_equal(why, "the manifest has no method 'decode'");
  assert_int_equal(refused("not json", "forward", why), 1);
  assert_string_equal(why, "the manifest does not parse");
  assert_int_equal(aotrun_warm_up_run_refused(NULL, 0, "forward", why, 300),
                   1);
  assert_string_equal(why, "no manifest");
  /* A short buffer is cut, never overrun; NULL is allowed. */
  char tiny[8];
  assert_int_equal(aotrun_warm_up_run_refused("{}", 2, "f", tiny, sizeof tiny),
                   1);
  assert_string_equal(tiny, "the man");
  assert_int_equal(aotrun_warm_up_run_refused("{}", 2, "f", NULL, 0), 1);
}

/* x [s0, 4], y [2*s0, 4], z [s0 + 1], w [s1] (s1 in [2, inf]),
 * v [s2] (s2 in [0, 8]), u [s3] (s3 in [0, 0]), k [3] static. */
static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,"
    " \"methods\": {\"forward\": {\"library\": \"forward.so\","
    "  \"symbols\": {\"s0\": {\"min\": 1, \"max\": 1024},"
    "               \"s1\": {\"min\": 2, \"max\": null},"
    "               \"s2\": {\"min\": 0, \"max\": 8},"
    "               \"s3\": {\"min\": 0, \"max\": 0}},"
    "  \"inputs\": ["
    "   {\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"s0\", 4]},"
    "   {\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [\"2*s0\", 4],"
    "    \"dims\": [{\"symbol\": \"s0\", \"scale\": 2}, null]},"
    "   {\"name\": \"z\", \"dtype\": \"int64\", \"shape\": [\"s0 + 1\"],"
    "    \"dims\": [{\"symbol\": \"s0\", \"scale\": 1, \"offset\": 1}]},"
    "   {\"name\": \"w\", \"dtype\": \"int64\", \"shape\": [\"s1\"]},"
    "   {\"name\": \"v\", \"dtype\": \"int64\", \"shape\": [\"s2\"]},"
    "   {\"name\": \"u\", \"dtype\": \"int64\", \"shape\": [\"s3\"]},"
    "   {\"name\": \"k\", \"dtype\": \"bool\", \"shape\": [3]}],"
    "  \"outputs\": [{\"name\": \"o\", \"dtype\": \"float32\","
    "                 \"shape\": [\"s0\", 4]}]}}}";

static const aotrun_program_method *forward(const char *json,
                                            aotrun_program **p) {
  aotrun_error err = {AOTRUN_OK, ""};
  assert_int_equal(aotrun_program_parse(json, strlen(json), p, &err),
                   AOTRUN_OK);
  const aotrun_program_method *m = NULL;
  assert_int_equal(aotrun_program_find_method(*p, "forward", &m, &err),
                   AOTRUN_OK);
  return m;
}

/* aotrun_warm_up_run_shapes at the hint (the first run's sizes). */
static int shapes_at_hint(const aotrun_program_method *m,
                          int64_t (*shapes)[AOTRUN_PROGRAM_MAX_DIMS],
                          size_t max_inputs, char *why, size_t why_size) {
  return aotrun_warm_up_run_shapes(m, AOTRUN_WARM_UP_AT_HINT, shapes,
                                   max_inputs, why, why_size);
}

static void test_shapes_smallest_in_range(void **state) {
  (void)state;
  aotrun_program *p = NULL;
  const aotrun_program_method *m = forward(kManifest, &p);
  int64_t shapes[8][AOTRUN_PROGRAM_MAX_DIMS];
  char why[300] = "x";
  assert_int_equal(shapes_at_hint(m, shapes, 8, why, sizeof why), 1);
  assert_string_equal(why, "");
  /* s0 = 1 (its min); relations hold: y 2*s0, z s0 + 1. */
  assert_int_equal(shapes[0][0], 1);
  assert_int_equal(shapes[0][1], 4);
  assert_int_equal(shapes[1][0], 2);
  assert_int_equal(shapes[1][1], 4);
  assert_int_equal(shapes[2][0], 2);
  assert_int_equal(shapes[3][0], 2); /* s1's min */
  assert_int_equal(shapes[4][0], 1); /* s2: min 0, so 1 (no empty run) */
  assert_int_equal(shapes[5][0], 0); /* s3: only 0 is in range */
  assert_int_equal(shapes[6][0], 3);
  /* More inputs than room. */
  assert_int_equal(shapes_at_hint(m, shapes, 6, why, sizeof why), 0);
  assert_string_equal(why, "it has 7 inputs, more than 6");
  aotrun_program_destroy(p);
}

/* A symbol's hint (the export example's value) wins over its min. */
static void test_shapes_at_the_hint(void **state) {
  (void)state;
  static const char json[] =
      "{\"format\": \"aotrun-program\", \"format_version\": 1,"
      " \"methods\": {\"forward\": {\"library\": \"forward.so\","
      "  \"symbols\": {\"b\": {\"min\": 1, \"max\": 1024, \"hint\": 4},"
      "               \"t\": {\"min\": 0, \"max\": 8, \"hint\": 0}},"
      "  \"inputs\": ["
      "   {\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"b\", 16]},"
      "   {\"name\": \"y\", \"dtype\": \"float32\", \"shape\": [\"2*b + 1\"],"
      "    \"dims\": [{\"symbol\": \"b\", \"scale\": 2, \"offset\": 1}]},"
      "   {\"name\": \"z\", \"dtype\": \"int64\", \"shape\": [\"t\"]}],"
      "  \"outputs\": [{\"name\": \"o\", \"dtype\": \"float32\","
      "                 \"shape\": [\"b\", 16]}]}}}";
  aotrun_program *p = NULL;
  const aotrun_program_method *m = forward(json, &p);
  int64_t shapes[3][AOTRUN_PROGRAM_MAX_DIMS];
  char why[300];
  assert_int_equal(shapes_at_hint(m, shapes, 3, why, sizeof why), 1);
  assert_int_equal(shapes[0][0], 4);
  assert_int_equal(shapes[0][1], 16);
  assert_int_equal(shapes[1][0], 9); /* the relation at the hint */
  assert_int_equal(shapes[2][0], 1); /* a hint of 0 runs nothing: 1 */
  /* The second run's sizes: the smallest, the hint ignored. */
  assert_int_equal(aotrun_warm_up_run_shapes(m, AOTRUN_WARM_UP_AT_SMALLEST,
                                             shapes, 3, why, sizeof why),
                   1);
  assert_int_equal(shapes[0][0], 1);
  assert_int_equal(shapes[0][1], 16);
  assert_int_equal(shapes[1][0], 3);
  assert_int_equal(shapes[2][0], 1);
  aotrun_program_destroy(p);
}

static void test_shapes_refuse_a_dim_without_range(void **state) {
  (void)state;
  static const char json[] =
      "{\"format\": \"aotrun-program\", \"format_version\": 1,"
      " \"methods\": {\"forward\": {\"library\": \"forward.so\","
      "  \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\","
      "                \"shape\": [4, \"s0\"]}],"
      "  \"outputs\": [{\"name\": \"o\", \"dtype\": \"float32\","
      "                 \"shape\": [4]}]}}}";
  aotrun_program *p = NULL;
  const aotrun_program_method *m = forward(json, &p);
  int64_t shapes[1][AOTRUN_PROGRAM_MAX_DIMS];
  char why[300];
  assert_int_equal(shapes_at_hint(m, shapes, 1, why, sizeof why), 0);
  assert_string_equal(why, "input 0 (x) dim 1 (s0) has no declared range");
  aotrun_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runnable_method),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_shapes_smallest_in_range),
      cmocka_unit_test(test_shapes_at_the_hint),
      cmocka_unit_test(test_shapes_refuse_a_dim_without_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
