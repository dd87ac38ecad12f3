/* cuda_backend.c: see cuda_backend.h. */
#include "backend_cuda/cuda_backend.h"

#include <string.h>

/* The 1.0 backend-wide get_option's strings: one copy per thread, so a
 * call from another thread never overwrites what this one was given. */
static _Thread_local aotrun_cuda_options t_read_copy;

static void defaults_locked(aotrun_cuda_backend *b) {
  if (!b->defaults_ready) aotrun_cuda_options_default(&b->defaults);
  b->defaults_ready = 1;
}

void aotrun_cuda_backend_defaults(aotrun_cuda_backend *b,
                                  aotrun_cuda_options *out) {
  pthread_mutex_lock(&b->mu);
  defaults_locked(b);
  *out = b->defaults;
  pthread_mutex_unlock(&b->mu);
}

aotrun_status aotrun_cuda_backend_set_option(aotrun_cuda_backend *b,
                                             const aotrun_option *opt,
                                             aotrun_error *err) {
  aotrun_error_clear(err);
  if (opt == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "set_option: option is NULL");
  aotrun_cuda_option_id id;
  aotrun_status st =
      aotrun_cuda_option_find(opt->key, opt->type, 1, 0, &id, err);
  if (st != AOTRUN_OK) return st;
  pthread_mutex_lock(&b->mu);
  defaults_locked(b);
  st = aotrun_cuda_options_store(&b->defaults, id, opt, err);
  pthread_mutex_unlock(&b->mu);
  return st;
}

/* A string value copied into the caller's buffer. */
static aotrun_status into_buffer(aotrun_option *out, char *buf,
                                 size_t buf_size, aotrun_error *err) {
  if (out->type != AOTRUN_OPTION_STRING || out->string_value == NULL)
    return AOTRUN_OK;
  size_t n = strlen(out->string_value);
  if (n + 1 > buf_size)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option '%s': the value is %zu bytes with "
                            "its terminator, the buffer %zu",
                            out->key, n + 1, buf_size);
  memcpy(buf, out->string_value, n + 1);
  out->string_value = buf;
  return AOTRUN_OK;
}

/* The option's id and the current backend-wide values. */
static aotrun_status read_values(aotrun_cuda_backend *b, const char *key,
                                 aotrun_option *out, aotrun_cuda_option_id *id,
                                 aotrun_cuda_options *copy,
                                 aotrun_error *err) {
  aotrun_error_clear(err);
  if (out == NULL)
    return aotrun_error_set(err, AOTRUN_ERR_INVALID_ARGUMENT,
                            "get_option: out is NULL");
  aotrun_status st = aotrun_cuda_option_find(key, 0, 0, 0, id, err);
  if (st == AOTRUN_OK) aotrun_cuda_backend_defaults(b, copy);
  return st;
}

aotrun_status aotrun_cuda_backend_get_option(aotrun_cuda_backend *b,
                                             const char *key,
                                             aotrun_option *out, char *buf,
                                             size_t buf_size,
                                             aotrun_error *err) {
  aotrun_cuda_option_id id;
  aotrun_cuda_options copy;
  aotrun_status st = read_values(b, key, out, &id, &copy, err);
  if (st != AOTRUN_OK) return st;
  aotrun_cuda_options_read(&copy, id, out);
  st = into_buffer(out, buf, buf == NULL ? 0 : buf_size, err);
  if (st != AOTRUN_OK) out->string_value = NULL;
  return st;
}

aotrun_status aotrun_cuda_backend_get_option_1_0(aotrun_cuda_backend *b,
                                                 const char *key,
                                                 aotrun_option *out,
                                                 aotrun_error *err) {
  aotrun_cuda_option_id id;
  aotrun_cuda_options copy;
  aotrun_status st = read_values(b, key, out, &id, &copy, err);
  if (st != AOTRUN_OK) return st;
  t_read_copy = copy;
  aotrun_cuda_options_read(&t_read_copy, id, out);
  return AOTRUN_OK;
}
