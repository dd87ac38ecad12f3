/* cli_run.c: `aotrun run PROGRAM ...`: execute, outputs to .npy or
 * .safetensors files (cli_outputs.c). With --device-io each call's inputs
 * and outputs are in device memory (cli_device_io.c), as a serving host
 * keeps them; the outputs are copied back to be written. */
#include <stdio.h>

#include "plugin_api/cli.h"

/* One execute, in device memory with --device-io. */
static int execute_once(cli_job *j, long call) {
  cli_tensors *t = &j->tensors;
  cli_device_io dio;
  int rc = CLI_EXIT_OK, started = 0;
  if (j->opts.device_io) {
    rc = cli_device_io_start(&j->session, t, &dio);
    started = rc == CLI_EXIT_OK;
  }
  if (rc == CLI_EXIT_OK) {
    aotrun_status st = cli_execute(&j->session, t);
    if (st != AOTRUN_OK)
      rc = cli_fail(cli_exit_for_status(st) == CLI_EXIT_PROGRAM
                        ? CLI_EXIT_PROGRAM
                        : CLI_EXIT_EXECUTE,
                    "call %ld: %s", call, aotrun_host_last_error());
  }
  if (rc == CLI_EXIT_OK && started) rc = cli_device_io_copy_outputs(&dio);
  if (started) cli_device_io_stop(&dio);
  return rc;
}

int cli_run(int argc, char **argv) {
  cli_job j;
  int rc = cli_job_open(argc, argv, CLI_RUN_OPTIONS, &j);
  if (rc == CLI_EXIT_OK) rc = cli_check_output_format(&j.session, &j.opts);
  const cli_options *o = &j.opts;
  cli_tensors *t = &j.tensors;
  for (long call = 0; rc == CLI_EXIT_OK && call < o->calls; call++) {
    cli_tensors_reset_shapes(t);
    rc = execute_once(&j, call);
    if (rc != CLI_EXIT_OK) break;
    rc = cli_tensors_take_managed(&j.session, t);
    if (rc != CLI_EXIT_OK) break;
    printf("backend %s, method %s, call %ld\n",
           aotrun_backend_name(j.session.backend), o->method, call);
    for (size_t i = 0; i < t->num_outputs; i++)
      cli_print_tensor("output", i, NULL, &t->outputs[i], 0);
    /* Out now: a process killed later (a crash in call N + 1, a timeout)
     * still shows which calls completed, even through a pipe. */
    fflush(stdout);
    if (o->output_dir != NULL || o->output_file != NULL)
      rc = cli_write_outputs(&j.session, o, call, t);
  }
  cli_job_close(&j);
  return rc;
}
