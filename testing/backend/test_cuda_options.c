/* test_cuda_options.c: the CUDA backend's option table and parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "aot_loader/placement_setting.h"
#include "backend_cuda/cuda_options.h"

static aotrun_error err;

static void test_defaults(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  assert_string_equal(o.graph_methods, "");
  assert_int_equal(o.shared_stream, 0);
  assert_int_equal(o.share_weights, 1);
  assert_int_equal(o.log_level, AOTRUN_LOG_INFO);
  aotrun_option out;
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_LOG_LEVEL, &out);
  assert_string_equal(out.key, "log_level");
  assert_string_equal(out.string_value, "info");
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_SHARE_WEIGHTS, &out);
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 1);  /* init does the one-time work, the model's own included (issue 12) */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_WARM_UP, &out);
  assert_int_equal(out.bool_value, 1);
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_WARM_UP_RUN, &out);
  assert_string_equal(out.key, "warm_up_run");
  assert_int_equal(out.bool_value, 1);
  /* Replay's input copies as nodes of the graph (faster, measured). */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_INPUT_NODES, &out);
  assert_string_equal(out.key, "cuda_graph_input_nodes");
  assert_int_equal(out.bool_value, 1);
  /* Its output copies as nodes too (measured; the GPU suite passes). */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_OUTPUT_NODES, &out);
  assert_string_equal(out.key, "cuda_graph_output_nodes");
  assert_int_equal(out.bool_value, 1);
  /* Copy nodes as kernel nodes: opt-in (not faster on the H200). */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_COPY_KERNELS, &out);
  assert_string_equal(out.key, "cuda_graph_copy_kernels");
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 0);
  /* The capture at init: on (measured: a graph's first call a replay). */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_CAPTURE_AT_INIT, &out);
  assert_string_equal(out.key, "cuda_graph_capture_at_init");
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 1);
  /* The done counter's wait: opt-in until measured on the GPU. */
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_DONE_FLAG, &out);
  assert_string_equal(out.key, "cuda_graph_done_flag");
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 0);
}

/* cuda_graph_done_flag is set anywhere (on a method: for its next
 * capture), and takes a BOOL only. */
static void test_done_flag_option(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  aotrun_cuda_option_id id;
  aotrun_error err = {AOTRUN_OK, ""};
  for (int method = 0; method < 2; method++)
    assert_int_equal(aotrun_cuda_option_find("cuda_graph_done_flag",
                                             AOTRUN_OPTION_BOOL, 1, method,
                                             &id, &err),
                     AOTRUN_OK);
  aotrun_option on = {"cuda_graph_done_flag", AOTRUN_OPTION_BOOL, 1, 0, NULL};
  assert_int_equal(aotrun_cuda_options_store(&o, id, &on, &err), AOTRUN_OK);
  assert_int_equal(o.graph_done_flag, 1);
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_done_flag",
                                           AOTRUN_OPTION_INT, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'cuda_graph_done_flag' takes a BOOL, got a INT");
}

/* cuda_graph_capture_at_init acts at init only: on by default (reads 1,
 * held as -1: not asked for), set backend-wide (for handles made
 * afterwards), read anywhere, refused on a live method. */
static void test_capture_at_init_option(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  assert_int_equal(o.graph_capture_at_init, -1);
  aotrun_cuda_option_id id;
  aotrun_error err = {AOTRUN_OK, ""};
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_capture_at_init",
                                           AOTRUN_OPTION_BOOL, 1, 0, &id,
                                           &err),
                   AOTRUN_OK);
  aotrun_option out;
  aotrun_cuda_options_read(&o, id, &out);
  assert_int_equal(out.bool_value, 1);
  aotrun_option off = {"cuda_graph_capture_at_init", AOTRUN_OPTION_BOOL, 0,
                       0, NULL};
  assert_int_equal(aotrun_cuda_options_store(&o, id, &off, &err), AOTRUN_OK);
  aotrun_cuda_options_read(&o, id, &out);
  assert_int_equal(out.bool_value, 0);
  aotrun_option on = {"cuda_graph_capture_at_init", AOTRUN_OPTION_BOOL, 1, 0,
                      NULL};
  assert_int_equal(aotrun_cuda_options_store(&o, id, &on, &err), AOTRUN_OK);
  assert_int_equal(o.graph_capture_at_init, 1);
  aotrun_cuda_options_read(&o, id, &out);
  assert_int_equal(out.bool_value, 1);
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_capture_at_init",
                                           AOTRUN_OPTION_BOOL, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_capture_at_init",
                                           AOTRUN_OPTION_BOOL, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "option 'cuda_graph_capture_at_init' can only be set "
                      "backend-wide (method NULL)");
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_capture_at_init",
                                           AOTRUN_OPTION_INT, 1, 0, &id,
                                           &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'cuda_graph_capture_at_init' takes a BOOL, "
                      "got a INT");
}

/* Issue 15: library_temp_file is set backend-wide and read anywhere;
 * load_report is read on a method only. */
static void test_loading_options(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  aotrun_cuda_option_id id;
  aotrun_option out;
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_LIBRARY_TEMP_FILE, &out);
  assert_int_equal(out.bool_value, 0);
  assert_int_equal(aotrun_cuda_option_find("library_temp_file",
                                           AOTRUN_OPTION_BOOL, 1, 0, &id,
                                           &err),
                   AOTRUN_OK);
  aotrun_option set = {"library_temp_file", AOTRUN_OPTION_BOOL, 1, 0, NULL};
  assert_int_equal(aotrun_cuda_options_store(&o, id, &set, &err), AOTRUN_OK);
  aotrun_cuda_options_read(&o, id, &out);
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 1);
  assert_int_equal(aotrun_cuda_option_find("library_temp_file",
                                           AOTRUN_OPTION_BOOL, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(aotrun_cuda_option_find("library_temp_file", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_cuda_option_find("load_report", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_cuda_option_type(id), AOTRUN_OPTION_STRING);
  assert_int_equal(aotrun_cuda_option_find("load_report",
                                           AOTRUN_OPTION_STRING, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message, "option 'load_report' is read-only");
  assert_int_equal(aotrun_cuda_option_find("load_report", 0, 0, 0, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
}

static void test_unknown_key(void **state) {
  (void)state;
  aotrun_cuda_option_id id;
  assert_int_equal(aotrun_cuda_option_find("enable_graphs",
                                           AOTRUN_OPTION_BOOL, 1, 0, &id,
                                           &err),
                   AOTRUN_ERR_NOT_FOUND);
  assert_string_equal(err.message,
                      "backend cuda has no option 'enable_graphs' (options: "
                      "enable_cuda_graph_for_method, shared_stream, "
                      "share_weights, log_level, recapture, "
                      "cuda_graph_phase, weight_copies, gpu_timing, "
                      "last_gpu_time_ns, cuda_graph_shapes, "
                      "cuda_graph_bytes, library_temp_file, "
                      "load_report, warm_up, warm_up_run, "
                      "cuda_graph_input_nodes, cuda_graph_output_nodes, "
                      "output_placement, cuda_graph_copy_kernels, "
                      "cuda_graph_capture_at_init, cuda_graph_done_flag)");
  assert_int_equal(aotrun_cuda_option_find(NULL, 0, 0, 0, &id, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
}

static void test_wrong_type(void **state) {
  (void)state;
  aotrun_cuda_option_id id;
  assert_int_equal(aotrun_cuda_option_find("shared_stream",
                                           AOTRUN_OPTION_STRING, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'shared_stream' takes a BOOL, got a STRING");
  assert_int_equal(aotrun_cuda_option_find("enable_cuda_graph_for_method",
                                           AOTRUN_OPTION_INT, 1, 0, &id,
                                           &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'enable_cuda_graph_for_method' takes a STRING, "
                      "got a INT");
  /* get_option does not check a type. */
  assert_int_equal(aotrun_cuda_option_find("shared_stream", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(id, AOTRUN_CUDA_OPT_SHARED_STREAM);
}

static void test_where_options_apply(void **state) {
  (void)state;
  aotrun_cuda_option_id id;
  assert_int_equal(aotrun_cuda_option_find("recapture", AOTRUN_OPTION_BOOL, 1,
                                           0, &id, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "option 'recapture' can only be set on a method handle");
  assert_int_equal(aotrun_cuda_option_find("share_weights",
                                           AOTRUN_OPTION_BOOL, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "option 'share_weights' can only be set backend-wide "
                      "(method NULL)");
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_phase",
                                           AOTRUN_OPTION_STRING, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message,
                      "option 'cuda_graph_phase' is read-only");
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_phase", 0, 0, 0, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_int_equal(aotrun_cuda_option_find("cuda_graph_phase", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_cuda_option_find("share_weights", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  /* weight_copies: an INT read on a method handle, never set. */
  assert_int_equal(aotrun_cuda_option_find("weight_copies", AOTRUN_OPTION_INT,
                                           1, 1, &id, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message, "option 'weight_copies' is read-only");
  assert_int_equal(aotrun_cuda_option_find("weight_copies", 0, 0, 0, &id,
                                           &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message, "option 'weight_copies' can only be read "
                      "on a method handle");
  assert_int_equal(aotrun_cuda_option_find("weight_copies", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(id, AOTRUN_CUDA_OPT_WEIGHT_COPIES);
  /* gpu_timing: a BOOL set and read on a method handle; last_gpu_time_ns:
   * an INT read there only. */
  assert_int_equal(aotrun_cuda_option_find("gpu_timing", AOTRUN_OPTION_BOOL,
                                           1, 1, &id, &err),
                   AOTRUN_OK);
  assert_int_equal(id, AOTRUN_CUDA_OPT_GPU_TIMING);
  assert_int_equal(aotrun_cuda_option_find("gpu_timing", AOTRUN_OPTION_BOOL,
                                           1, 0, &id, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message, "option 'gpu_timing' can only be set on a "
                      "method handle");
  assert_int_equal(aotrun_cuda_option_find("last_gpu_time_ns",
                                           AOTRUN_OPTION_INT, 1, 1, &id, &err),
                   AOTRUN_ERR_NOT_SUPPORTED);
  assert_string_equal(err.message, "option 'last_gpu_time_ns' is read-only");
  assert_int_equal(aotrun_cuda_option_find("last_gpu_time_ns", 0, 0, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(id, AOTRUN_CUDA_OPT_LAST_GPU_TIME);
}

static void check_list(const char *in, const char *want) {
  char out[AOTRUN_CUDA_METHOD_LIST_MAX];
  assert_int_equal(aotrun_cuda_method_list_normalize(in, out, sizeof out,
                                                     &err),
                   AOTRUN_OK);
  assert_string_equal(out, want);
}

static void test_method_lists(void **state) {
  (void)state;
  check_list("forward", "forward");
  check_list(" forward , decode ", "forward,decode");
  check_list("forward,,decode,", "forward,decode");
  check_list(",\t, ,", "");
  check_list("", "");
  char out[16];
  assert_int_equal(aotrun_cuda_method_list_normalize("for ward", out,
                                                     sizeof out, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'enable_cuda_graph_for_method': method name "
                      "'for ward' contains a space");
  assert_int_equal(aotrun_cuda_method_list_normalize(
                       "aaaaaaaa,bbbbbbbb", out, sizeof out, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'enable_cuda_graph_for_method': the list is "
                      "longer than 15 bytes");
  assert_true(aotrun_cuda_method_list_contains("forward,decode", "decode"));
  assert_true(aotrun_cuda_method_list_contains("forward,decode", "forward"));
  assert_false(aotrun_cuda_method_list_contains("forward,decode", "dec"));
  assert_false(aotrun_cuda_method_list_contains("forward2", "forward"));
  assert_false(aotrun_cuda_method_list_contains("", "forward"));
  assert_false(aotrun_cuda_method_list_contains("forward", ""));
}

static void test_store_and_read(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  aotrun_option opt = {"enable_cuda_graph_for_method", AOTRUN_OPTION_STRING,
                       0, 0, " decode,  forward,"};
  assert_int_equal(aotrun_cuda_options_store(
                       &o, AOTRUN_CUDA_OPT_GRAPH_METHODS, &opt, &err),
                   AOTRUN_OK);
  aotrun_option out;
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_GRAPH_METHODS, &out);
  assert_string_equal(out.string_value, "decode,forward");
  /* A bad list keeps the old value. */
  opt.string_value = "a b";
  assert_int_equal(aotrun_cuda_options_store(
                       &o, AOTRUN_CUDA_OPT_GRAPH_METHODS, &opt, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(o.graph_methods, "decode,forward");
  aotrun_option lvl = {"log_level", AOTRUN_OPTION_STRING, 0, 0, "WARNING"};
  assert_int_equal(aotrun_cuda_options_store(&o, AOTRUN_CUDA_OPT_LOG_LEVEL,
                                             &lvl, &err),
                   AOTRUN_OK);
  assert_int_equal(o.log_level, AOTRUN_LOG_WARNING);
  lvl.string_value = "loud";
  assert_int_equal(aotrun_cuda_options_store(&o, AOTRUN_CUDA_OPT_LOG_LEVEL,
                                             &lvl, &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'log_level': 'loud' is not debug, info, warning "
                      "or error");
  aotrun_option b = {"shared_stream", AOTRUN_OPTION_BOOL, 1, 0, NULL};
  assert_int_equal(aotrun_cuda_options_store(
                       &o, AOTRUN_CUDA_OPT_SHARED_STREAM, &b, &err),
                   AOTRUN_OK);
  assert_int_equal(o.shared_stream, 1);
  assert_int_equal(aotrun_cuda_options_store(&o, AOTRUN_CUDA_OPT_RECAPTURE,
                                             &b, &err),
                   AOTRUN_ERR_INTERNAL);
}

/* output_placement: unset reads the environment (else the build's
 * default); set, its own value whatever the environment says. */
static void test_output_placement(void **state) {
  (void)state;
  aotrun_cuda_options o;
  aotrun_cuda_options_default(&o);
  assert_int_equal(o.output_placement, -1);
  aotrun_option out;
  setenv("AOTRUN_OUTPUT_PLACEMENT", "0", 1);
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT, &out);
  assert_string_equal(out.key, "output_placement");
  assert_int_equal(out.type, AOTRUN_OPTION_BOOL);
  assert_int_equal(out.bool_value, 0);
  setenv("AOTRUN_OUTPUT_PLACEMENT", "1", 1);
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT, &out);
  assert_int_equal(out.bool_value, 1);
  unsetenv("AOTRUN_OUTPUT_PLACEMENT");
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT, &out);
  assert_int_equal(out.bool_value, AOTRUN_OUTPUT_PLACEMENT_DEFAULT);
  aotrun_option off = {"output_placement", AOTRUN_OPTION_BOOL, 0, 0, NULL};
  assert_int_equal(aotrun_cuda_options_store(
                       &o, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT, &off, &err),
                   AOTRUN_OK);
  setenv("AOTRUN_OUTPUT_PLACEMENT", "1", 1);
  aotrun_cuda_options_read(&o, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT, &out);
  unsetenv("AOTRUN_OUTPUT_PLACEMENT");
  assert_int_equal(out.bool_value, 0);
  /* Set and read both backend-wide and on a method. */
  aotrun_cuda_option_id id;
  assert_int_equal(aotrun_cuda_option_find("output_placement",
                                           AOTRUN_OPTION_BOOL, 1, 0, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(id, AOTRUN_CUDA_OPT_OUTPUT_PLACEMENT);
  assert_int_equal(aotrun_cuda_option_find("output_placement",
                                           AOTRUN_OPTION_BOOL, 1, 1, &id,
                                           &err),
                   AOTRUN_OK);
  assert_int_equal(aotrun_cuda_option_find("output_placement",
                                           AOTRUN_OPTION_INT, 1, 1, &id,
                                           &err),
                   AOTRUN_ERR_INVALID_ARGUMENT);
  assert_string_equal(err.message,
                      "option 'output_placement' takes a BOOL, got a INT");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_unknown_key),
      cmocka_unit_test(test_loading_options),
      cmocka_unit_test(test_capture_at_init_option),
      cmocka_unit_test(test_done_flag_option),
      cmocka_unit_test(test_wrong_type),
      cmocka_unit_test(test_where_options_apply),
      cmocka_unit_test(test_method_lists),
      cmocka_unit_test(test_store_and_read),
      cmocka_unit_test(test_output_placement),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
