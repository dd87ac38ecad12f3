#!/usr/bin/env bash
# install.sh PREFIX: installs aotrun like a C library (docs/embedding.md).
# Run it as `bazel run //:install -- PREFIX`: Bazel builds everything first
# and this script copies the files from its runfiles.
#
#   PREFIX/include/aotrun/   aotrun_plugin.h aotrun_host.h aotrun_shim.h
#   PREFIX/lib/              libaotrun_host.so libaotrun_host.a
#   PREFIX/lib/pkgconfig/    aotrun.pc
#   PREFIX/lib/aotrun/       the aotrun CLI, the plugins (libaotrun_cuda.so,
#                            libaotrun_cpu_ref.so), libaotrun_shim.so,
#                            example_program/ and example_program_cuda/
#   PREFIX/bin/aotrun        -> ../lib/aotrun/aotrun
#
# Why lib/aotrun/: plugins find libaotrun_shim.so through RUNPATH $ORIGIN,
# and the CLI searches the directory of its binary (symbolic links
# resolved) for plugins and for example_program/ and
# example_program_cuda/, so `PREFIX/bin/aotrun demo` works as installed.
set -euo pipefail

if [[ $# -ne 1 || -z "$1" || "$1" == -* ]]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix=$1
# `bazel run` starts us in the runfiles tree: a relative PREFIX means
# relative to where the user typed the command.
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
fi
# It goes into aotrun.pc through sed (delimiter '|') and pkg-config.
if [[ "$prefix" == *"|"* || "$prefix" == *$'\n'* ]]; then
  echo "install: PREFIX must not contain '|' or a newline: $prefix" >&2
  exit 2
fi

# Our files: our own runfiles (bazel run), or the runfiles of a test that
# has this binary as data (RUNFILES_DIR), or the current directory.
if [[ -d "$0.runfiles/aotrun" ]]; then
  src="$0.runfiles/aotrun"
elif [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/aotrun" ]]; then
  src="$RUNFILES_DIR/aotrun"
else
  src=$PWD
fi
need() {
  if [[ ! -e "$src/$1" ]]; then
    echo "install: $src/$1 is missing (run through bazel run //:install)" >&2
    exit 1
  fi
}
files=(plugin_api/aotrun_plugin.h plugin_api/aotrun_host.h
       shim_lib/aotrun_shim.h install/libaotrun_host.so
       install/libaotrun_host.a plugin_api/aotrun
       backend_cuda/libaotrun_cuda.so testing/plugins/libaotrun_cpu_ref.so
       shim_lib/libaotrun_shim.so testing/example_program/manifest.json
       testing/example_program/weights.safetensors
       testing/example_program/forward.so install/aotrun.pc.in
       testing/example_program/example_program_cuda/manifest.json
       testing/example_program/example_program_cuda/weights.safetensors
       testing/example_program/example_program_cuda/forward.so)
for f in "${files[@]}"; do need "$f"; done

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)   # absolute, no '..', for aotrun.pc
inc=$prefix/include/aotrun lib=$prefix/lib pkg=$prefix/lib/aotrun
mkdir -p "$inc" "$lib/pkgconfig" "$pkg/example_program" \
  "$pkg/example_program_cuda" "$prefix/bin"
# `install` copies the files behind Bazel's symbolic links.
install -m 0644 "$src"/plugin_api/aotrun_plugin.h "$src"/plugin_api/aotrun_host.h \
  "$src"/shim_lib/aotrun_shim.h "$inc/"
install -m 0755 "$src"/install/libaotrun_host.so "$lib/"
install -m 0644 "$src"/install/libaotrun_host.a "$lib/"
install -m 0755 "$src"/plugin_api/aotrun "$src"/backend_cuda/libaotrun_cuda.so \
  "$src"/testing/plugins/libaotrun_cpu_ref.so "$src"/shim_lib/libaotrun_shim.so \
  "$pkg/"
install -m 0644 "$src"/testing/example_program/manifest.json \
  "$src"/testing/example_program/weights.safetensors "$pkg/example_program/"
install -m 0755 "$src"/testing/example_program/forward.so "$pkg/example_program/"
cuda_ex=$src/testing/example_program/example_program_cuda
install -m 0644 "$cuda_ex"/manifest.json "$cuda_ex"/weights.safetensors \
  "$pkg/example_program_cuda/"
install -m 0755 "$cuda_ex"/forward.so "$pkg/example_program_cuda/"
# Bazel links with RUNPATHs into its own output tree ($ORIGIN/../_solib_k8/
# ...), meaningless once installed: keep $ORIGIN only (plugins find
# libaotrun_shim.so beside them; CUDA's libraries come from the loader's
# cache or LD_LIBRARY_PATH, see the note below).
if command -v patchelf >/dev/null; then
  for f in "$pkg"/aotrun "$pkg"/*.so; do
    if [[ -n "$(patchelf --print-rpath "$f")" ]]; then
      patchelf --set-rpath '$ORIGIN' "$f"
    fi
  done
else
  echo "note: patchelf not found: the installed plugins keep Bazel's build-tree" \
    "RUNPATHs next to \$ORIGIN (harmless; apt-get install patchelf to drop them)"
fi
ln -sfn ../lib/aotrun/aotrun "$prefix/bin/aotrun"
# '|' as the sed delimiter (PREFIX was checked not to hold one).
sed "s|@PREFIX@|$prefix|" "$src/install/aotrun.pc.in" > "$lib/pkgconfig/aotrun.pc"

echo "installed aotrun into $prefix"
# libaotrun_shim.so (which every plugin loads) needs the CUDA 13 runtime,
# and opens cuBLAS at its first GEMM; say so when the dynamic loader cannot
# find them by itself.
for l in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
  if ! /sbin/ldconfig -p 2>/dev/null | grep -qF "$l "; then
    echo "note: $l is not in the loader's cache; before running aotrun add" \
      "/usr/local/cuda/lib64 to LD_LIBRARY_PATH (docs/embedding.md)"
    break
  fi
done
