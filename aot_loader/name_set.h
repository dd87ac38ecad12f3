/*
 * name_set.h: a set of borrowed NUL-terminated names, for finding duplicate
 * names in linear time (manifest methods, constants). Open addressing with
 * FNV-1a; the strings are not copied and must outlive the set.
 */
#ifndef AOTRUN_NAME_SET_H
#define AOTRUN_NAME_SET_H

#include <stddef.h>

typedef struct aotrun_name_set {
  const char **slots;
  size_t *values; /* what the name was added with (e.g. its index) */
  size_t capacity; /* a power of two, at least twice the expected count */
} aotrun_name_set;

/* Sizes the set for up to `expected` names. Returns 0, or -1 when out of
 * memory (the set is then empty and safe to free). */
int aotrun_name_set_init(aotrun_name_set *set, size_t expected);

/* Adds name with value. Returns 1 when added; 0 when the name was already
 * there (*previous, if not NULL, gets the value it was added with); -1 when
 * the set is full (more names than `expected`). */
int aotrun_name_set_add(aotrun_name_set *set, const char *name, size_t value,
                        size_t *previous);

void aotrun_name_set_free(aotrun_name_set *set);

#endif /* AOTRUN_NAME_SET_H */
