/* name_set.c: see name_set.h. */
#include "aot_loader/name_set.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (; *s != '\0'; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h;
}

int aotrun_name_set_init(aotrun_name_set *set, size_t expected) {
  memset(set, 0, sizeof *set);
  size_t cap = 16;
  while (cap < expected * 2) {
    if (cap > SIZE_MAX / 4) return -1;
    cap *= 2;
  }
  set->slots = calloc(cap, sizeof *set->slots);
  set->values = calloc(cap, sizeof *set->values);
  if (set->slots == NULL || set->values == NULL) {
    aotrun_name_set_free(set);
    return -1;
  }
  set->capacity = cap;
  return 0;
}

int aotrun_name_set_add(aotrun_name_set *set, const char *name, size_t value,
                        size_t *previous) {
  if (set->capacity == 0) return -1;
  size_t mask = set->capacity - 1;
  size_t i = (size_t)hash_name(name) & mask;
  for (size_t probes = 0; probes < set->capacity; probes++) {
    if (set->slots[i] == NULL) {
      set->slots[i] = name;
      set->values[i] = value;
      return 1;
    }
    if (strcmp(set->slots[i], name) == 0) {
      if (previous != NULL) *previous = set->values[i];
      return 0;
    }
    i = (i + 1) & mask;
  }
  return -1;
}

void aotrun_name_set_free(aotrun_name_set *set) {
  free(set->slots);
  free(set->values);
  memset(set, 0, sizeof *set);
}
