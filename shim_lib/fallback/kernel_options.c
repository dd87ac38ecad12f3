/* kernel_options.c: the fallback kernels' implementation choice
 * (kernel_options.h), read from the environment once and kept in one
 * atomic word, so the per-call check is a load. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_lib/aotrun_shim.h"
#include "shim_lib/fallback/kernel_options.h"

enum {
  OPTIONS_READ = 1, /* 0: not read yet */
  ATTN_TC_WIDE = 2,
  ATTN_F32_TILED = 4,
  CONV_GRAPH = 8,
  GEMM_LT = 16,
  BADDBMM_BIAS_EPILOGUE = 32,
  CONV_LOG = 64,
  CONV_TF32 = 128
};

static atomic_int options;

/* 1 when the variable name is set to exactly value. */
static int env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v != NULL && strcmp(v, value) == 0;
}

static int read_options(void) {
  int o = OPTIONS_READ;
  if (!env_is("AOTRUN_ATTN_TC", "narrow")) o |= ATTN_TC_WIDE;
  if (!env_is("AOTRUN_ATTN_F32", "simt")) o |= ATTN_F32_TILED;
  if (!env_is("AOTRUN_CONV_API", "legacy")) o |= CONV_GRAPH;
  if (env_is("AOTRUN_GEMM_LT", "1")) o |= GEMM_LT;
  if (!env_is("AOTRUN_BADDBMM_BIAS", "copy")) o |= BADDBMM_BIAS_EPILOGUE;
  if (!env_is("AOTRUN_CONV_TF32", "0") && !env_is("AOTRUN_CONV_TF32", "false") &&
      !env_is("AOTRUN_CONV_TF32", "off") && !env_is("AOTRUN_CONV_TF32", "no"))
    o |= CONV_TF32;
  const char *log = getenv("AOTRUN_CONV_LOG");
  if (log != NULL && log[0] != '\0' && strcmp(log, "0") != 0) o |= CONV_LOG;
  return o;
}

void aotrun_shim_read_kernel_options(void) {
  atomic_store(&options, read_options());
}

static int current(void) {
  int o = atomic_load_explicit(&options, memory_order_relaxed);
  if (o == 0) {
    /* Two first callers may both read; they store the same word. */
    o = read_options();
    atomic_store(&options, o);
  }
  return o;
}

int aotrun_fb_attn_tc_wide_enabled(void) {
  return (current() & ATTN_TC_WIDE) != 0;
}

int aotrun_fb_attn_f32_tiled_enabled(void) {
  return (current() & ATTN_F32_TILED) != 0;
}

int aotrun_fb_conv_graph_enabled(void) {
  return (current() & CONV_GRAPH) != 0;
}

int aotrun_fb_plain_lt_enabled(void) { return (current() & GEMM_LT) != 0; }

int aotrun_fb_baddbmm_bias_epilogue_enabled(void) {
  return (current() & BADDBMM_BIAS_EPILOGUE) != 0;
}

int aotrun_fb_conv_log_enabled(void) { return (current() & CONV_LOG) != 0; }

int aotrun_fb_conv_tf32_enabled(void) {
  return (current() & CONV_TF32) != 0;
}
