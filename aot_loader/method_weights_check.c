/*
 * method_weights_check.c: the pure checks of method_weights.h: manifest vs
 * library constants, manifest vs weights file, blob size.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "aot_loader/method_weights.h"
#include "aot_loader/scalar_type.h"

#define METADATA_PREFIX "malformed FQN weight metadata: "

static aotrun_status fail(aotrun_error *err, const aotrun_program_method *m,
                          const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static aotrun_status fail(aotrun_error *err, const aotrun_program_method *m,
                          const char *fmt, ...) {
  char msg[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                          METADATA_PREFIX "%s (method '%s')", msg, m->name);
}

static const char *safe(const char *s) { return s ? s : "(null)"; }

/* Index of the manifest constant called name, or -1. */
static long manifest_index(const aotrun_program_method *m, const char *name) {
  for (size_t i = 0; i < m->num_constants; i++)
    if (name != NULL && strcmp(m->constants[i].name, name) == 0)
      return (long)i;
  return -1;
}

/* Index of the non-folded library constant called name, or -1. */
static long library_index(const aotrun_constant_info *lib, size_t n,
                          const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!lib[i].from_folded && lib[i].name != NULL &&
        strcmp(lib[i].name, name) == 0)
      return (long)i;
  return -1;
}

/* Says which constant one side has and the other lacks. */
static aotrun_status count_mismatch(const aotrun_program_method *m,
                                    const aotrun_constant_info *lib, size_t n,
                                    size_t unfolded, aotrun_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (!lib[i].from_folded && manifest_index(m, lib[i].name) < 0)
      return fail(err, m, "the manifest lists %zu constants, the library %zu "
                  "(not counting folded ones): the library's constant %zu "
                  "'%s' (fqn '%s') is not in the manifest", m->num_constants,
                  unfolded, i, safe(lib[i].name), safe(lib[i].fqn));
  }
  for (size_t i = 0; i < m->num_constants; i++) {
    const aotrun_program_constant *c = &m->constants[i];
    if (library_index(lib, n, c->name) < 0)
      return fail(err, m, "the manifest lists %zu constants, the library %zu "
                  "(not counting folded ones): constant '%s' (fqn '%s') is "
                  "not a non-folded constant of the library",
                  m->num_constants, unfolded, c->name, c->fqn);
  }
  return fail(err, m, "the manifest lists %zu constants, the library %zu (not "
              "counting folded ones)", m->num_constants, unfolded);
}

/* One manifest constant against the library's constant of the same
 * position. */
static aotrun_status check_one(const aotrun_program_method *m,
                               const aotrun_program_constant *c,
                               const aotrun_constant_info *l,
                               aotrun_error *err) {
  char a[48], b[48];
  if (l->dtype != c->dtype)
    return fail(err, m, "constant '%s' (fqn '%s'): dtype %s in the manifest, "
                "%s in the library", c->name, c->fqn,
                aotrun_scalar_type_describe(c->dtype, a, sizeof a),
                aotrun_scalar_type_describe(l->dtype, b, sizeof b));
  if (l->data_size != c->nbytes)
    return fail(err, m, "constant '%s' (fqn '%s'): nbytes %llu in the "
                "manifest, %llu in the library", c->name, c->fqn,
                (unsigned long long)c->nbytes,
                (unsigned long long)l->data_size);
  /* Some constants have no original FQN in the library: compare only when
   * it reports one. */
  if (l->fqn != NULL && l->fqn[0] != '\0' && strcmp(l->fqn, c->fqn) != 0)
    return fail(err, m, "constant '%s': fqn '%s' in the manifest, '%s' in "
                "the library", c->name, c->fqn, l->fqn);
  if (l->type != AOTRUN_CONSTANT_TYPE_UNKNOWN &&
      c->type != AOTRUN_CONSTANT_TYPE_UNKNOWN && l->type != c->type)
    return fail(err, m, "constant '%s' (fqn '%s'): type %s in the manifest, "
                "%s in the library", c->name, c->fqn,
                aotrun_program_constant_type_name(c->type),
                aotrun_program_constant_type_name(l->type));
  return AOTRUN_OK;
}

aotrun_status aotrun_method_weights_check_library(
    const aotrun_program_method *m, const aotrun_constant_info *lib,
    size_t n, aotrun_error *err) {
  size_t unfolded = 0;
  for (size_t i = 0; i < n; i++) {
    if (!lib[i].from_folded) unfolded++;
    if (lib[i].name == NULL)
      return fail(err, m, "the library's constant %zu has no name", i);
  }
  if (unfolded != m->num_constants)
    return count_mismatch(m, lib, n, unfolded, err);
  size_t j = 0; /* position among the non-folded */
  for (size_t i = 0; i < n; i++) {
    if (lib[i].from_folded) continue;
    const aotrun_program_constant *c = &m->constants[j];
    if (strcmp(lib[i].name, c->name) != 0) {
      long at = manifest_index(m, lib[i].name);
      if (at < 0)
        return fail(err, m, "the library's constant %zu is '%s', the manifest "
                    "lists '%s' (fqn '%s') there and has no '%s'", i,
                    lib[i].name, c->name, c->fqn, lib[i].name);
      return fail(err, m, "constant order differs: the library's constant %zu "
                  "is '%s', which the manifest lists at position %ld (it "
                  "lists '%s' at position %zu)", i, lib[i].name, at, c->name,
                  j);
    }
    aotrun_status s = check_one(m, c, &lib[i], err);
    if (s != AOTRUN_OK) return s;
    j++;
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_method_weights_check_weights(
    const aotrun_program_method *m, const aotrun_safetensors *st,
    aotrun_error *err) {
  char a[48], b[48];
  if (m->num_constants == 0) return AOTRUN_OK;
  if (st == NULL)
    return fail(err, m, "the method has %zu constants but no weights file",
                m->num_constants);
  const char *file = aotrun_safetensors_name(st);
  for (size_t i = 0; i < m->num_constants; i++) {
    const aotrun_program_constant *c = &m->constants[i];
    const aotrun_safetensors_entry *e = aotrun_safetensors_find(st, c->fqn);
    if (e == NULL)
      return fail(err, m, "constant '%s' (fqn '%s'): no entry '%s' in '%s'",
                  c->name, c->fqn, c->fqn, file);
    if (e->dtype != c->dtype)
      return fail(err, m, "constant '%s' (fqn '%s'): dtype %s in the manifest, "
                  "%s in '%s'", c->name, c->fqn,
                  aotrun_scalar_type_describe(c->dtype, a, sizeof a),
                  aotrun_scalar_type_describe(e->dtype, b, sizeof b), file);
    if (e->nbytes != c->nbytes)
      return fail(err, m, "constant '%s' (fqn '%s'): nbytes %llu in the "
                  "manifest, %llu in '%s'", c->name, c->fqn,
                  (unsigned long long)c->nbytes,
                  (unsigned long long)e->nbytes, file);
  }
  return AOTRUN_OK;
}

aotrun_status aotrun_method_weights_blob_size(const aotrun_program_method *m,
                                              int padded, uint64_t *size,
                                              aotrun_error *err) {
  const uint64_t align = AOTRUN_BLOB_ALIGNMENT;
  uint64_t total = 0;
  *size = 0;
  for (size_t i = 0; i < m->num_constants; i++) {
    uint64_t n = m->constants[i].nbytes;
    int overflow = padded && n % align != 0 &&
                   __builtin_add_overflow(n, align - n % align, &n);
    if (overflow || __builtin_add_overflow(total, n, &total))
      return fail(err, m, "the constants' blob size overflows 64 bits at "
                  "constant '%s' (fqn '%s')", m->constants[i].name,
                  m->constants[i].fqn);
  }
  *size = total;
  return AOTRUN_OK;
}
