/* test_weight_fixture.c: see test_weight_fixture.h. */
#include "testing/loader/test_weight_fixture.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testing/loader/test_program_json.h"

static const char kManifest[] =
    "{\"format\": \"aotrun-program\", \"format_version\": 1,"
    " \"weights\": \"weights.safetensors\", \"methods\": {"
    "  \"forward\": {\"library\": \"forward.so\", \"inputs\": [],"
    "   \"outputs\": [], \"constants\": ["
    "   {\"name\": \"weight\", \"fqn\": \"lin.weight\", \"type\": \"parameter\","
    "    \"dtype\": \"float32\", \"device\": \"cuda\", \"sizes\": [3, 4],"
    "    \"strides\": [4, 1], \"storage_offset\": 0, \"nbytes\": 48},"
    "   {\"name\": \"bias\", \"fqn\": \"lin.bias\", \"type\": \"parameter\","
    "    \"dtype\": \"float32\", \"device\": \"cuda\", \"sizes\": [3],"
    "    \"strides\": [1], \"storage_offset\": 0, \"nbytes\": 12},"
    "   {\"name\": \"scale64\", \"fqn\": \"scale\", \"type\": \"buffer\","
    "    \"dtype\": \"float64\", \"device\": \"cuda\", \"sizes\": [1],"
    "    \"strides\": [1], \"storage_offset\": 0, \"nbytes\": 8},"
    "   {\"name\": \"calls\", \"fqn\": \"calls\", \"type\": \"buffer\","
    "    \"dtype\": \"float32\", \"device\": \"cpu\", \"sizes\": [1],"
    "    \"strides\": [1], \"storage_offset\": 0, \"nbytes\": 4}]},"
    "  \"decode\": {\"library\": \"decode.so\", \"inputs\": [],"
    "   \"outputs\": [], \"constants\": ["
    "   {\"name\": \"w_t\", \"fqn\": \"lin.weight\", \"type\": \"parameter\","
    "    \"dtype\": \"float32\", \"device\": \"cuda\", \"sizes\": [4, 3],"
    "    \"strides\": [1, 4], \"storage_offset\": 0, \"nbytes\": 48},"
    "   {\"name\": \"b\", \"fqn\": \"lin.bias\", \"type\": \"parameter\","
    "    \"dtype\": \"float32\", \"device\": \"cuda\", \"sizes\": [3],"
    "    \"strides\": [1], \"storage_offset\": 0, \"nbytes\": 12}]}}}";

/* Data: weight [0, 48), bias [48, 60), scale [64, 72), calls [72, 76). */
static const char kHeader[] =
    "{\"lin.weight\": {\"dtype\": \"F32\", \"shape\": [3, 4],"
    " \"data_offsets\": [0, 48]},"
    " \"lin.bias\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\":"
    " [48, 60]},"
    " \"scale\": {\"dtype\": \"F64\", \"shape\": [1], \"data_offsets\":"
    " [64, 72]},"
    " \"calls\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\":"
    " [72, 76]}}";
#define DATA_SIZE 76

/* ---- fake constant target ----------------------------------------------- */

static aotrun_status lib_num(void *ctx, size_t *n, aotrun_error *err) {
  fake_library *l = ctx;
  *n = 0;
  if (l->no_introspection)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "fake library cannot list its constants");
  *n = l->num_infos;
  return AOTRUN_OK;
}

static aotrun_status lib_info(void *ctx, size_t i, aotrun_constant_info *out,
                              aotrun_error *err) {
  fake_library *l = ctx;
  if (i >= l->num_infos)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT, "bad index");
  *out = l->infos[i];
  return AOTRUN_OK;
}

static aotrun_status lib_set(void *ctx, const aotrun_constant_pair *pairs,
                             size_t n, aotrun_error *err) {
  fake_library *l = ctx;
  l->set_calls++;
  if (l->no_user_managed)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "fake library takes no user-managed constants");
  if (l->fail_user_managed)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "fake UpdateUserManagedConstantBufferPairs "
                            "failed");
  assert_true(n <= FAKE_MAX_CONSTANTS);
  l->num_pairs = n;
  for (size_t i = 0; i < n; i++) {
    snprintf(l->pair_names[i], sizeof l->pair_names[i], "%s", pairs[i].name);
    l->pair_views[i] = *(const fake_tensor *)pairs[i].handle;
  }
  return AOTRUN_OK;
}

static aotrun_status lib_blob_size(void *ctx, uint64_t *size,
                                   aotrun_error *err) {
  (void)err;
  *size = ((fake_library *)ctx)->blob_size;
  return AOTRUN_OK;
}

static aotrun_status lib_load_blob(void *ctx, const void *blob, uint64_t size,
                                   aotrun_error *err) {
  fake_library *l = ctx;
  l->blob_calls++;
  if (size != l->blob_size || size > sizeof l->blob)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "fake: blob of %llu bytes",
                            (unsigned long long)size);
  memcpy(l->blob, blob, (size_t)size);
  l->blob_len = size;
  return AOTRUN_OK;
}

/* ---- fake views --------------------------------------------------------- */

static aotrun_status view_create(void *ctx, void *data, int32_t ndim,
                                 const int64_t *sizes, const int64_t *strides,
                                 int64_t offset, int32_t dtype,
                                 int32_t device_type, int32_t device_index,
                                 AtenTensorHandle *out, aotrun_error *err) {
  fake_views *v = ctx;
  *out = NULL;
  if (++v->created == v->fail_at)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL, "fake view failed");
  fake_tensor *t = calloc(1, sizeof *t);
  assert_non_null(t);
  t->data = data;
  t->ndim = ndim;
  for (int32_t i = 0; i < ndim; i++) {
    t->sizes[i] = sizes[i];
    t->strides[i] = strides[i];
  }
  t->storage_offset = offset;
  t->dtype = dtype;
  t->device_type = device_type;
  t->device_index = device_index;
  v->live++;
  *out = (AtenTensorHandle)t;
  return AOTRUN_OK;
}

static void view_destroy(void *ctx, AtenTensorHandle h) {
  fake_views *v = ctx;
  v->live--;
  free(h);
}

/* ---- fake memory -------------------------------------------------------- */

static aotrun_status mem_alloc(void *ctx, size_t bytes, void **ptr) {
  ((fake_memory *)ctx)->allocs++;
  *ptr = malloc(bytes);
  return *ptr ? AOTRUN_OK : AOTRUN_ERR_OUT_OF_MEMORY;
}

static void mem_free(void *ctx, void *ptr) {
  ((fake_memory *)ctx)->frees++;
  free(ptr);
}

static aotrun_status mem_upload(void *ctx, void *dst, const void *src,
                                size_t n) {
  ((fake_memory *)ctx)->uploads++;
  memcpy(dst, src, n);
  return AOTRUN_OK;
}

static void log_message(void *ctx, int32_t level, const char *message) {
  weight_fixture *f = ctx;
  (void)level;
  f->log_count++;
  snprintf(f->last_log, sizeof f->last_log, "%s", message);
}

/* ---- fixture ------------------------------------------------------------ */

static void make_file(weight_fixture *f) {
  size_t n = strlen(kHeader);
  f->file_size = 8 + n + DATA_SIZE;
  f->file = malloc(f->file_size);
  assert_non_null(f->file);
  for (int i = 0; i < 8; i++) f->file[i] = (uint8_t)((uint64_t)n >> (8 * i));
  memcpy(f->file + 8, kHeader, n);
  for (size_t i = 0; i < DATA_SIZE; i++)
    f->file[8 + n + i] = (uint8_t)(i + 1);
  aotrun_error err = {0};
  assert_int_equal(aotrun_safetensors_parse(f->file, f->file_size,
                                            "weights.safetensors",
                                            &f->weights, &err),
                   AOTRUN_OK);
}

/* The library's view: the manifest's constants with a folded one between
 * bias and scale64. */
static void make_library(weight_fixture *f) {
  fake_library *l = &f->lib;
  const aotrun_program_method *m = f->forward;
  for (size_t i = 0; i < m->num_constants; i++) {
    const aotrun_program_constant *c = &m->constants[i];
    if (i == 2) {
      l->infos[l->num_infos++] = (aotrun_constant_info){
          "folded_0", "", 6, 4, 16, 1};
    }
    l->infos[l->num_infos++] = (aotrun_constant_info){
        c->name, c->fqn, c->dtype, c->type, c->nbytes, 0};
  }
  l->blob_size = 256; /* 64-byte records (one constant is on the cpu) */
  f->target = (aotrun_constant_target){l,        lib_num,       lib_info,
                                       lib_set,  lib_blob_size, lib_load_blob};
}

weight_fixture *weight_fixture_new(const char *edit_path,
                                   const char *edit_value) {
  weight_fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  char *json = edit_path ? json_with(kManifest, edit_path, edit_value)
                         : strdup(kManifest);
  aotrun_error err = {0};
  aotrun_status s = aotrun_program_parse(json, strlen(json), &f->program,
                                         &err);
  if (s != AOTRUN_OK) print_message("manifest: %s\n", err.message);
  assert_int_equal(s, AOTRUN_OK);
  free(json);
  f->forward = &f->program->methods[0];
  make_file(f);
  make_library(f);
  f->views = (aotrun_tensor_view_ops){&f->views_state, view_create,
                                      view_destroy};
  f->cuda_ops = (aotrun_device_ops){&f->cuda_mem, mem_alloc, mem_free,
                                    mem_upload};
  f->host_ops = (aotrun_device_ops){&f->host_mem, mem_alloc, mem_free,
                                    mem_upload};
  assert_int_equal(aotrun_weight_cache_create(&f->cuda_ops, &f->host_ops,
                                              log_message, f, &f->cache,
                                              &err),
                   AOTRUN_OK);
  return f;
}

void weight_fixture_free(weight_fixture *f) {
  aotrun_weight_cache_destroy(f->cache);
  assert_int_equal(f->views_state.live, 0);
  assert_int_equal(f->cuda_mem.allocs, f->cuda_mem.frees);
  assert_int_equal(f->host_mem.allocs, f->host_mem.frees);
  aotrun_safetensors_destroy(f->weights);
  free(f->file);
  aotrun_program_destroy(f->program);
  free(f);
}

const uint8_t *weight_fixture_bytes(weight_fixture *f, const char *fqn) {
  const aotrun_safetensors_entry *e = aotrun_safetensors_find(f->weights, fqn);
  assert_non_null(e);
  return e->data;
}

aotrun_constant_info *weight_fixture_lib_constant(weight_fixture *f,
                                                  const char *name) {
  for (size_t i = 0; i < f->lib.num_infos; i++)
    if (strcmp(f->lib.infos[i].name, name) == 0) return &f->lib.infos[i];
  fail_msg("no library constant '%s'", name);
  return NULL;
}
