/*
 * st_file_read.c: reading a .safetensors file into tensor views (see
 * st_file.h). The header is validated by the loader's parser
 * (aot_loader/safetensors.c) so the CLI accepts exactly what a program's
 * weights file may hold; this file only maps its entries to DLPack dtypes
 * and bounds their rank.
 */
#include <stdlib.h>
#include <string.h>

#include "aot_loader/safetensors.h"
#include "aot_loader/scalar_type.h"
#include "plugin_api/host_error.h"
#include "plugin_api/host_file.h"
#include "plugin_api/st_file.h"

/* One loader entry as a view; the rank must fit a DLTensor of the ABI. */
static aotrun_status to_tensor(const char *name,
                               const aotrun_safetensors_entry *e,
                               aotrun_st_tensor *t) {
  const aotrun_scalar_type *st = aotrun_scalar_type_from_code(e->dtype);
  if (st == NULL || aotrun_st_dtype(st->safetensors_name, &t->dtype) !=
                        AOTRUN_OK)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: tensor '%s' has dtype %s, which aotrun "
                            "cannot pass to a method",
                            name, e->key, st ? st->safetensors_name : "?");
  if (e->ndim > AOTRUN_MAX_DIMS)
    return aotrun_host_fail(AOTRUN_ERR_NOT_SUPPORTED,
                            "%s: tensor '%s' has rank %zu, more than %d", name,
                            e->key, e->ndim, AOTRUN_MAX_DIMS);
  t->name = e->key;
  t->ndim = (int32_t)e->ndim;
  for (size_t d = 0; d < e->ndim; d++) t->shape[d] = e->shape[d];
  t->data = e->data;
  t->nbytes = (size_t)e->nbytes; /* inside the file, so it fits */
  return AOTRUN_OK;
}

aotrun_status aotrun_st_file_parse(const char *name, const void *bytes,
                                   size_t size, aotrun_st_file *out) {
  memset(out, 0, sizeof *out);
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_safetensors *view = NULL;
  if (aotrun_safetensors_parse(bytes, size, name, &view, &err) != AOTRUN_OK)
    return aotrun_host_fail(err.code, "%s", err.message);
  size_t n = aotrun_safetensors_num_entries(view);
  aotrun_st_tensor *tensors = calloc(n ? n : 1, sizeof *tensors);
  aotrun_status s = AOTRUN_OK;
  if (tensors == NULL)
    s = aotrun_host_fail(AOTRUN_ERR_OUT_OF_MEMORY,
                         "%s: out of memory for %zu tensors", name, n);
  for (size_t i = 0; s == AOTRUN_OK && i < n; i++)
    s = to_tensor(name, aotrun_safetensors_entry_at(view, i), &tensors[i]);
  if (s != AOTRUN_OK) {
    free(tensors);
    aotrun_safetensors_destroy(view);
    return s;
  }
  out->count = n;
  out->tensors = tensors;
  out->view = view;
  return AOTRUN_OK;
}

aotrun_status aotrun_st_file_read(const char *path, aotrun_st_file *out) {
  memset(out, 0, sizeof *out);
  void *buf = NULL;
  size_t size = 0;
  aotrun_status s = aotrun_host_file_read(path, ".safetensors file",
                                          AOTRUN_ST_MAX_FILE_BYTES, &buf,
                                          &size);
  if (s == AOTRUN_OK) s = aotrun_st_file_parse(path, buf, size, out);
  if (s != AOTRUN_OK) {
    free(buf);
    return s;
  }
  out->bytes = buf;
  return AOTRUN_OK;
}

const aotrun_st_tensor *aotrun_st_file_find(const aotrun_st_file *f,
                                            const char *name) {
  for (size_t i = 0; name != NULL && i < f->count; i++)
    if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
  return NULL;
}

void aotrun_st_file_free(aotrun_st_file *f) {
  if (f == NULL) return;
  free(f->tensors);
  aotrun_safetensors_destroy(f->view);
  free(f->bytes);
  memset(f, 0, sizeof *f);
}

aotrun_status aotrun_st_tensor_copy(const aotrun_st_tensor *t,
                                    aotrun_npy *out) {
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  out->ndim = t->ndim;
  memcpy(out->shape, t->shape, sizeof out->shape);
  aotrun_status s = aotrun_npy_alloc(t->name, out);
  if (s != AOTRUN_OK) return s;
  if (out->nbytes != t->nbytes) { /* the parser checked this; be sure */
    aotrun_npy_free(out);
    return aotrun_host_fail(AOTRUN_ERR_INVALID_ARGUMENT,
                            "tensor '%s': %zu data bytes for its shape's %zu",
                            t->name, t->nbytes, out->nbytes);
  }
  if (t->nbytes) memcpy(out->data, t->data, t->nbytes);
  return AOTRUN_OK;
}
