#!/usr/bin/env bash
# Builds and runs the libFuzzer targets with ASan + UBSan. Needs clang
# (Debian: apt-get install clang libclang-rt-14-dev; tools/setup.sh).
# testing/run_tests.sh runs every target for 15 s (AOTRUN_FUZZ_SECONDS).
#   testing/fuzz/run_fuzz.sh [TARGET|all|list] [SECONDS]   (defaults: all, 60)
# TARGET is one of: manifest safetensors fqn npy st_file elf inputs plugin_abi
# kernel_arch shim_binding cli graph_state.
# plugin_abi also needs Bazel (it loads the Bazel-built shim and fixture
# model; extra Bazel flags: AOTRUN_BAZEL_FLAGS). Each target runs for
# SECONDS on a scratch copy of testing/fuzz/corpus_TARGET/ (the checked-in
# seeds are not modified); a crash leaves crash-* in the current directory
# and makes the script fail. Extra libFuzzer flags: FUZZ_FLAGS="-runs=N".
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:-all}
secs=${2:-60}
all_targets="manifest safetensors fqn npy st_file elf inputs plugin_abi kernel_arch shim_binding cli graph_state"
if [ "$target" = list ]; then echo "$all_targets"; exit 0; fi
command -v clang >/dev/null || { echo "run_fuzz: clang is not installed"; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

sources_for() {
  case "$1" in
    manifest) echo aot_loader/program.c aot_loader/program_dims.c aot_loader/program_fields.c aot_loader/program_constants.c aot_loader/dims_text.c aot_loader/name_set.c \
      aot_loader/json_read.c aot_loader/scalar_type.c aot_loader/aotrun_error.c ;;
    safetensors) echo aot_loader/safetensors.c aot_loader/json_read.c \
      aot_loader/scalar_type.c aot_loader/aotrun_error.c ;;
    fqn) echo aot_loader/method_weights_check.c aot_loader/program.c aot_loader/program_dims.c aot_loader/program_fields.c aot_loader/program_constants.c aot_loader/dims_text.c \
      aot_loader/name_set.c aot_loader/safetensors.c aot_loader/json_read.c \
      aot_loader/scalar_type.c aot_loader/aotrun_error.c ;;
    npy) echo plugin_api/npy.c plugin_api/npy_dtype.c plugin_api/host_file.c \
      plugin_api/host_error.c ;;
    st_file) echo plugin_api/st_file_read.c plugin_api/st_dtype.c \
      plugin_api/npy.c plugin_api/npy_dtype.c plugin_api/host_file.c \
      plugin_api/host_error.c aot_loader/safetensors.c aot_loader/json_read.c \
      aot_loader/scalar_type.c aot_loader/aotrun_error.c ;;
    inputs) echo aot_loader/method_inputs.c aot_loader/dim_ranges.c aot_loader/dl_dtype.c \
      aot_loader/program.c aot_loader/program_dims.c aot_loader/program_fields.c aot_loader/program_constants.c aot_loader/dims_text.c aot_loader/name_set.c aot_loader/json_read.c \
      aot_loader/scalar_type.c aot_loader/aotrun_error.c ;;
    elf) echo aot_loader/elf_check.c aot_loader/aotrun_error.c ;;
    plugin_abi) echo plugin_api/abi_layout.c plugin_api/backend_info.c \
      plugin_api/backend_identity.c plugin_api/backend_list.c \
      plugin_api/backend_option_buf.c \
      plugin_api/backend_loader.c plugin_api/backend_registry.c \
      plugin_api/backend_unload.c \
      plugin_api/host_logger.c plugin_api/host_method.c plugin_api/host_method_io.c \
      plugin_api/host_execute_ex.c \
      plugin_api/program_dir.c plugin_api/host_error.c plugin_api/host_file.c \
      testing/backend/program_fixture.c ;;
    kernel_arch) echo aot_loader/kernel_arch.c aot_loader/aotrun_error.c ;;
    shim_binding) echo aot_loader/shim_binding.c aot_loader/aotrun_error.c ;;
    cli) echo plugin_api/cli_options.c plugin_api/cli_file_kind.c plugin_api/cli_text.c \
      plugin_api/host_error.c ;;
    graph_state) echo backend_cuda/cuda_graph_state.c backend_cuda/graph_slot.c \
      backend_cuda/cuda_graph_state_query.c backend_cuda/graph_input_nodes.c \
      backend_cuda/graph_output_nodes.c backend_cuda/graph_copy_nodes.c \
      backend_cuda/graph_shape_cache.c testing/backend/fake_graph_gpu.c \
      aot_loader/aotrun_error.c aot_loader/dl_dtype.c aot_loader/scalar_type.c ;;
    *) echo "run_fuzz: unknown target '$1' (one of: $all_targets)" >&2
       return 1 ;;
  esac
}

CFLAGS=(-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -I.
  -fsanitize=address,undefined -fno-sanitize-recover=undefined)

# plugin_abi: the cpu_ref plugin built with the same sanitizers (its
# coverage feeds the fuzzer), and the Bazel-built shim and fixture model it
# loads at run time (not instrumented; ASan checks every allocation anyway).
prepare_plugin_abi() {
  # shellcheck disable=SC2086
  bazel build ${AOTRUN_BAZEL_FLAGS:-} //shim_lib:libaotrun_shim.so \
    //testing/fixtures:fixture_model.so >"$out/bazel.log" 2>&1 ||
    { cat "$out/bazel.log"; echo "run_fuzz: bazel build failed"; return 1; }
  local bin
  # shellcheck disable=SC2086
  bin=$(bazel info ${AOTRUN_BAZEL_FLAGS:-} bazel-bin 2>/dev/null)
  export AOTRUN_FUZZ_SHIM="$bin/shim_lib/libaotrun_shim.so"
  export AOTRUN_FUZZ_MODEL="$bin/testing/fixtures/fixture_model.so"
  export AOTRUN_FUZZ_PLUGIN="$out/libaotrun_cpu_ref.so"
  clang "${CFLAGS[@]}" -fsanitize=fuzzer-no-link -fPIC -shared \
    -fvisibility=hidden -Wl,--version-script=plugin_api/plugin.lds \
    -Wl,-z,nodelete testing/plugins/cpu_ref_plugin.c \
    testing/plugins/cpu_ref_execute_ex.c testing/plugins/cpu_ref_identity.c \
    aot_loader/*.c \
    -lcjson -ldl -lpthread -lm -o "$AOTRUN_FUZZ_PLUGIN"
}

run_one() {
  local t=$1 srcs
  srcs=$(sources_for "$t")
  if [ "$t" = plugin_abi ]; then prepare_plugin_abi || return 1; fi
  # shellcheck disable=SC2086
  clang "${CFLAGS[@]}" -fsanitize=fuzzer \
    "testing/fuzz/fuzz_$t.c" $srcs -lcjson -ldl -lpthread -lm -o "$out/fuzz_$t"
  local corpus="$out/corpus_$t"; mkdir "$corpus"
  cp "testing/fuzz/corpus_$t"/* "$corpus/"
  local dict=()
  [ -f "testing/fuzz/$t.dict" ] && dict=(-dict="testing/fuzz/$t.dict")
  [ "$t" = st_file ] && dict=(-dict=testing/fuzz/safetensors.dict)
  # cli: every refused command line prints a line on stderr; close the
  # target's stderr (libFuzzer and sanitizer reports keep theirs).
  local quiet=()
  [ "$t" = cli ] && quiet=(-close_fd_mask=2)
  echo "run_fuzz: $t for ${secs}s"
  # shellcheck disable=SC2086
  "$out/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout=5 \
    -print_final_stats=1 "${dict[@]}" "${quiet[@]}" ${FUZZ_FLAGS:-} "$corpus"
}

if [ "$target" = all ]; then
  for t in $all_targets; do run_one "$t"; done
else
  run_one "$target"
fi
