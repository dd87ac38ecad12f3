/*
 * runner_fixture.h: a CPU method runner over the fixture model (y = f(x)
 * [N, 3] with N dynamic; calls [1], a counter), its input x [rows, 4] and
 * the caller's output tensors, for the runner's tests (test_runner_call,
 * test_output_placement). Buffers are 64-byte aligned, as a device
 * allocation would be.
 */
#ifndef AOTRUN_TEST_RUNNER_FIXTURE_H
#define AOTRUN_TEST_RUNNER_FIXTURE_H

#include <stdint.h>

#include "aot_loader/method_runner.h"
#include "plugin_api/aotrun_host.h"
#include "testing/backend/program_fixture.h"

typedef struct runner_fixture {
  program_fixture program;
  aotrun_program_dir *dir;
  aotrun_method_runner *runner;
  _Alignas(64) float x[5][4];
  int64_t x_shape[2];
  DLTensor in;
} runner_fixture;

/* The caller's outputs: y [rows, 3] (room for 8 rows) and calls [1]. */
typedef struct runner_fixture_outs {
  _Alignas(64) float y[8][3];
  _Alignas(64) float calls[16];
  int64_t y_shape[2], calls_shape[1];
  DLTensor t[2];
} runner_fixture_outs;

/* Writes the program, opens it and makes f->runner (method forward, cpu)
 * with x's 5 rows set. Returns 0 on success (the reason on stderr). */
int runner_fixture_open(runner_fixture *f, const char *model_path);
/* Closes what runner_fixture_open made, the files included. */
void runner_fixture_close(runner_fixture *f);
/* Another runner over the same program (NULL on failure, reason on
 * stderr); ops may be NULL (the defaults). */
aotrun_method_runner *runner_fixture_new_runner(
    runner_fixture *f, const aotrun_runner_device_ops *ops);
/* x's values again, and its first dim set to rows (at most 5). */
void runner_fixture_set_rows(runner_fixture *f, int64_t rows);
void runner_fixture_outs_init(runner_fixture_outs *o, int64_t rows);

#endif /* AOTRUN_TEST_RUNNER_FIXTURE_H */
