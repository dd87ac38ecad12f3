/*
 * test_program_json.h: helpers shared by the program-format tests: JSON
 * documents edited field by field, and parsers called on exact-size copies
 * (no NUL terminator, so ASan catches any read past the end).
 */
#ifndef AOTRUN_TEST_PROGRAM_JSON_H
#define AOTRUN_TEST_PROGRAM_JSON_H

#include <stddef.h>

/* Returns (malloc'd) `base` with the value at `path` replaced by the JSON
 * text `value` (added when missing), or removed when value is NULL. path is
 * dot-separated object keys and array indices: "methods.forward.inputs.0".
 * Fails the test on a bad path. */
char *json_with(const char *base, const char *path, const char *value);

/* Copies n bytes into a new buffer of exactly n bytes (caller frees). */
void *exact_copy(const void *bytes, size_t n);

#endif /* AOTRUN_TEST_PROGRAM_JSON_H */
