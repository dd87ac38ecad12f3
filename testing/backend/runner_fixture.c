/*
 * runner_fixture.c: a CPU method runner over the fixture model
 * (runner_fixture.h).
 */
#include "testing/backend/runner_fixture.h"

#include <stdio.h>
#include <string.h>

aotrun_method_runner *runner_fixture_new_runner(
    runner_fixture *f, const aotrun_runner_device_ops *ops) {
  aotrun_method_runner_config config = {
      .host = aotrun_program_dir_host_api(f->dir),
      .manifest = f->program.manifest,
      .manifest_size = f->program.manifest_size,
      .method = "forward",
      .device = "cpu",
  };
  if (ops != NULL) config.ops = *ops;
  aotrun_error err;
  aotrun_error_clear(&err);
  aotrun_method_runner *r = NULL;
  if (aotrun_method_runner_create(&config, &r, &err) != AOTRUN_OK)
    fprintf(stderr, "runner: %s\n", err.message);
  return r;
}

void runner_fixture_set_rows(runner_fixture *f, int64_t rows) {
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++) f->x[i][j] = (float)(i * 4 + j) * 0.25f - 2;
  f->x_shape[0] = rows;
  f->x_shape[1] = 4;
  f->in = (DLTensor){f->x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, f->x_shape,
                     NULL, 0};
}

int runner_fixture_open(runner_fixture *f, const char *model_path) {
  memset(f, 0, sizeof *f);
  if (program_fixture_create(&f->program, model_path, "cpu") != 0) return -1;
  if (aotrun_program_dir_open(f->program.dir, &f->dir) != AOTRUN_OK) {
    fprintf(stderr, "cannot open the program in %s\n", f->program.dir);
    program_fixture_remove(&f->program);
    return -1;
  }
  aotrun_program_dir_set_log_level(f->dir, AOTRUN_LOG_ERROR + 1);
  f->runner = runner_fixture_new_runner(f, NULL);
  if (f->runner == NULL) {
    runner_fixture_close(f);
    return -1;
  }
  runner_fixture_set_rows(f, 5);
  return 0;
}

void runner_fixture_close(runner_fixture *f) {
  aotrun_method_runner_destroy(f->runner);
  aotrun_program_dir_close(f->dir);
  program_fixture_remove(&f->program);
  f->runner = NULL;
  f->dir = NULL;
}

void runner_fixture_outs_init(runner_fixture_outs *o, int64_t rows) {
  memset(o, 0, sizeof *o);
  o->y_shape[0] = rows;
  o->y_shape[1] = 3;
  o->calls_shape[0] = 1;
  o->t[0] = (DLTensor){o->y, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, o->y_shape,
                       NULL, 0};
  o->t[1] = (DLTensor){o->calls, {kDLCPU, 0}, 1, {kDLFloat, 32, 1},
                       o->calls_shape, NULL, 0};
}
