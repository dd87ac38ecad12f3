/*
 * cli.h: shared pieces of the aotrun command-line host (one file per
 * subcommand: cli_plugins.c, cli_inspect.c, cli_run.c, cli_bench.c,
 * cli_demo.c with cli_demo_cuda.c; plugin search in cli_search.c; timed
 * calls in cli_latency.c; tensors in cli_io.c, which
 * --input feeds which input in cli_inputs.c, output files in
 * cli_outputs.c).
 */
#ifndef AOTRUN_CLI_H
#define AOTRUN_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plugin_api/aotrun_host.h"
#include "plugin_api/manifest_info.h"
#include "plugin_api/npy.h"

/* Exit codes (documented in --help and docs/plugin-abi.md). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_USAGE 1   /* bad command line */
#define CLI_EXIT_PLUGIN 2  /* plugin not loadable, none available, bad name */
#define CLI_EXIT_PROGRAM 3 /* program, manifest, method or input problem */
#define CLI_EXIT_EXECUTE 4 /* the backend failed to init or execute */

#define CLI_MAX_LIST 64

/* Upper bounds of the counting options (each run can write one output
 * folder per call; bench keeps one time per iteration). */
#define CLI_MAX_CALLS 10000
#define CLI_MAX_ITERATIONS 1000000
#define CLI_MAX_WARMUP 100000

/* Which options a subcommand accepts. */
enum {
  CLI_OPT_PLUGIN = 1 << 0,
  CLI_OPT_BACKEND = 1 << 1,
  CLI_OPT_METHOD = 1 << 2,
  CLI_OPT_INPUT = 1 << 3,
  CLI_OPT_OUTPUT_DIR = 1 << 4,
  CLI_OPT_ITERATIONS = 1 << 5,
  CLI_OPT_WARMUP = 1 << 6,
  CLI_OPT_OPTION = 1 << 7, /* --option KEY=VALUE, backend-wide */
  CLI_OPT_CALLS = 1 << 8,  /* --calls N: run N times (stateful models) */
  CLI_OPT_OUTPUT_FORMAT = 1 << 9, /* --output-format npy|safetensors */
  /* Flags without a value (bench): */
  CLI_OPT_DEVICE_IO = 1 << 10,    /* --device-io: tensors in device memory */
  CLI_OPT_JSON = 1 << 11,         /* --json: one JSON object on stdout */
  CLI_OPT_NO_GPU_TIME = 1 << 12,  /* --no-gpu-time: no gpu_timing option */
  CLI_OPT_LOAD = 1 << 13,         /* --load (inspect): load, print report */
  CLI_OPT_DEVICE = 1 << 14,       /* --device N: compile spec "device" */
  CLI_OPT_OUTPUT = 1 << 15, /* --output FILE: .safetensors or .npy, by name */
};

/* What each subcommand accepts (the cli fuzz target parses with these). */
#define CLI_RUN_OPTIONS                                                   \
  (CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD | CLI_OPT_INPUT |    \
   CLI_OPT_OUTPUT_DIR | CLI_OPT_OPTION | CLI_OPT_CALLS |                  \
   CLI_OPT_OUTPUT_FORMAT | CLI_OPT_DEVICE | CLI_OPT_OUTPUT |             \
   CLI_OPT_DEVICE_IO)
#define CLI_BENCH_OPTIONS                                                 \
  (CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD | CLI_OPT_INPUT |    \
   CLI_OPT_ITERATIONS | CLI_OPT_WARMUP | CLI_OPT_OPTION |                 \
   CLI_OPT_DEVICE_IO | CLI_OPT_JSON | CLI_OPT_NO_GPU_TIME)
#define CLI_INSPECT_LOAD_OPTIONS \
  (CLI_OPT_PLUGIN | CLI_OPT_BACKEND | CLI_OPT_METHOD | CLI_OPT_OPTION)
#define CLI_INSPECT_OPTIONS \
  (CLI_OPT_JSON | CLI_OPT_LOAD | CLI_INSPECT_LOAD_OPTIONS)
#define CLI_DEMO_OPTIONS (CLI_OPT_PLUGIN | CLI_OPT_BACKEND)
#define CLI_PLUGINS_OPTIONS CLI_OPT_PLUGIN

typedef struct cli_options {
  const char *program; /* the one positional argument, if any */
  const char *plugins[CLI_MAX_LIST];
  size_t num_plugins;
  const char *inputs[CLI_MAX_LIST];
  size_t num_inputs;
  const char *backend;
  const char *method; /* default "forward" */
  const char *output_dir;
  int output_safetensors; /* --output-format safetensors */
  int output_format_given; /* --output-format was on the command line */
  const char *output_file;  /* --output FILE (.safetensors or .npy) */
  const char *options[CLI_MAX_LIST];
  size_t num_options;
  long iterations, warmup, calls;
  long device; /* --device N; -1: not given (the backend's default) */
  int device_io, json, no_gpu_time, load; /* value-less flags, 0 or 1 */
} cli_options;

/* Parses argv[first..argc) accepting the `allowed` options and
 * `positionals` (0 or 1) positional arguments. Prints the problem and
 * returns CLI_EXIT_USAGE on error, else CLI_EXIT_OK. */
int cli_parse(int argc, char **argv, int first, unsigned allowed,
              int positionals, cli_options *out);

/* inspect's rules for combining its options (--load, --json). Prints the
 * problem and returns CLI_EXIT_USAGE, else CLI_EXIT_OK. */
int cli_check_inspect_options(const cli_options *o);

/* Loads the plugins named by --plugin, $AOTRUN_PLUGIN_PATH and the binary's
 * directory into a new registry. Explicit --plugin failures are fatal
 * (CLI_EXIT_PLUGIN); others are printed as warnings (or, with `report`
 * set, counted in *failures and printed as listing lines). */
int cli_load_plugins(const cli_options *opts, int report,
                     aotrun_registry **out, size_t *failures);

/* A program opened for running: named data, manifest, backend, method. */
typedef struct cli_session {
  aotrun_program_dir *dir;
  manifest_info manifest;
  const manifest_method *method;
  aotrun_registry *registry;
  const aotrun_backend *backend;
  aotrun_host_method *handle;
} cli_session;

/* Opens opts->program, picks the backend (--backend, or the first that can
 * run the program: cli_backend_choice.c) and inits the method. Returns a
 * CLI exit code; on failure the message is printed and the session is
 * closed. */
int cli_session_open(const cli_options *opts, cli_session *s);
void cli_session_close(cli_session *s);

/* What a backend is asked to run (cli_choose_backend). */
typedef struct cli_backend_query {
  const aotrun_host_api *host; /* the program's named data */
  const void *manifest;
  size_t manifest_size;
  const char *method;             /* for messages */
  const aotrun_key_value *specs;  /* as init gets them */
  size_t num_specs;
  int32_t log_level; /* threshold of the info messages */
} cli_backend_query;

/* Before the program is opened: --backend NAME exists and is available
 * (then s->backend is set), or, without it, some backend is available. */
int cli_require_backend(const cli_options *opts, cli_session *s);
/* Without --backend: sets s->backend to the first available backend whose
 * can_run accepts the query (a 1.0 backend without can_run is taken as
 * able), logging at info which one and why each earlier one was skipped;
 * none: CLI_EXIT_PLUGIN listing every backend's reason. */
int cli_choose_backend(const cli_options *opts, cli_session *s,
                       const cli_backend_query *q);

/* Host tensors for one execute: inputs from .npy/.safetensors files,
 * outputs sized from the declared info (dynamic dims bound through the
 * manifest's symbols). */
typedef struct cli_tensors {
  size_t num_inputs, num_outputs;
  aotrun_npy *in_arrays;
  char **in_labels; /* where each input came from, or NULL (messages) */
  DLTensor *inputs, *outputs;
  int64_t (*out_shapes)[AOTRUN_MAX_DIMS]; /* backing of outputs[i].shape */
  int64_t (*out_capacity)[AOTRUN_MAX_DIMS]; /* the allocated shapes */
  int64_t max_input_numel; /* capacity of data-dependent output dims */
  /* ABI 1.1: the backend has execute_ex. Then an output with a
   * data-dependent dim is backend-allocated (managed[i]: data NULL before
   * each call), held[i] until taken (cli_tensors_take_managed: copied into
   * a host buffer of t) or released by the next reset. */
  int use_ex;
  unsigned char managed[CLI_MAX_LIST];
  DLManagedTensor *held[CLI_MAX_LIST];
  struct cli_device_io *runtime; /* CUDA runtime for device copies, lazy */
} cli_tensors;

/* Checks arrays (owned by t afterwards, like labels: NULL or one malloc'd
 * "where from" string per array, quoted in mismatch messages) against the
 * method and allocates the outputs. Returns a CLI exit code and prints the
 * problem. */
int cli_tensors_prepare(const cli_session *s, aotrun_npy *arrays,
                        size_t num_arrays, char **labels, cli_tensors *t);
/* Reads the --input files (.npy, .safetensors: the rule is in
 * cli_inputs.c and --help), then prepares. */
int cli_tensors_from_files(const cli_session *s, const cli_options *opts,
                           cli_tensors *t);
/* Whether a path names a .safetensors file (by extension, any case). */
int cli_is_safetensors_path(const char *path);
/* Whether a path names a .npy file (by extension, any case). */
int cli_is_npy_path(const char *path);
/* Writes the outputs of call `call`: to opts->output_file (--output FILE,
 * by its extension), or under opts->output_dir: D/out<i>.npy or
 * D/outputs.safetensors (D/call<k>/... when calls > 1). */
int cli_write_outputs(const cli_session *s, const cli_options *opts,
                      long call, const cli_tensors *t);
/* Before any execute: refuses .npy output (--output-dir without
 * --output-format safetensors, or --output FILE.npy) when an output's dtype
 * has no .npy form (e.g. bfloat16), pointing at safetensors, and --output
 * FILE.npy for a method without exactly one output. */
int cli_check_output_format(const cli_session *s, const cli_options *opts);
void cli_tensors_free(cli_tensors *t);
/* Restores every output's shape to its allocated capacity (the backend
 * writes real dynamic sizes into it) and releases the backend-allocated
 * outputs of the last call: call before each execute. */
void cli_tensors_reset_shapes(cli_tensors *t);

/* One execute of t (cli_execute.c): execute_ex where the backend has it
 * (backend-allocated outputs held in t), else execute. An output the
 * backend reports too small (AOTRUN_ERR_OUTPUT_TOO_SMALL) is reallocated
 * to the shape it needs and the call is retried once (a note on stderr).
 * Returns the status; the message is aotrun_host_last_error(). */
aotrun_status cli_execute(const cli_session *s, cli_tensors *t);
/* Copies each held backend-allocated output into a host buffer owned by t
 * (outputs[i] then describes it; device memory through the CUDA runtime)
 * and releases it. Returns a CLI exit code. */
int cli_tensors_take_managed(const cli_session *s, cli_tensors *t);
/* Calls the deleter of each held output. */
void cli_tensors_release_managed(cli_tensors *t);

/* What `run` and `bench` start from: options, an open session and the
 * input/output tensors from the command line. */
typedef struct cli_job {
  cli_options opts;
  cli_session session;
  cli_tensors tensors;
  int open; /* session open: close it (and free the tensors) on close */
  double open_us; /* wall time of cli_session_open (plugin load + init) */
} cli_job;

/* Parses argv (options from `allowed`, one positional: the program), opens
 * the session and reads the inputs. Returns a CLI exit code; on failure the
 * message is printed, and cli_job_close is still safe to call. */
int cli_job_open(int argc, char **argv, unsigned allowed, cli_job *job);
void cli_job_close(cli_job *job);
/* bench --device-io (cli_device_io.c): the CUDA runtime, loaded with dlopen
 * ($AOTRUN_CUDART, else libcudart.so.13, else libcudart.so), and the host
 * pointers the tensors had before they moved to device memory. */
typedef struct cli_device_io {
  void *lib;
  char lib_name[1024];
  int (*malloc_fn)(void **ptr, size_t bytes);
  int (*free_fn)(void *ptr);
  int (*memcpy_fn)(void *dst, const void *src, size_t bytes, int kind);
  const char *(*error_string)(int error); /* optional */
  cli_tensors *tensors;
  void *host_in[CLI_MAX_LIST], *host_out[CLI_MAX_LIST];
  size_t num_in, num_out; /* moved to the device so far */
} cli_device_io;

/* Loads the runtime only (cudaMalloc, cudaFree, cudaMemcpy). A CLI exit
 * code, the problem printed. */
int cli_device_io_load_runtime(cli_device_io *d);
/* Loads the runtime and gives every input (with its values) and output
 * (except backend-allocated ones) a device buffer (kDLCUDA, device 0). A runtime that cannot be loaded, lacks
 * a symbol or has no usable device is CLI_EXIT_PLUGIN; device out of memory
 * and failed copies are CLI_EXIT_EXECUTE. On failure nothing stays moved. */
int cli_device_io_start(const cli_session *s, cli_tensors *t,
                        cli_device_io *d);
/* Copies the device outputs into their host buffers (a check that they are
 * readable). Returns a CLI exit code. */
int cli_device_io_copy_outputs(cli_device_io *d);
/* Frees the device buffers and gives the tensors their host buffers back
 * (call before cli_job_close). Safe after a failed start. */
void cli_device_io_stop(cli_device_io *d);

/* Latency figures (cli_latency.c, shared by bench and demo). */
typedef struct cli_stats {
  size_t count;
  double median, p90, p99, min, max, mean;
} cli_stats;

/* Statistics of the non-negative values of v[0..n) (v is reordered;
 * negative values mean unknown and are left out). p90/p99: nearest rank. */
cli_stats cli_stats_of(double *v, size_t n);

/* One execute of s's method on t (output shapes reset first); *wall_us gets
 * its host wall time. A failure is printed naming `what` and, if >= 0,
 * `index`, and returns its CLI exit code. */
int cli_timed_execute(const cli_session *s, cli_tensors *t, const char *what,
                      long index, double *wall_us);

/* Prints "<label> <i> (<name>): dtype [d0, d1]" and up to 8 values. */
void cli_print_tensor(const char *label, size_t index, const char *name,
                      const DLTensor *t, int with_values);

/* Writes s to f with every control byte (below 0x20, and 0x7f) and
 * backslash escaped as \xNN, so names and messages from files never
 * reach the terminal raw. */
void cli_put_escaped(FILE *f, const char *s);

/* Flushes stdout at exit: a write error there (e.g. /dev/full) turns a
 * successful rc into CLI_EXIT_EXECUTE with a message. Returns the rc. */
int cli_finish_stdout(int rc);

/* Prints "aotrun: <message>" to stderr (control bytes escaped, see
 * cli_put_escaped) and returns code. */
int cli_fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Exit code for a failed backend call: bad program/input statuses map to
 * CLI_EXIT_PROGRAM, everything else to CLI_EXIT_EXECUTE. */
int cli_exit_for_status(aotrun_status s);

/* inspect --load (cli_inspect_load.c): opens the method like run and
 * prints the backend's load report. Returns a CLI exit code. */
int cli_inspect_load(const cli_options *opts);

/* Applies each --option KEY=VALUE to `backend` (backend-wide, before init).
 * VALUE "true"/"false" is a bool, a decimal integer an int, anything else a
 * string. Returns a CLI exit code. */
int cli_apply_options(const cli_options *opts, const aotrun_backend *backend);

/* The directory holding the running binary ("" if unknown). */
const char *cli_binary_dir(void);

int cli_plugins(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_demo(int argc, char **argv);

#endif /* AOTRUN_CLI_H */
