/* cli_run.c: `aotrun run PROGRAM ...`: one execute, outputs to .npy. */
#include <stdio.h>
#include <sys/stat.h>

#include "plugin_api/cli.h"

static int make_dir(const char *dir) {
  if (mkdir(dir, 0777) != 0) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
      return cli_fail(CLI_EXIT_EXECUTE, "cannot create output directory %s",
                      dir);
  }
  return CLI_EXIT_OK;
}

/* Writes DIR/out<i>.npy, or DIR/call<k>/out<i>.npy when calls > 1. */
static int write_outputs(const char *base, long call, long calls,
                         const cli_tensors *t) {
  char dir[4096];
  int rc = make_dir(base);
  if (rc != CLI_EXIT_OK) return rc;
  if (calls > 1) {
    if (snprintf(dir, sizeof dir, "%s/call%ld", base, call) >=
        (int)sizeof dir)
      return cli_fail(CLI_EXIT_USAGE, "output directory name too long: %s",
                      base);
    rc = make_dir(dir);
    if (rc != CLI_EXIT_OK) return rc;
  } else {
    if (snprintf(dir, sizeof dir, "%s", base) >= (int)sizeof dir)
      return cli_fail(CLI_EXIT_USAGE, "output directory name too long: %s",
                      base);
  }
  for (size_t i = 0; i < t->num_outputs; i++) {
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/out%zu.npy", dir, i);
    if (n < 0 || (size_t)n >= sizeof path)
      return cli_fail(CLI_EXIT_USAGE, "output path too long: %s/out%zu.npy",
                      dir, i);
    const DLTensor *o = &t->outputs[i];
    if (aotrun_npy_write(path, o->dtype, o->ndim, o->shape, o->data) !=
        AOTRUN_OK)
      return cli_fail(CLI_EXIT_EXECUTE, "%s", aotrun_host_last_error());
  }
  return CLI_EXIT_OK;
}

int cli_run(int argc, char **argv) {
  cli_job j;
  int rc = cli_job_open(argc, argv,
                        CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD |
                            CLI_OPT_INPUT | CLI_OPT_OUTPUT_DIR |
                            CLI_OPT_OPTION | CLI_OPT_CALLS,
                        &j);
  const cli_options *o = &j.opts;
  cli_tensors *t = &j.tensors;
  for (long call = 0; rc == CLI_EXIT_OK && call < o->calls; call++) {
    cli_tensors_reset_shapes(t);
    aotrun_status st = aotrun_host_method_execute(
        j.session.handle, t->inputs, t->num_inputs, t->outputs,
        t->num_outputs);
    if (st != AOTRUN_OK) {
      rc = cli_fail(cli_exit_for_status(st) == CLI_EXIT_PROGRAM
                        ? CLI_EXIT_PROGRAM
                        : CLI_EXIT_EXECUTE,
                    "call %ld: %s", call, aotrun_host_last_error());
      break;
    }
    printf("backend %s, method %s, call %ld\n",
           aotrun_backend_name(j.session.backend), o->method, call);
    for (size_t i = 0; i < t->num_outputs; i++)
      cli_print_tensor("output", i, NULL, &t->outputs[i], 0);
    if (o->output_dir != NULL)
      rc = write_outputs(o->output_dir, call, o->calls, t);
  }
  cli_job_close(&j);
  return rc;
}
