#!/bin/bash
# test_install.sh INSTALL RUN_PROGRAM.c: installs aotrun into a temporary
# prefix with the //:install script, then uses only the installed tree:
# builds docs/examples/run_program.c with plain `cc $(pkg-config --cflags
# --libs aotrun)` (and statically), runs it with the CPU reference plugin on
# the installed example program, and checks the layout, the headers (they
# include each other by file name), the library's exports and the CLI.
set -u
INSTALL=$1 EXAMPLE=$2
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP   # cc's own temporary files
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM
P=$TMP/prefix
failures=0 checks=0
check() {  # check WHAT CMD...: CMD must succeed
  local what=$1; shift
  checks=$((checks + 1))
  if ! "$@" > "$TMP/out.txt" 2>&1; then
    echo "FAIL: $what: $*"; cat "$TMP/out.txt"
    failures=$((failures + 1))
  fi
}
same() {  # same WHAT FILE EXPECTED: FILE holds exactly EXPECTED
  checks=$((checks + 1))
  if [[ "$(cat "$2")" != "$3" ]]; then
    echo "FAIL: $1: got:"; cat "$2"; echo "want:"; echo "$3"
    failures=$((failures + 1))
  fi
}

check "install" "$INSTALL" "$P"
for f in include/aotrun/aotrun_plugin.h include/aotrun/aotrun_host.h \
         include/aotrun/aotrun_shim.h lib/libaotrun_host.so \
         lib/libaotrun_host.a lib/pkgconfig/aotrun.pc bin/aotrun \
         lib/aotrun/aotrun lib/aotrun/libaotrun_cuda.so \
         lib/aotrun/libaotrun_cpu_ref.so lib/aotrun/libaotrun_shim.so \
         lib/aotrun/example_program/manifest.json \
         lib/aotrun/example_program/weights.safetensors \
         lib/aotrun/example_program/forward.so \
         lib/aotrun/example_program_cuda/manifest.json \
         lib/aotrun/example_program_cuda/weights.safetensors \
         lib/aotrun/example_program_cuda/forward.so; do
  check "installed $f" test -f "$P/$f"
done

# RUNPATHs: $ORIGIN or nothing, never a path into Bazel's build tree.
if command -v patchelf >/dev/null; then
  for f in lib/aotrun/aotrun lib/aotrun/libaotrun_cuda.so \
           lib/aotrun/libaotrun_cpu_ref.so lib/aotrun/libaotrun_shim.so \
           lib/libaotrun_host.so; do
    check "RUNPATH of $f is \$ORIGIN or empty" bash -c \
      "r=\$(patchelf --print-rpath '$P/$f'); echo \"\$r\"; [[ -z \"\$r\" || \"\$r\" == '\$ORIGIN' ]]"
  done
else
  echo "SKIP: RUNPATH checks: patchelf is not installed (tools/setup.sh installs it)"
fi

export PKG_CONFIG_PATH=$P/lib/pkgconfig
pc() { pkg-config "$@" aotrun; }
check "pkg-config finds aotrun" pc --exists
plugindir=$(pc --variable=plugindir)
program=$(pc --variable=example_program)
same "plugindir" <(echo "$plugindir") "$P/lib/aotrun"
# The shim every plugin loads needs the CUDA 13 runtime: where the loader's
# cache lacks it, do what docs/embedding.md says.
if ! /sbin/ldconfig -p 2>/dev/null | grep -qF 'libcublasLt.so.13 '; then
  export LD_LIBRARY_PATH=$(pc --variable=cuda_libdir)
fi

# Under --config=asan/ubsan the installed libraries are instrumented: build
# the example with the same sanitizer so it links and loads.
san=()
if readelf -d "$P/lib/libaotrun_host.so" | grep -q 'libasan'; then
  san=(-fsanitize=address)
  # LeakSanitizer's tracer dies (SIGSEGV) in these processes, which load the
  # CUDA runtime through the shim without a driver; ASan itself stays on.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
elif readelf -d "$P/lib/libaotrun_host.so" | grep -q 'libubsan'; then
  san=(-fsanitize=undefined)
fi

# The headers alone, from the installed tree, both include styles.
printf '#include "aotrun_host.h"\n#include "aotrun_shim.h"\nint main(void) { return 0; }\n' > "$TMP/h1.c"
printf '#include <aotrun/aotrun_host.h>\nint main(void) { return 0; }\n' > "$TMP/h2.c"
check "headers by file name" cc -std=c11 -Wall -Wextra -Werror -pedantic \
  $(pc --cflags) -fsyntax-only "$TMP/h1.c"
check "headers as <aotrun/...>" cc -std=c11 -Wall -Wextra -Werror \
  -I"$P/include" -fsyntax-only "$TMP/h2.c"

# libaotrun_host.so exports exactly the functions aotrun_host.h declares.
cc -std=c11 $(pc --cflags) -fsyntax-only -aux-info "$TMP/aux.txt" \
  -x c "$P/include/aotrun/aotrun_host.h"
grep 'aotrun_host.h:' "$TMP/aux.txt" |
  sed -n 's/.*[ *]\(aotrun_[a-z_0-9]*\) (.*/\1/p' | sort > "$TMP/declared.txt"
nm -D --defined-only "$P/lib/libaotrun_host.so" | awk '{print $3}' | sort \
  > "$TMP/exported.txt"
check "functions declared" test -s "$TMP/declared.txt"
check "exports = declarations" diff "$TMP/declared.txt" "$TMP/exported.txt"

# The documented build line, then a static link.
check "cc example" cc -std=c11 -Wall -Wextra -Werror -o "$TMP/run_program" \
  "$EXAMPLE" $(pc --cflags --libs) "${san[@]}"
check "cc example (static)" cc -std=c11 -Wall -Wextra -Werror "${san[@]}" \
  -o "$TMP/run_static" "$EXAMPLE" $(pc --cflags) "$P/lib/libaotrun_host.a" \
  $(pc --static --libs-only-l | sed 's/-laotrun_host//')
check "static: no libaotrun_host.so needed" \
  bash -c "! readelf -d '$TMP/run_static' | grep -q libaotrun_host"

want='backend cpu_ref
y[0] = 8.5 15.5 28
y[1] = 1 -2 0.5
calls = 1'
LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$TMP/run_program" "$plugindir/libaotrun_cpu_ref.so" "$program" \
  > "$TMP/run.txt" 2>&1
same "example output" "$TMP/run.txt" "$want"
"$TMP/run_static" "$plugindir/libaotrun_cpu_ref.so" "$program" \
  > "$TMP/static.txt" 2>&1
same "static example output" "$TMP/static.txt" "$want"
# Errors name the thing, and the exit status says so.
LD_LIBRARY_PATH=$P/lib "$TMP/run_program" "$TMP/none.so" "$program" \
  > "$TMP/err.txt" 2>&1
rc=$?
check "missing plugin: exit 1" test "$rc" -eq 1
check "missing plugin: named" grep -qF "cannot load plugin $TMP/none.so" "$TMP/err.txt"

# The installed CLI finds its plugins and the example program itself.
"$P/bin/aotrun" plugins > "$TMP/plugins.txt" 2>&1
check "aotrun plugins lists cpu_ref" \
  grep -qP "^cpu_ref\tABI 1\.1\tavailable\t$plugindir/libaotrun_cpu_ref.so$" "$TMP/plugins.txt"
check "aotrun plugins lists cuda" grep -q "^cuda	" "$TMP/plugins.txt"
check "aotrun demo" "$P/bin/aotrun" demo --backend cpu_ref
# Its CUDA part: run on a GPU machine, else the one line saying why not.
"$P/bin/aotrun" demo --backend cpu_ref > "$TMP/demo.txt" 2>&1
check "aotrun demo: CUDA part" grep -qE \
  "^(cuda example: not run: backend 'cuda' is not available: |latency with CUDA graphs: median )" \
  "$TMP/demo.txt"
check "aotrun inspect (installed CUDA example)" \
  "$P/bin/aotrun" inspect "$P/lib/aotrun/example_program_cuda"

echo "RESULT: $((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
