/*
 * fuzz_inputs.c: libFuzzer target for the DLPack input checks made at
 * execute (aotrun_method_runner_check_inputs, aot_loader/method_inputs.c):
 * hostile DLTensors (any dtype, ndim, shape and strides values, NULL
 * arrays, NULL data, any device) against a method declaring
 *   x float32 [s0, 4], y int64 [s0, s1, 2], z bool [] .
 * The runner is built by hand (no model library) with the fields the checks
 * read. Not part of `bazel test //...`; run with
 * testing/fuzz/run_fuzz.sh inputs.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/method_runner_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char k_manifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1, \"methods\": "
    "{\"forward\": {\"library\": \"f.so\", \"inputs\": ["
    "{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"s0\", 4]},"
    "{\"name\": \"y\", \"dtype\": \"int64\", \"shape\": [\"s0\", \"s1\", 2]},"
    "{\"name\": \"z\", \"dtype\": \"bool\", \"shape\": []}],"
    "\"outputs\": [{\"name\": \"o\", \"dtype\": \"float32\", "
    "\"shape\": [\"s0\", 4]}]}}}";

static aotrun_program *g_program;
static aotrun_io_info g_io[3];

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint64_t take(reader *r, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; i++) {
    v |= (uint64_t)(r->n ? *r->p : 0) << (8 * i);
    if (r->n) r->p++, r->n--;
  }
  return v;
}

static void setup(void) {
  aotrun_error err;
  aotrun_error_clear(&err);
  if (aotrun_program_parse(k_manifest, sizeof k_manifest - 1, &g_program,
                           &err) != AOTRUN_OK)
    abort();
  const aotrun_program_method *m = &g_program->methods[0];
  for (size_t i = 0; i < m->num_inputs; i++) {
    g_io[i].struct_size = sizeof g_io[i];
    g_io[i].ndim = m->inputs[i].ndim;
    g_io[i].name = m->inputs[i].name;
    if (!aotrun_dl_dtype_from_scalar_type(m->inputs[i].dtype, &g_io[i].dtype))
      abort();
    for (int32_t d = 0; d < m->inputs[i].ndim; d++)
      g_io[i].shape[d] =
          m->inputs[i].dims[d] < 0 ? AOTRUN_DYNAMIC_DIM : m->inputs[i].dims[d];
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_program == NULL) setup();
  reader rd = {data, size};
  aotrun_method_runner r;
  memset(&r, 0, sizeof r);
  r.method = "forward";
  r.program = g_program;
  r.pm = &g_program->methods[0];
  r.io[0] = g_io;
  r.num_io[0] = 3;
  uint8_t mode = (uint8_t)take(&rd, 1);
  r.device.device_type = (mode & 1) ? kDLCUDA : kDLCPU;
  r.device.device_id = (mode >> 1) & 1;
  memcpy(r.device_str, (mode & 1) ? "cuda:0" : "cpu", (mode & 1) ? 7 : 4);

  size_t n = (size_t)take(&rd, 1) % 5; /* 0..4 inputs, 3 expected */
  DLTensor t[4];
  int64_t *arrays[8] = {0};
  static int64_t dummy_data;
  memset(t, 0, sizeof t);
  for (size_t i = 0; i < n; i++) {
    t[i].dtype.code = (uint8_t)take(&rd, 1);
    t[i].dtype.bits = (uint8_t)take(&rd, 1);
    t[i].dtype.lanes = (uint16_t)take(&rd, 2);
    t[i].ndim = (int32_t)(int8_t)take(&rd, 1);
    uint8_t flags = (uint8_t)take(&rd, 1);
    t[i].device.device_type = (DLDeviceType)(int32_t)take(&rd, 1);
    t[i].device.device_id = (int32_t)(int8_t)take(&rd, 1);
    t[i].data = (flags & 4) ? NULL : &dummy_data;
    /* shape and strides hold exactly max(ndim, 0) entries (ASan sees any
     * read past them). */
    size_t len = t[i].ndim > 0 ? (size_t)t[i].ndim : 0;
    for (int k = 0; k < 2; k++) {
      if (!(flags & (1 << k))) continue;
      int64_t *a = malloc((len ? len : 1) * sizeof *a);
      if (a == NULL) goto done;
      for (size_t d = 0; d < len; d++) {
        uint8_t kind = (uint8_t)take(&rd, 1);
        /* Mostly small values, sometimes a full 64-bit one. */
        a[d] = (kind & 0x80) ? (int64_t)take(&rd, 8) : (int64_t)(kind & 0x7f) - 8;
      }
      arrays[2 * i + (size_t)k] = a;
      if (k == 0) t[i].shape = a; else t[i].strides = a;
    }
  }
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_method_runner_check_inputs(&r, n ? t : NULL, n, &err);
  aotrun_method_runner_check_inputs(&r, t, n, &err);
done:
  for (size_t i = 0; i < 8; i++) free(arrays[i]);
  return 0;
}
