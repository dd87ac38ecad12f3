/*
 * safetensors.h: a validating view of a safetensors file held in borrowed
 * memory (e.g. an mmap from the host's named-data service). Nothing of the
 * data region is copied: entries point into the caller's bytes, which must
 * outlive the aotrun_safetensors object.
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON (an
 * object keyed by tensor name, plus an optional "__metadata__" object of
 * strings), then the data region. Every entry is checked: known dtype,
 * non-negative shape whose byte size does not overflow, data_offsets
 * [begin, end] with begin <= end <= data size, end - begin == product(shape)
 * * itemsize, and no two entries overlap.
 */
#ifndef AOTRUN_SAFETENSORS_H
#define AOTRUN_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "aot_loader/aotrun_error.h"

/* Largest JSON header accepted (the reference implementation's limit). */
#define AOTRUN_SAFETENSORS_MAX_HEADER ((uint64_t)100 * 1024 * 1024)

typedef struct aotrun_safetensors_entry {
  const char *key;
  int32_t dtype;    /* ScalarType */
  size_t ndim;
  const int64_t *shape;
  uint64_t begin;   /* data_offsets, relative to the data region */
  uint64_t end;
  uint64_t nbytes;  /* end - begin */
  const uint8_t *data; /* points into the borrowed bytes */
} aotrun_safetensors_entry;

typedef struct aotrun_safetensors aotrun_safetensors;

/* Parses size bytes at `bytes`. `name` (e.g. "weights.safetensors") is
 * copied and used in messages: "malformed safetensors file '<name>': ...".
 * Errors: AOTRUN_ERR_INVALID_ARGUMENT, AOTRUN_ERR_OUT_OF_MEMORY. */
aotrun_status aotrun_safetensors_parse(const void *bytes, size_t size,
                                       const char *name,
                                       aotrun_safetensors **out,
                                       aotrun_error *err);

void aotrun_safetensors_destroy(aotrun_safetensors *st); /* accepts NULL */

const char *aotrun_safetensors_name(const aotrun_safetensors *st);
size_t aotrun_safetensors_num_entries(const aotrun_safetensors *st);
/* Entries sorted by key. */
const aotrun_safetensors_entry *aotrun_safetensors_entry_at(
    const aotrun_safetensors *st, size_t index);
/* NULL when there is no entry `key`. */
const aotrun_safetensors_entry *aotrun_safetensors_find(
    const aotrun_safetensors *st, const char *key);

#endif /* AOTRUN_SAFETENSORS_H */
