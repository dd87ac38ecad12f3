#!/usr/bin/env bash
# test_abi_header.sh: plugin_api/aotrun_plugin.h as third parties compile
# it. It must compile as C11 and as C++17 (and its macros work there), its
# layout asserts must hold on 32- and 64-bit targets, and a header whose
# layout drifted must fail to compile.
#   $1 plugin_api/aotrun_plugin.h   $2 testing/host/test_abi_header.cc
set -u
header=$1
cc_test_src=$2
root=$(cd "$(dirname "$header")/.." && pwd)   # so "plugin_api/..." resolves
tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$tmp/inc/dlpack"
cp /usr/include/dlpack/dlpack.h "$tmp/inc/dlpack/"
printf '#include "plugin_api/aotrun_plugin.h"\nint main(void) { return aotrun_strides_are_row_major(0, 0, 0) - 1 + (aotrun_status_string(0)[0] != 0) - 1; }\n' > "$tmp/h.c"
pass=0; fail=0
ok()  { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

# C++17, built and run.
if g++ -std=c++17 -Wall -Wextra -Werror -pedantic -I"$root" -isystem "$tmp/inc" \
     -o "$tmp/cxx" "$cc_test_src" && "$tmp/cxx"; then
  ok "g++ -std=c++17"
else bad "g++ -std=c++17"; fi
# C11, pedantic.
if gcc -std=c11 -Wall -Wextra -Werror -pedantic -I"$root" -isystem "$tmp/inc" \
     -o "$tmp/c11" "$tmp/h.c" && "$tmp/c11"; then
  ok "gcc -std=c11 -pedantic"
else bad "gcc -std=c11 -pedantic"; fi
# 32-bit x86 (int64_t aligned to 4 inside structs): syntax only.
if gcc -m32 -ffreestanding -std=c11 -Wall -Wextra -Werror -fsyntax-only \
     -I"$root" -isystem "$tmp/inc" "$tmp/h.c"; then
  ok "gcc -m32"
else bad "gcc -m32"; fi
# Other targets through clang, when it is installed.
if command -v clang > /dev/null; then
  for target in armv7a-linux-gnueabihf aarch64-linux-gnu i686-linux-gnu \
                riscv32-unknown-elf; do
    if clang --target=$target -ffreestanding -std=c11 -Wall -Wextra -Werror \
         -fsyntax-only -I"$root" -isystem "$tmp/inc" "$tmp/h.c"; then
      ok "clang --target=$target"
    else bad "clang --target=$target"; fi
  done
  if clang++ --target=armv7a-linux-gnueabihf -ffreestanding -std=c++17 \
       -fsyntax-only -I"$root" -isystem "$tmp/inc" -x c++ "$tmp/h.c"; then
    ok "clang++ --target=armv7a (C++17, 32-bit)"
  else bad "clang++ --target=armv7a (C++17, 32-bit)"; fi
else
  echo "clang not installed: 32-bit ARM / RISC-V checks skipped"
fi

# A drifted header must not compile: a member inserted into the 1.0 table,
# and a member inserted into io_info.
mkdir -p "$tmp/drift/plugin_api"
sed 's/^  void (\*destroy)(aotrun_method \*method);$/&\n  int32_t inserted;/' \
  "$header" > "$tmp/drift/plugin_api/aotrun_plugin.h"
if grep -q inserted "$tmp/drift/plugin_api/aotrun_plugin.h" &&
   ! gcc -std=c11 -fsyntax-only -I"$tmp/drift" -isystem "$tmp/inc" "$tmp/h.c" \
       2> "$tmp/drift.err" &&
   grep -q "aotrun_backend_api.set_option moved" "$tmp/drift.err"; then
  ok "a member inserted into the backend table fails to compile"
else bad "a member inserted into the backend table fails to compile"; fi
sed 's/^  int32_t ndim;         \/\* rank/  int32_t inserted;\n&/' \
  "$header" > "$tmp/drift/plugin_api/aotrun_plugin.h"
if grep -q inserted "$tmp/drift/plugin_api/aotrun_plugin.h" &&
   ! g++ -std=c++17 -fsyntax-only -I"$tmp/drift" -isystem "$tmp/inc" -x c++ \
       "$tmp/h.c" 2> "$tmp/drift.err" &&
   grep -q "aotrun_io_info.ndim moved" "$tmp/drift.err"; then
  ok "a member inserted into io_info fails to compile (C++)"
else bad "a member inserted into io_info fails to compile (C++)"; fi

echo "RESULT: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
