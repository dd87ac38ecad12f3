#!/bin/bash
# test_cli_bad_programs.sh: what `aotrun` says on the CPU (cpu_ref) for the
# bad programs and arguments of issue 13's "Unclear messages": each message
# names the real problem and the file as the user knows it (forward.so, not
# the model's memfd or temp copy, nor an internal function), and nothing is
# left in $TMPDIR. Rows of the bad-input matrix in docs/reliability.md.
# usage: test_cli_bad_programs.sh AOTRUN CPU_REF.so EXAMPLE/manifest.json \
#                                 UNKNOWN_IMPORT.so CREATE_FAILS.so
set -u
AOTRUN=$1 CPUREF=$2 EXAMPLE=$(dirname "$3") UNKNOWN_IMPORT=$4 CREATE_FAILS=$5
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/clibad.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM
# Runfiles are links out of the program directory: run real copies.
cp -rL "$EXAMPLE" "$TMP/prog"
mkdir "$TMP/t" && export TMPDIR=$TMP/t
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

# After each expect: no name of a model copy or internal function in the
# output, and nothing left in $TMPDIR.
after_expect() {
  local out=$1; shift
  if grep -qE '/proc/self/fd|aotrun-model-|aotrun_[a-z_]+:' <<<"$out"; then
    fail "$* names a model copy or an internal function:"; echo "$out"
  fi
  if [ -n "$(ls -A "$TMP/t")" ]; then
    fail "$* left files in \$TMPDIR: $(ls -A "$TMP/t")"
    rm -rf "${TMP:?}/t/"*
  fi
}

# A program copy whose FILE is replaced by what the rest of the line makes.
variant() { rm -rf "${TMP:?}/$1"; cp -r "$TMP/prog" "$TMP/$1"; rm -f "$TMP/$1/$2"; }

# x [2, 4] float32 as .npy 1.0.
x=$TMP/x.npy
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }" > "$x"
head -c 32 /dev/zero >> "$x"
expect 0 "output 0: float32 [2, 3]" "$AOTRUN" run "$TMP/prog" --plugin "$CPUREF" --input "$x"

# ---- a library or weights file that is a directory, a device, missing
variant libdir forward.so; mkdir "$TMP/libdir/forward.so"
expect 3 "$TMP/libdir/forward.so is not a regular file (a directory)" \
  "$AOTRUN" run "$TMP/libdir" --plugin "$CPUREF" --input "$x"
expect 3 "is not a regular file (a directory)" \
  "$AOTRUN" inspect "$TMP/libdir" --load --plugin "$CPUREF"
expect 3 "is not a regular file (a directory)" \
  "$AOTRUN" bench "$TMP/libdir" --plugin "$CPUREF" --input "$x"
variant libdev forward.so
if mknod "$TMP/libdev/forward.so" c 1 3 2>/dev/null; then
  expect 3 "$TMP/libdev/forward.so is not a regular file (a device)" \
    "$AOTRUN" run "$TMP/libdev" --plugin "$CPUREF" --input "$x"
else
  echo "SKIP: a device inside the program (mknod not permitted here)"
fi
variant weightsdir weights.safetensors; mkdir "$TMP/weightsdir/weights.safetensors"
expect 3 "$TMP/weightsdir/weights.safetensors is not a regular file (a directory)" \
  "$AOTRUN" run "$TMP/weightsdir" --plugin "$CPUREF" --input "$x"
variant noweights weights.safetensors
expect 3 "weights.safetensors: No such file or directory" \
  "$AOTRUN" run "$TMP/noweights" --plugin "$CPUREF" --input "$x"

# ---- a weight missing or of another dtype (the header is rewritten; the
# data stays): named by constant, FQN and file
retag() {  # retag FILE FQN DTYPE|drop
  python3 - "$@" <<'PY'
import json, struct, sys
path, fqn, what = sys.argv[1:4]
b = open(path, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
if what == "drop":
    del h[fqn]
else:
    h[fqn]["dtype"] = what
hb = json.dumps(h).encode()
hb += b" " * ((8 - len(hb) % 8) % 8)
open(path, "wb").write(struct.pack("<Q", len(hb)) + hb + b[8 + n:])
PY
}
variant wrongdtype weights.safetensors; cp "$TMP/prog/weights.safetensors" "$TMP/wrongdtype/"
retag "$TMP/wrongdtype/weights.safetensors" lin.bias I32
expect 3 "constant 'bias' (fqn 'lin.bias'): dtype float32 in the manifest, int32 in 'weights.safetensors'" \
  "$AOTRUN" run "$TMP/wrongdtype" --plugin "$CPUREF" --input "$x"
variant noentry weights.safetensors; cp "$TMP/prog/weights.safetensors" "$TMP/noentry/"
retag "$TMP/noentry/weights.safetensors" scale drop
expect 3 "constant 'scale64' (fqn 'scale'): no entry 'scale' in 'weights.safetensors'" \
  "$AOTRUN" run "$TMP/noentry" --plugin "$CPUREF" --input "$x"

# ---- model failures name forward.so, never the memfd or temp copy
variant unknown forward.so; cp "$UNKNOWN_IMPORT" "$TMP/unknown/forward.so"
expect 4 "forward.so imports 1 aoti_torch_* function that the shim library (" \
  "$AOTRUN" run "$TMP/unknown" --plugin "$CPUREF" --input "$x"
variant create forward.so; cp "$CREATE_FAILS" "$TMP/create/forward.so"
expect 4 "AOTInductorModelContainerCreateWithDevice returned 1 for forward.so" \
  "$AOTRUN" run "$TMP/create" --plugin "$CPUREF" --input "$x"
variant truncated forward.so; head -c 3000 "$TMP/prog/forward.so" > "$TMP/truncated/forward.so"
# (refused by cpu_ref's can_run: "no backend can run", exit 2)
expect 2 "forward.so is truncated" \
  "$AOTRUN" run "$TMP/truncated" --plugin "$CPUREF" --input "$x"

# ---- the loader's manifest messages, the same for inspect and run
variant nodtype manifest.json
# (every "dtype" goes; input 0 is checked first)
sed 's/"dtype": "float32",//' "$TMP/prog/manifest.json" > "$TMP/nodtype/manifest.json"
for cmd in inspect run; do
  expect 3 "malformed manifest: method 'forward': input 0 ('x'): missing field 'dtype'" \
    "$AOTRUN" "$cmd" "$TMP/nodtype" $([ $cmd = run ] && echo --plugin "$CPUREF")
done
variant badjson manifest.json
printf '{"format": "aotrun-program", "methods": [1,2' > "$TMP/badjson/manifest.json"
for cmd in inspect run; do
  expect 3 "malformed manifest: not valid JSON (error at byte 43 of 44)" \
    "$AOTRUN" "$cmd" "$TMP/badjson" $([ $cmd = run ] && echo --plugin "$CPUREF")
done

# ---- empty paths and values: a usage error naming the argument
for cmd in run bench inspect; do
  expect 1 "$cmd: the PROGRAM argument is empty" "$AOTRUN" "$cmd" ""
done
for opt in --plugin --input --output-dir --method --backend; do
  expect 1 "run: option $opt has an empty value" \
    "$AOTRUN" run "$TMP/prog" "$opt" ""
done
expect 1 "plugins: option --plugin has an empty value" "$AOTRUN" plugins --plugin ""
expect 1 "demo: option --backend has an empty value" "$AOTRUN" demo --backend ""

# ---- .npy header errors name the problem
printf '\x93NUMPY\x03\x00' > "$TMP/short.npy"
expect 3 "short.npy: truncated .npy file (8 bytes; its preamble alone has 10)" \
  "$AOTRUN" run "$TMP/prog" --plugin "$CPUREF" --input "$TMP/short.npy"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' \
  "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), 'shape': (8,)}" \
  > "$TMP/twice.npy"
head -c 32 /dev/zero >> "$TMP/twice.npy"
expect 3 "repeated key 'shape'" \
  "$AOTRUN" run "$TMP/prog" --plugin "$CPUREF" --input "$TMP/twice.npy"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' \
  "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 4), }" > "$TMP/big.npy"
head -c 32 /dev/zero >> "$TMP/big.npy"
expect 3 "the data is big-endian" \
  "$AOTRUN" run "$TMP/prog" --plugin "$CPUREF" --input "$TMP/big.npy"

finish "bad-program"
