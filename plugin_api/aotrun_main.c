/* aotrun_main.c: the aotrun command-line host: dispatch and --help. */
#include <stdio.h>
#include <string.h>

#include "plugin_api/cli.h"

static const char kUsage[] =
    "usage: aotrun COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  plugins [--plugin PATH]...\n"
    "      list backends: name, ABI version, availability (and why not),\n"
    "      version, vendor, build and devices (name, memory, compute\n"
    "      capability) where the plugin reports them\n"
    "  inspect PROGRAM [--json] [--load [--method M] [--backend NAME]\n"
    "                 [--plugin PATH]... [--option KEY=VALUE]...]\n"
    "      print the program's methods, inputs/outputs (dtypes, shapes,\n"
    "      symbolic dims and their ranges), constants (FQN, dtype, shape,\n"
    "      bytes), weights shared between methods, and the aoti_torch_*\n"
    "      functions each method's library imports, checked against the\n"
    "      shim library ($AOTRUN_SHIM_LIB, else libaotrun_shim.so in a\n"
    "      $AOTRUN_PLUGIN_PATH directory or next to the binary; \"unknown\"\n"
    "      without one). --json: one JSON object instead of the text.\n"
    "      --load: load method M (default forward) with a backend and print\n"
    "      its load report instead (time per phase, host and device bytes,\n"
    "      where the library was mapped from)\n"
    "  run PROGRAM [--method M] [--input FILE]... [--output FILE]\n"
    "              [--output-dir D] [--output-format npy|safetensors]\n"
    "              [--backend NAME] [--plugin PATH]... [--calls N]\n"
    "              [--device N] [--device-io] [--option KEY=VALUE]...\n"
    "      run a method on the inputs; --output FILE writes them to one\n"
    "      file in the format its extension names: FILE.safetensors keyed\n"
    "      by the manifest's output names (every dtype), FILE.npy for a\n"
    "      method with one output; --output-dir D writes D/out0.npy,\n"
    "      out1.npy, ... or, with --output-format safetensors, one\n"
    "      D/outputs.safetensors (needed for bfloat16 and float8)\n"
    "      (with --calls N > 1: N calls in one process, D/call<k>/...);\n"
    "      --device N: run on the backend's device N (compile spec \"device\");\n"
    "      --device-io: inputs and outputs in device memory, as for bench\n"
    "  bench PROGRAM [--method M] [--input FILE]... [--iterations N]\n"
    "                [--warmup W] [--device-io] [--json] [--no-gpu-time]\n"
    "                [--backend NAME] [--plugin PATH]... [--option KEY=VALUE]...\n"
    "      time execute (host wall time, the backend's synchronisation\n"
    "      included): init (plugin load + method init), the first call, then\n"
    "      W warm-up (default 10) and N timed calls (default 100): p50\n"
    "      (median), p90, p99, min, mean in microseconds; GPU time per call\n"
    "      where the backend measures it (method options gpu_timing,\n"
    "      last_gpu_time_ns), else \"not available\". --device-io: inputs\n"
    "      and outputs in device memory (kDLCUDA 0) through the CUDA runtime,\n"
    "      loaded then ($AOTRUN_CUDART, else libcudart.so.13, libcudart.so).\n"
    "      --json: one JSON object with every figure instead of text\n"
    "  demo [--backend NAME] [--plugin PATH]...\n"
    "      run the bundled example program ($AOTRUN_EXAMPLE_PROGRAM or the\n"
    "      example next to the binary, a CPU model) on --backend or the first\n"
    "      available backend; then, where the cuda backend is available, the\n"
    "      CUDA example ($AOTRUN_EXAMPLE_PROGRAM_CUDA or the one next to the\n"
    "      binary) on it: outputs compared with the first run's, median\n"
    "      latency of 1000 calls without and with CUDA graphs (device I/O,\n"
    "      the CUDA runtime loaded as for bench --device-io); without it, one\n"
    "      line saying what is missing\n"
    "\n"
    "plugins are searched in: --plugin PATH (file or directory), then\n"
    "$AOTRUN_PLUGIN_PATH (colon-separated files or directories), then the\n"
    "directory of the aotrun binary; directories contribute libaotrun_*.so\n"
    "(libaotrun_shim.so is skipped: it is not a plugin). Without --backend\n"
    "the first available backend in that order whose can_run accepts the\n"
    "program runs it ($AOTRUN_LOG_LEVEL=info says which and why the others\n"
    "were skipped); with --backend NAME only that one.\n"
    "--input FILE is .npy or .safetensors (by extension). With .npy files\n"
    "only, the i-th is input i. Each tensor of a .safetensors file names\n"
    "one input, by its manifest name or its index (\"0\", \"1\", ...);\n"
    ".npy files then fill the inputs still missing, in order. A tensor\n"
    "naming no input, an input given twice, a missing input or a .npy file\n"
    "left over is an error. .safetensors holds every dtype (F64 F32 F16\n"
    "BF16 F8_E5M2 F8_E4M3 I64 I32 I16 I8 U64 U32 U16 U8 BOOL C64); .npy\n"
    "has no bfloat16 or float8.\n"
    "Outputs are sized from the manifest; a dynamic dim bound to an input's\n"
    "symbol takes that size. An output with a data-dependent dim (e.g.\n"
    "x[mask]) is allocated by the backend when it has execute_ex (ABI 1.1);\n"
    "otherwise the largest input's element count is its capacity and the\n"
    "real size is written back. An output the backend reports too small is\n"
    "reallocated to the size it needs and the call runs once more.\n"
    "--option KEY=VALUE sets a backend-wide option before init (true/false\n"
    "is a bool, a decimal integer an int, anything else a string), e.g.\n"
    "--option enable_cuda_graph_for_method=forward.\n"
    "$AOTRUN_LOG_LEVEL (debug|info|warning|error, default warning) sets\n"
    "which plugin log messages are printed (and, when set, the backend's\n"
    "option log_level, where it has one).\n"
    "\n"
    "exit codes:\n"
    "  0  success (also: the plugins command finding no plugin)\n"
    "  1  usage error (unknown command or option, missing argument, a value\n"
    "     above its limit, an --option the plugin rejects, --output-format\n"
    "     other than npy/safetensors or without --output-dir, --output not\n"
    "     .safetensors/.npy or combined with --output-dir, --output-format\n"
    "     or --calls N > 1, an output dtype .npy cannot hold without\n"
    "     safetensors, --output FILE.npy for a method without one output)\n"
    "  2  plugin error (not loadable, wrong ABI, unknown --backend, none\n"
    "     available; for --device-io: no loadable CUDA runtime or no\n"
    "     usable CUDA device)\n"
    "  3  program or input error (missing/malformed program or manifest,\n"
    "     unknown method, bad or mismatched .npy/.safetensors input, output\n"
    "     not sizable)\n"
    "  4  execution error (the backend failed to initialise or execute, or\n"
    "     an output or standard output could not be written)\n"
    "\n"
    "limits: --calls <= 10000, --iterations <= 1000000, --warmup <= 100000;\n"
    "inputs are regular .npy/.safetensors files of at most 16 GiB (a\n"
    "safetensors header at most 100 MiB); outputs are never\n"
    "written through symbolic links; program files must resolve inside the\n"
    "program directory (docs/plugin-abi.md, \"Files and trust\").\n";

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return CLI_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    fputs(kUsage, stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(cmd, "plugins") == 0) return cli_plugins(argc, argv);
  if (strcmp(cmd, "inspect") == 0) return cli_inspect(argc, argv);
  if (strcmp(cmd, "run") == 0) return cli_run(argc, argv);
  if (strcmp(cmd, "bench") == 0) return cli_bench(argc, argv);
  if (strcmp(cmd, "demo") == 0) return cli_demo(argc, argv);
  return cli_fail(CLI_EXIT_USAGE, "unknown command '%s' (see aotrun --help)",
                  cmd);
}

int main(int argc, char **argv) {
  return cli_finish_stdout(dispatch(argc, argv));
}
