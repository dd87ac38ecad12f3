/*
 * model_library_constants.c: a model library's constants: introspection
 * (GetNumConstants, GetConstant*), the zero-copy user-managed hand-over
 * (UpdateUserManagedConstantBufferPairs) and the binary-blob path
 * (GetConstantsBlobSize, UpdateConstantsFromBlob). Arguments are checked
 * here so that nothing out of range reaches the model, where it would index
 * a std::vector or read past a buffer.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_loader/container_api.h"
#include "aot_loader/fault_point.h"
#include "aot_loader/model_library.h"
#include "aot_loader/global_symbols.h"
#include "aot_loader/model_library_internal.h"

/* The library as messages name it ("forward.so"), never its copy's path. */
static const char *label(const aotrun_model_library *lib) {
  return aotrun_model_library_label(lib);
}

static aotrun_status need_constant_info(const aotrun_model_library *lib,
                                        aotrun_error *err) {
  if (lib == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "model library is NULL");
  const char *missing = NULL;
  if (!aotrun_container_api_has_constant_info(&lib->api, &missing))
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "model library %s cannot list its constants "
                            "(no %s)",
                            label(lib), missing);
  return AOTRUN_OK;
}

aotrun_status aotrun_model_library_num_constants(
    const aotrun_model_library *lib, size_t *count, aotrun_error *err) {
  if (count == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "num_constants: count is NULL");
  *count = 0;
  aotrun_status st = need_constant_info(lib, err);
  if (st != AOTRUN_OK) return st;
  aotrun_global_symbols_shim_clear_error();
  aotrun_aoti_error rc = lib->api.get_num_constants(lib->container, count);
  if (rc != AOTRUN_AOTI_SUCCESS) {
    *count = 0;
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelContainerGetNumConstants", rc);
  }
  return AOTRUN_OK;
}

/* Reads one string property; NULL from the model is an error too. */
static aotrun_status constant_string(const aotrun_model_library *lib,
                                     aotrun_container_get_string_fn fn,
                                     const char *entry, size_t index,
                                     const char **out, aotrun_error *err) {
  *out = NULL;
  aotrun_aoti_error rc = fn(lib->container, index, out);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(lib, err, AOTRUN_ERR_INTERNAL,
                                            entry, rc);
  if (*out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INTERNAL,
                            "%s returned NULL for constant %zu of %s", entry,
                            index, label(lib));
  return AOTRUN_OK;
}

static aotrun_status constant_optional(const aotrun_model_library *lib,
                                       size_t index, aotrun_constant_info *o,
                                       aotrun_error *err) {
  aotrun_aoti_error rc;
  if (lib->api.get_constant_type != NULL) {
    rc = lib->api.get_constant_type(lib->container, index, &o->type);
    if (rc != AOTRUN_AOTI_SUCCESS)
      return aotrun_model_library_call_failed(
          lib, err, AOTRUN_ERR_INTERNAL,
          "AOTInductorModelContainerGetConstantType", rc);
  }
  if (lib->api.get_constant_from_folded != NULL) {
    bool folded = false;
    rc = lib->api.get_constant_from_folded(lib->container, index, &folded);
    if (rc != AOTRUN_AOTI_SUCCESS)
      return aotrun_model_library_call_failed(
          lib, err, AOTRUN_ERR_INTERNAL,
          "AOTInductorModelContainerGetConstantFromFolded", rc);
    o->from_folded = folded ? 1 : 0;
  }
  return AOTRUN_OK;
}

static aotrun_status constant_fields(const aotrun_model_library *lib,
                                     size_t index, aotrun_constant_info *o,
                                     aotrun_error *err) {
  aotrun_global_symbols_shim_clear_error();
  aotrun_status st = constant_string(lib, lib->api.get_constant_name,
                                     "AOTInductorModelContainerGetConstantName",
                                     index, &o->name, err);
  if (st == AOTRUN_OK)
    st = constant_string(lib, lib->api.get_constant_original_fqn,
                         "AOTInductorModelContainerGetConstantOriginalFQN",
                         index, &o->fqn, err);
  if (st != AOTRUN_OK) return st;
  aotrun_aoti_error rc =
      lib->api.get_constant_dtype(lib->container, index, &o->dtype);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelContainerGetConstantDtype", rc);
  size_t data_size = 0;
  rc = lib->api.get_constant_data_size(lib->container, index, &data_size);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelContainerGetConstantDataSize", rc);
  o->data_size = data_size;
  return constant_optional(lib, index, o, err);
}

aotrun_status aotrun_model_library_constant_info(
    const aotrun_model_library *lib, size_t index, aotrun_constant_info *out,
    aotrun_error *err) {
  if (out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "constant_info: out is NULL");
  memset(out, 0, sizeof *out);
  size_t count = 0;
  /* Checking the index here keeps a bad one from reaching the model, where
   * it would index a std::vector out of bounds. */
  aotrun_status st = aotrun_model_library_num_constants(lib, &count, err);
  if (st != AOTRUN_OK) return st;
  if (index >= count)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "constant index %zu is out of range: %s has %zu "
                            "constants",
                            index, label(lib), count);
  st = constant_fields(lib, index, out, err);
  if (st != AOTRUN_OK) memset(out, 0, sizeof *out);
  return st;
}

/* ---- user-managed constants ---- */

/* The names the model knows, in index order (NULL entries impossible). On
 * success *names is malloc'ed (count entries) and owned by the caller. */
static aotrun_status constant_names(const aotrun_model_library *lib,
                                    const char ***names, bool **folded,
                                    size_t *count, aotrun_error *err) {
  *names = NULL;
  *folded = NULL;
  aotrun_status st = aotrun_model_library_num_constants(lib, count, err);
  if (st != AOTRUN_OK) return st;
  *names = calloc(*count ? *count : 1, sizeof **names);
  *folded = calloc(*count ? *count : 1, sizeof **folded);
  if (*names == NULL || *folded == NULL) {
    free(*names);
    free(*folded);
    *names = NULL;
    *folded = NULL;
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory listing %zu constants", *count);
  }
  for (size_t i = 0; i < *count && st == AOTRUN_OK; i++) {
    aotrun_constant_info info;
    st = aotrun_model_library_constant_info(lib, i, &info, err);
    (*names)[i] = info.name;
    (*folded)[i] = info.from_folded != 0;
  }
  if (st != AOTRUN_OK) {
    free(*names);
    free(*folded);
    *names = NULL;
    *folded = NULL;
  }
  return st;
}

static long find_name(const char **names, size_t count, const char *name) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0) return (long)i;
  return -1;
}

/* Every pair names a distinct constant of the model, and every constant
 * that is not folded is given exactly once: the model silently ignores an
 * unknown name and would run with a missing constant unset. */
static aotrun_status check_pairs(const aotrun_model_library *lib,
                                 const aotrun_constant_pair *pairs,
                                 size_t count, aotrun_error *err) {
  for (size_t i = 0; i < count; i++) {
    if (pairs[i].name == NULL || pairs[i].handle == NULL)
      return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                              "user-managed constant %zu has a NULL %s", i,
                              pairs[i].name == NULL ? "name" : "handle");
    for (size_t j = 0; j < i; j++)
      if (strcmp(pairs[j].name, pairs[i].name) == 0)
        return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                                "user-managed constant '%s' is given twice "
                                "(pairs %zu and %zu)",
                                pairs[i].name, j, i);
  }
  const char **names = NULL;
  bool *folded = NULL;
  size_t n = 0;
  aotrun_status st = constant_names(lib, &names, &folded, &n, err);
  if (st != AOTRUN_OK) return st;
  for (size_t i = 0; i < count && st == AOTRUN_OK; i++) {
    long k = find_name(names, n, pairs[i].name);
    if (k < 0)
      st = aotrun_error_set(err, AOTRUN_ERR_NOT_FOUND,
                            "user-managed constant '%s' is not a constant of "
                            "%s",
                            pairs[i].name, label(lib));
    else if (folded[k])
      st = aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "user-managed constant '%s' is folded by %s and "
                            "cannot be given",
                            pairs[i].name, label(lib));
  }
  for (size_t i = 0; i < n && st == AOTRUN_OK; i++) {
    int given = 0;
    for (size_t j = 0; j < count && !given; j++)
      given = strcmp(pairs[j].name, names[i]) == 0;
    if (!given && !folded[i])
      st = aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "user-managed constants: constant %zu '%s' of %s "
                            "is not given",
                            i, names[i], label(lib));
  }
  free(names);
  free(folded);
  return st;
}

aotrun_status aotrun_model_library_set_user_managed_constants(
    aotrun_model_library *lib, const aotrun_constant_pair *pairs, size_t count,
    aotrun_error *err) {
  aotrun_status st = need_constant_info(lib, err);
  if (st != AOTRUN_OK) return st;
  if (lib->api.update_user_managed_constant_buffer_pairs == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "model library %s has no "
                            "AOTInductorModelContainerUpdateUserManaged"
                            "ConstantBufferPairs",
                            label(lib));
  if (pairs == NULL && count > 0)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "user-managed constants: pairs is NULL");
  st = check_pairs(lib, pairs, count, err);
  if (st != AOTRUN_OK) return st;
  aotrun_aoti_constant_entry *entries =
      calloc(count ? count : 1, sizeof *entries);
  if (entries == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_OUT_OF_MEMORY,
                            "out of memory for %zu user-managed constants",
                            count);
  for (size_t i = 0; i < count; i++) {
    entries[i].name = pairs[i].name;
    entries[i].handle = pairs[i].handle;
  }
  /* Active buffer; completeness was checked above (2.11's own full-update
   * check only warns for buffers). */
  aotrun_global_symbols_shim_clear_error();
  /* The fault point stands for a model that refuses its constants. */
  aotrun_aoti_error rc =
      aotrun_fault_point("model_library.constants")
          ? 1
          : lib->api.update_user_managed_constant_buffer_pairs(
                lib->container, entries, count, false, false);
  free(entries);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs", rc);
  return AOTRUN_OK;
}

/* ---- binary blob ---- */

aotrun_status aotrun_model_library_blob_size(const aotrun_model_library *lib,
                                             uint64_t *size,
                                             aotrun_error *err) {
  if (size == NULL || lib == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "blob_size: %s is NULL",
                            lib == NULL ? "model library" : "size");
  *size = 0;
  if (lib->api.get_constants_blob_size == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "model library %s has no "
                            "AOTInductorModelContainerGetConstantsBlobSize",
                            label(lib));
  aotrun_global_symbols_shim_clear_error();
  aotrun_aoti_error rc = lib->api.get_constants_blob_size(lib->container, size);
  if (rc != AOTRUN_AOTI_SUCCESS) {
    *size = 0;
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelContainerGetConstantsBlobSize", rc);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_model_library_load_constants_blob(
    aotrun_model_library *lib, const void *blob, aotrun_error *err) {
  if (lib == NULL || blob == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "load_constants_blob: %s is NULL",
                            lib == NULL ? "model library" : "blob");
  if (lib->api.update_constants_from_blob == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_NOT_SUPPORTED,
                            "model library %s has no "
                            "AOTInductorModelUpdateConstantsFromBlob",
                            label(lib));
  /* 2.11 allocates again on a second call without freeing the first. */
  if (lib->blob_loaded)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "the constants blob of %s is already loaded (it "
                            "can be loaded once per library)",
                            label(lib));
  aotrun_global_symbols_shim_clear_error();
  aotrun_aoti_error rc =
      aotrun_fault_point("model_library.blob")
          ? 1
          : lib->api.update_constants_from_blob(lib->container, blob);
  if (rc != AOTRUN_AOTI_SUCCESS)
    return aotrun_model_library_call_failed(
        lib, err, AOTRUN_ERR_INTERNAL,
        "AOTInductorModelUpdateConstantsFromBlob", rc);
  lib->blob_loaded = 1;
  return AOTRUN_OK;
}

aotrun_status aotrun_model_library_load_constants_blob_sized(
    aotrun_model_library *lib, const void *blob, uint64_t size,
    aotrun_error *err) {
  uint64_t want = 0;
  aotrun_status st = aotrun_model_library_blob_size(lib, &want, err);
  if (st != AOTRUN_OK) return st;
  if (size != want)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "constants blob for %s has %llu bytes, the "
                            "library expects %llu",
                            label(lib), (unsigned long long)size,
                            (unsigned long long)want);
  return aotrun_model_library_load_constants_blob(lib, blob, err);
}
