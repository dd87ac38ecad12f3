#!/bin/bash
# test_cli.sh: runs the aotrun binary and checks exit codes and messages.
# usage: test_cli.sh AOTRUN MINIMAL.so MINIMAL_B.so UNAVAILABLE.so \
#                    NOT_A_PLUGIN.so PROGRAM/manifest.json
set -u
AOTRUN=$1 MIN=$2 MINB=$3 UNAV=$4 NOTPLUGIN=$5 PROGRAM=$(dirname "$6")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM
# Runfiles are symbolic links into the source tree, and program files that
# resolve outside their program directory are refused ("Files and trust"):
# run a real copy.
cp -rL "$PROGRAM" "$TMP/prog" && PROGRAM=$TMP/prog
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

# A float32 vector [1, 2, 3, 4] as .npy 1.0 (128-byte header).
write_x() {
  local h="{'descr': '$2', 'fortran_order': False, 'shape': (4,), }"
  printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "$h" > "$1"
  printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >> "$1"
}
write_x "$TMP/x.npy" '<f4'
write_x "$TMP/x_i4.npy" '<i4'
printf 'not an npy file' > "$TMP/bad.npy"

# ---- usage errors: 1
expect 1 "usage: aotrun COMMAND" "$AOTRUN"
expect 0 "exit codes:" "$AOTRUN" --help
expect 1 "unknown command 'frob'" "$AOTRUN" frob
expect 1 "run: missing PROGRAM argument" "$AOTRUN" run
expect 1 "run: unknown option '--bogus'" "$AOTRUN" run "$PROGRAM" --bogus x
expect 1 "option --input needs a value" "$AOTRUN" run "$PROGRAM" --input
expect 1 "--iterations needs an integer >= 1, got '0'" \
  "$AOTRUN" bench "$PROGRAM" --iterations 0
expect 1 "inspect: unexpected argument 'extra'" "$AOTRUN" inspect "$PROGRAM" extra
expect 1 "plugins: unknown option '--input'" "$AOTRUN" plugins --input x

# ---- plugin errors: 2
expect 2 "does not export aotrun_plugin_get_api" "$AOTRUN" plugins --plugin "$NOTPLUGIN"
expect 0 $'minimal\tABI 1.1\tavailable' "$AOTRUN" plugins --plugin "$MIN"
expect 0 $'unavailable: no scaling hardware (test variant)' \
  "$AOTRUN" plugins --plugin "$UNAV"
expect 2 "cannot load plugin $PROGRAM/manifest.json" \
  "$AOTRUN" run "$PROGRAM" --plugin "$PROGRAM/manifest.json" --input "$TMP/x.npy"
expect 2 "backend 'cuda' is not loaded (loaded: minimal)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --backend cuda --input "$TMP/x.npy"
expect 2 "no available backend among 1 plugin(s)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$UNAV" --input "$TMP/x.npy"
expect 2 "backend 'minimal_unavailable' is not available: no scaling" \
  "$AOTRUN" run "$PROGRAM" --plugin "$UNAV" --backend minimal_unavailable
expect 2 "no plugin found" "$AOTRUN" run "$PROGRAM" --input "$TMP/x.npy"

# ---- program / input errors: 3
expect 3 "program directory $TMP/none: No such file" \
  "$AOTRUN" run "$TMP/none" --plugin "$MIN"
expect 3 "has no method 'nope'" "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --method nope
expect 3 "method 'forward' takes 1 input(s), got 0" "$AOTRUN" run "$PROGRAM" --plugin "$MIN"
expect 3 "input 0: $TMP/bad.npy is not a .npy file (bad magic)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/bad.npy"
expect 3 "input 0 (x) is int32, the method takes float32" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x_i4.npy"
expect 3 "cannot open named data $TMP/manifest.json" "$AOTRUN" inspect "$TMP"
mkdir "$TMP/badprog"; echo '{"format": "other"}' > "$TMP/badprog/manifest.json"
expect 3 "$TMP/badprog/manifest.json: malformed manifest: field 'format' is 'other'" \
  "$AOTRUN" inspect "$TMP/badprog"
expect 3 "malformed manifest" "$AOTRUN" run "$TMP/badprog" --plugin "$MIN"
mkdir "$TMP/nofactor"; cp "$PROGRAM/manifest.json" "$TMP/nofactor/"
expect 3 "named data 'factor.txt' is not available" \
  "$AOTRUN" run "$TMP/nofactor" --plugin "$MIN" --input "$TMP/x.npy"

# ---- execution errors: 4
mkdir "$TMP/bigfactor"; cp "$PROGRAM/manifest.json" "$TMP/bigfactor/"
echo 1000 > "$TMP/bigfactor/factor.txt"
expect 4 "init failed (not supported): factor out of range for backend minimal_b" \
  "$AOTRUN" run "$TMP/bigfactor" --plugin "$MINB" --input "$TMP/x.npy"
touch "$TMP/afile"
expect 4 "cannot create output directory $TMP/afile" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-dir "$TMP/afile"

# ---- success: 0
expect 0 "input 0 x: float32 [n]" "$AOTRUN" inspect "$PROGRAM"
expect 0 "output 0: float32 [4]" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-dir "$TMP/out"
values=$(od -A n -t f4 -j 128 "$TMP/out/out0.npy" | tr -s ' ')
checks=$((checks + 1))
[[ "$values" == " 3 6 9 12" ]] || { echo "FAIL: out0.npy holds '$values'"; failures=$((failures + 1)); }
# The first available backend wins; --backend picks another.
expect 0 "backend minimal, method forward" \
  "$AOTRUN" run "$PROGRAM" --plugin "$UNAV" --plugin "$MIN" --plugin "$MINB" --input "$TMP/x.npy"
expect 0 "backend minimal_b, method forward" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --plugin "$MINB" --backend minimal_b --input "$TMP/x.npy"
# --option KEY=VALUE is typed and applied backend-wide before init.
expect 0 "output 0: float32 [4]" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --option offset=10 --output-dir "$TMP/outopt"
values=$(od -A n -t f4 -j 128 "$TMP/outopt/out0.npy" | tr -s ' ')
checks=$((checks + 1))
[[ "$values" == " 13 16 19 22" ]] || { echo "FAIL: --option offset=10 gave '$values'"; failures=$((failures + 1)); }
expect 1 "--option needs KEY=VALUE, got 'offset'" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --option offset
expect 1 "--option nosuchkey=1:" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --option nosuchkey=1
expect 1 "--option offset=abc:" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --option offset=abc
# A data-dependent output dim (a symbol no input binds, like x[mask]'s
# count) is sized with the largest input's element count as capacity.
mkdir "$TMP/unbacked"; cp "$PROGRAM/factor.txt" "$TMP/unbacked/"
sed 's/"shape": \["n"\]}\],$/"shape": ["n"]}],/; s/"name": "y", "dtype": "float32", "shape": \["n"\]/"name": "y", "dtype": "float32", "shape": ["u0"]/' \
  "$PROGRAM/manifest.json" > "$TMP/unbacked/manifest.json"
expect 0 "output 0: float32 [4]" \
  "$AOTRUN" run "$TMP/unbacked" --plugin "$MIN" --input "$TMP/x.npy" --calls 2
# --calls N writes one folder per call.
expect 0 "method forward, call 2" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --calls 3 --output-dir "$TMP/outcalls"
checks=$((checks + 1))
[[ -f "$TMP/outcalls/call0/out0.npy" && -f "$TMP/outcalls/call2/out0.npy" ]] || { echo "FAIL: --calls 3 did not write call0..call2"; failures=$((failures + 1)); }
expect 0 "p50 " "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --iterations 20 --warmup 2
AOTRUN_EXAMPLE_PROGRAM=$PROGRAM expect 0 "output 0: float32 [2] = -3 -2.25" \
  "$AOTRUN" demo --plugin "$MIN"
expect 3 "no example program" "$AOTRUN" demo --plugin "$MIN"

# ---- discovery: $AOTRUN_PLUGIN_PATH dirs and the binary's own directory
mkdir "$TMP/plugdir"; cp "$MIN" "$TMP/plugdir/libaotrun_scale.so"
echo "not a plugin" > "$TMP/plugdir/libaotrun_shim.so"  # must be skipped
out=$(AOTRUN_PLUGIN_PATH="$TMP/plugdir:$MINB" "$AOTRUN" plugins 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -ne 0 ]] || ! grep -q "^minimal	" <<<"$out" || ! grep -q "^minimal_b	" <<<"$out" \
   || grep -q shim <<<"$out"; then
  echo "FAIL: AOTRUN_PLUGIN_PATH listing (rc $rc):"; echo "$out"; failures=$((failures + 1))
fi
mkdir "$TMP/flat"; cp "$AOTRUN" "$TMP/flat/aotrun"; cp "$MIN" "$TMP/flat/libaotrun_scale.so"
expect 0 "backend minimal, method forward" "$TMP/flat/aotrun" run "$PROGRAM" --input "$TMP/x.npy"

# ---- issue 13: hostile files and counts (each would hang, crash, loop or
# overwrite before the fix; `timeout` turns a hang into a failure)
T="timeout 20"
mkfifo "$TMP/fifo.npy"
expect 3 "input 0: .npy file $TMP/fifo.npy is not a regular file (a FIFO)" \
  $T "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/fifo.npy"
expect 3 "input 0: .npy file /dev/zero is not a regular file (a device)" \
  $T "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input /dev/zero
mkdir "$TMP/fifoprog"; mkfifo "$TMP/fifoprog/manifest.json"
expect 3 "fifoprog/manifest.json is not a regular file (a FIFO)" \
  $T "$AOTRUN" inspect "$TMP/fifoprog"
expect 3 "fifoprog/manifest.json is not a regular file (a FIFO)" \
  $T "$AOTRUN" run "$TMP/fifoprog" --plugin "$MIN" --input "$TMP/x.npy"
mkdir "$TMP/fifodata"; cp "$PROGRAM/manifest.json" "$TMP/fifodata/"
mkfifo "$TMP/fifodata/factor.txt"
# (the minimal test plugin reports named-data failures in its own words)
expect 3 "named data 'factor.txt' is not available" \
  $T "$AOTRUN" run "$TMP/fifodata" --plugin "$MIN" --input "$TMP/x.npy"
mkdir "$TMP/zeroprog"; ln -s /dev/zero "$TMP/zeroprog/manifest.json"
expect 3 "outside the program directory" $T "$AOTRUN" inspect "$TMP/zeroprog"
mkdir "$TMP/passwdprog"; ln -s /etc/passwd "$TMP/passwdprog/manifest.json"
expect 3 "manifest.json resolves to /etc/passwd, outside the program directory" \
  "$AOTRUN" inspect "$TMP/passwdprog"
# Program files must resolve inside the program directory.
mkdir "$TMP/linkprog"; cp "$PROGRAM/manifest.json" "$TMP/linkprog/"
ln -s /etc/passwd "$TMP/linkprog/factor.txt"
expect 3 "named data 'factor.txt' is not available" \
  "$AOTRUN" run "$TMP/linkprog" --plugin "$MIN" --input "$TMP/x.npy"
out=$("$AOTRUN" run "$TMP/linkprog" --plugin "$MIN" --input "$TMP/x.npy" 2>&1)
checks=$((checks + 1))
if grep -q "root:" <<<"$out"; then
  echo "FAIL: /etc/passwd bytes echoed: $out"; failures=$((failures + 1))
fi
mkdir "$TMP/innerlink"; cp "$PROGRAM/manifest.json" "$TMP/innerlink/"
cp "$PROGRAM/factor.txt" "$TMP/innerlink/real_factor.txt"
ln -s real_factor.txt "$TMP/innerlink/factor.txt"
expect 0 "output 0: float32 [4]" \
  "$AOTRUN" run "$TMP/innerlink" --plugin "$MIN" --input "$TMP/x.npy"
# Outputs are never written through a symbolic link.
mkdir "$TMP/linkout"; echo precious > "$TMP/precious.txt"
ln -s "$TMP/precious.txt" "$TMP/linkout/out0.npy"
expect 4 "linkout/out0.npy: it is a symbolic link, refused" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-dir "$TMP/linkout"
checks=$((checks + 1))
[[ "$(cat "$TMP/precious.txt")" == precious ]] || { echo "FAIL: symlink target overwritten"; failures=$((failures + 1)); }
# ---- issue 14: .safetensors inputs and outputs (every dtype both ways is
# in test_cli_tensor_files; these check the plain shell view)
# write_st FILE KEY DTYPE: one [4] tensor holding float32 1 2 3 4's bytes.
write_st() {
  local h="{\"$2\":{\"dtype\":\"$3\",\"shape\":[4],\"data_offsets\":[0,16]}}"
  while (( ${#h} % 8 )); do h="$h "; done
  printf "$(printf '\\x%02x' "${#h}")\x00\x00\x00\x00\x00\x00\x00%s" "$h" > "$1"
  printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >> "$1"
}
write_st "$TMP/x.safetensors" x F32
write_st "$TMP/x0.SafeTensors" 0 F32
write_st "$TMP/xi.safetensors" x I32
write_st "$TMP/z.safetensors" z F32
expect 0 "output 0: float32 [4]" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.safetensors" --output-dir "$TMP/stout" --output-format safetensors
h='{"y":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
checks=$((checks + 1))
[[ "$(head -c $((8 + ${#h})) "$TMP/stout/outputs.safetensors" | tail -c ${#h})" == "$h" ]] &&
  [[ "$(od -A n -t f4 -j $((8 + (${#h} + 7) / 8 * 8)) "$TMP/stout/outputs.safetensors" | tr -s ' ')" == " 3 6 9 12" ]] ||
  { echo "FAIL: outputs.safetensors: $(od -c "$TMP/stout/outputs.safetensors" | head)"; failures=$((failures + 1)); }
expect 0 "output 0: float32 [4]" "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x0.SafeTensors"
expect 0 "p50 " "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.safetensors" --iterations 5 --warmup 1
expect 3 "input 0 (x) is int32, the method takes float32 (from $TMP/xi.safetensors tensor 'x')" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/xi.safetensors"
expect 3 "input $TMP/z.safetensors: tensor 'z' is not an input of method 'forward' (its inputs: x; or by index 0)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/z.safetensors"
expect 3 "input 0 (x) of method 'forward' is given twice: by $TMP/x.safetensors tensor 'x' and by $TMP/x0.SafeTensors tensor '0'" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.safetensors" --input "$TMP/x0.SafeTensors"
expect 3 "input $TMP/x.npy: every input of method 'forward' is already given (1 input(s))" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.safetensors" --input "$TMP/x.npy"
head -c 40 "$TMP/x.safetensors" > "$TMP/cut.safetensors"
expect 3 "input: malformed safetensors file '$TMP/cut.safetensors': header length 56 is past the end of the file (32 bytes after the length)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/cut.safetensors"
mkfifo "$TMP/fifo.safetensors"
expect 3 "input: .safetensors file $TMP/fifo.safetensors is not a regular file (a FIFO)" \
  $T "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/fifo.safetensors"
expect 1 "--output-format must be npy or safetensors, got 'h5'" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-dir "$TMP/o" --output-format h5
expect 1 "run: --output-format safetensors needs --output-dir" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-format safetensors
expect 1 "bench: unknown option '--output-format'" \
  "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-format npy
# --output FILE: the format is the extension's; conflicts refused, naming both.
expect 1 "--output '$TMP/o.bin': the file name must end in .safetensors or .npy (its format)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output "$TMP/o.bin"
expect 1 "run: --output and --output-dir cannot be combined" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output "$TMP/o.npy" --output-dir "$TMP/o"
expect 1 "run: --output $TMP/o.npy takes its format from its extension; drop --output-format" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output "$TMP/o.npy" --output-format npy
expect 1 "run: --output $TMP/o.npy holds one call's outputs; with --calls 3 use --output-dir D (D/call<k>/...)" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output "$TMP/o.npy" --calls 3
expect 1 "bench: unknown option '--output'" \
  "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output "$TMP/o.npy"
checks=$((checks + 1))
[[ ! -e "$TMP/o.npy" && ! -e "$TMP/o.bin" ]] || { echo "FAIL: a refused --output left a file"; failures=$((failures + 1)); }
mkdir "$TMP/stlink"; ln -s "$TMP/precious.txt" "$TMP/stlink/outputs.safetensors"
expect 4 "stlink/outputs.safetensors: it is a symbolic link, refused" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --output-dir "$TMP/stlink" --output-format safetensors
checks=$((checks + 1))
[[ "$(cat "$TMP/precious.txt")" == precious ]] || { echo "FAIL: symlink target overwritten (safetensors)"; failures=$((failures + 1)); }

# Counts are bounded, naming the option, the value and the limit.
expect 1 "--calls 100000000 is above the limit of 10000" \
  "$AOTRUN" run "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --calls 100000000 --output-dir "$TMP/many"
checks=$((checks + 1))
[[ ! -e "$TMP/many" ]] || { echo "FAIL: --calls 10^8 created $TMP/many"; failures=$((failures + 1)); }
expect 1 "--iterations 100000000 is above the limit of 1000000" \
  "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --iterations 100000000
expect 1 "--warmup 99999999999999999999 is above the limit of 100000" \
  "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --input "$TMP/x.npy" --warmup 99999999999999999999
# inspect validates like run (the loader's checks and messages).
mkdir "$TMP/baddtype"
sed 's/"dtype": "float32", "shape": \["n"\]}\],$/"dtype": "float33", "shape": ["n"]}],/' \
  "$PROGRAM/manifest.json" > "$TMP/baddtype/manifest.json"
expect 3 "input 0 ('x'): field 'dtype' is 'float33', not a known dtype" \
  "$AOTRUN" inspect "$TMP/baddtype"
# inspect prints dynamic-dim ranges and relations (docs/program-format.md).
mkdir "$TMP/ranges"
sed 's/"inputs": \[{"name": "x", "dtype": "float32", "shape": \["n"\]}\],/"symbols": {"n": {"min": 1, "max": 64, "hint": 4}, "m": {"min": 2}}, "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}, {"name": "y", "dtype": "float32", "shape": ["2*m + 1"], "dims": [{"symbol": "m", "scale": 2, "offset": 1}]}],/' \
  "$PROGRAM/manifest.json" > "$TMP/ranges/manifest.json"
expect 0 "    symbol n in [1, 64], exported at 4" "$AOTRUN" inspect "$TMP/ranges"
expect 0 "    symbol m in [2, inf]" "$AOTRUN" inspect "$TMP/ranges"
expect 0 '"hint":	4' "$AOTRUN" inspect "$TMP/ranges" --json
expect 0 "    input 1 y dim 0 = 2*m + 1" "$AOTRUN" inspect "$TMP/ranges"
# Control bytes from a manifest are escaped, never sent raw.
mkdir "$TMP/ctrl"
sed 's/"forward"/"fo\\u001b[31mrward"/' "$PROGRAM/manifest.json" > "$TMP/ctrl/manifest.json"
out=$("$AOTRUN" inspect "$TMP/ctrl" 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -ne 0 ]] || [[ "$out" == *$'\e'* ]] || [[ "$out" != *'method fo\x1b[31mrward'* ]]; then
  echo "FAIL: control bytes in inspect (rc $rc): $(printf '%q' "$out")"; failures=$((failures + 1))
fi
out=$("$AOTRUN" run "$TMP/ctrl" --plugin "$MIN" --method $'\e[2J' 2>&1)
checks=$((checks + 1))
if [[ "$out" == *$'\e'* ]] || [[ "$out" != *'\x1b[2J'* ]]; then
  echo "FAIL: control bytes in an error: $(printf '%q' "$out")"; failures=$((failures + 1))
fi
# A program path near PATH_MAX: PROGRAM/manifest.json no longer fits, and
# the old 4096-byte buffer cut it to PROGRAM/manifest (4095 bytes) and read
# that file instead, with exit 0.
long=$TMP
while [[ $(( ${#long} + 201 )) -le 4084 ]]; do long=$long/$(printf 'd%.0s' {1..200}); done
long=$long/$(printf 'e%.0s' $(seq 1 $(( 4086 - ${#long} - 1 ))))
(cd "$TMP" && mkdir -p "${long#$TMP/}" && cd "${long#$TMP/}" && cp "$PROGRAM/manifest.json" manifest)
checks=$((checks + 1))
[[ ${#long} -eq 4086 && -f "$long/manifest" ]] || { echo "FAIL: could not build the long path"; failures=$((failures + 1)); }
expect 3 "cannot open named data $TMP/" "$AOTRUN" inspect "$long"
# Write errors on stdout are an error.
expect 4 "error writing to standard output" sh -c '"$0" inspect "$1" > /dev/full' "$AOTRUN" "$PROGRAM"

finish "CLI"
