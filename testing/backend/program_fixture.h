/*
 * program_fixture.h: writes a program directory (manifest.json, forward.so,
 * weights.safetensors; docs/program-format.md) around the C fixture model
 * (testing/fixtures/fixture_model.c) into a fresh temp directory, and
 * computes the model's expected outputs.
 */
#ifndef AOTRUN_TEST_PROGRAM_FIXTURE_H
#define AOTRUN_TEST_PROGRAM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

typedef struct program_fixture {
  char dir[512];
  char *manifest; /* the manifest's bytes (NUL-terminated) */
  size_t manifest_size;
} program_fixture;

/* The fixture's constants (lin.weight [3,4], lin.bias [3], scale f64 [1],
 * calls [1]). */
extern const float kFixtureWeight[3][4];
extern const float kFixtureBias[3];
extern const double kFixtureScale;

/* constant_device: "cpu" (the fixture runs on the cpu) or "cuda". Returns 0
 * on success. */
int program_fixture_create(program_fixture *p, const char *model_so_path,
                           const char *constant_device);
/* Removes the files and the directory; frees the manifest. */
void program_fixture_remove(program_fixture *p);

/* y[n][3] = float((x @ W^T + b) * scale), as the fixture computes it. */
void program_fixture_expected(const float *x, int64_t n, float *y);

#endif /* AOTRUN_TEST_PROGRAM_FIXTURE_H */
