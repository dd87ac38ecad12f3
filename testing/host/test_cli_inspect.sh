#!/bin/bash
# test_cli_inspect.sh: `aotrun inspect` on the example program and the
# fixture model libraries: inputs/outputs, constants, weights shared between
# methods, the aoti_torch_* functions each library imports and whether the
# shim library exports them (found through $AOTRUN_SHIM_LIB,
# $AOTRUN_PLUGIN_PATH or not at all), --json, and broken libraries.
# usage: test_cli_inspect.sh AOTRUN EXAMPLE/manifest.json SHIM.so \
#                            FIXTURE_UNKNOWN_IMPORT.so CPU_REF_PLUGIN.so
set -u
AOTRUN=$1 EXAMPLE=$(dirname "$2") SHIM=$3 UNKNOWN_IMPORT=$4 CPU_REF=$5
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/inspect.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_SHIM_LIB
# Program files must resolve inside the program directory: a real copy.
cp -rL "$EXAMPLE" "$TMP/prog" && PROG=$TMP/prog
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

# ---- the example program, no shim anywhere (the test binary's directory
# has none): everything but the shim check
I=("$AOTRUN" inspect "$PROG")
expect 0 "^  methods 1" "${I[@]}"
expect 0 "^  method forward (library forward.so)" "${I[@]}"
expect 0 "^    input 0 x: float32 [s0, 4]" "${I[@]}"
expect 0 "^    output 0 y: float32 [s0, 3]" "${I[@]}"
expect 0 "^    output 1 calls: float32 [1]" "${I[@]}"
expect 0 "^    constants 4, 72 bytes" "${I[@]}"
expect 0 "^    constant lin.weight: float32 [3, 4] cpu, 48 bytes" "${I[@]}"
expect 0 "^    constant scale: float64 [1] cpu, 8 bytes" "${I[@]}"
expect 0 "^  shared weights 0" "${I[@]}"
expect 0 "^  shim unknown: no libaotrun_shim.so found (set \$AOTRUN_SHIM_LIB, or put it beside a --plugin, in a \$AOTRUN_PLUGIN_PATH directory or next to the aotrun binary)" "${I[@]}"
expect 0 "^    shim imports 16 (from the library), shim unknown" "${I[@]}"
expect 0 "^      aoti_torch_empty_strided" "${I[@]}"
# Stable: two runs print the same bytes.
checks=$((checks + 1))
[[ "$("${I[@]}")" == "$("${I[@]}")" ]] || fail "inspect output differs between runs"

# ---- the shim through $AOTRUN_SHIM_LIB, then through $AOTRUN_PLUGIN_PATH
expect 0 "^    shim imports 16 (from the library), all in the shim" \
  env AOTRUN_SHIM_LIB="$SHIM" "${I[@]}"
expect 0 "  shim $SHIM (" env AOTRUN_SHIM_LIB="$SHIM" "${I[@]}"
mkdir "$TMP/plugdir"; ln -s "$(realpath "$SHIM")" "$TMP/plugdir/libaotrun_shim.so"
expect 0 "  shim $TMP/plugdir/libaotrun_shim.so (" \
  env AOTRUN_PLUGIN_PATH="/nonexistent:$TMP/plugdir" "${I[@]}"
expect 0 "all in the shim" env AOTRUN_PLUGIN_PATH="$TMP/plugdir" "${I[@]}"
# Beside a --plugin (file or directory): where the CUDA plugin finds it.
cp "$CPU_REF" "$TMP/plugdir/"
expect 0 "  shim $TMP/plugdir/libaotrun_shim.so (" \
  "${I[@]}" --load --plugin "$TMP/plugdir/$(basename "$CPU_REF")"
expect 0 "  shim $TMP/plugdir/libaotrun_shim.so (" "${I[@]}" --load --plugin "$TMP/plugdir"
expect 0 "^  shim unknown: cannot open shim library $TMP/none.so: No such file or directory" \
  env AOTRUN_SHIM_LIB="$TMP/none.so" "${I[@]}"
echo "not an ELF file" > "$TMP/fake_shim.so"
expect 0 "^  shim unknown: shim library $TMP/fake_shim.so: cannot read its dynamic symbols: not an ELF file" \
  env AOTRUN_SHIM_LIB="$TMP/fake_shim.so" "${I[@]}"

# ---- a library importing a function the shim lacks
cp -rL "$EXAMPLE" "$TMP/unknown"; cp "$UNKNOWN_IMPORT" "$TMP/unknown/forward.so"
chmod u+w "$TMP/unknown/forward.so"
expect 0 "^    shim imports 17 (from the library), 1 not in the shim" \
  env AOTRUN_SHIM_LIB="$SHIM" "$AOTRUN" inspect "$TMP/unknown"
expect 0 "^      aoti_torch_fixture_no_such_op (not in the shim)" \
  env AOTRUN_SHIM_LIB="$SHIM" "$AOTRUN" inspect "$TMP/unknown"

# ---- broken libraries: "unknown" with the reason, exit 0, no crash
cp -rL "$EXAMPLE" "$TMP/text"; chmod u+w "$TMP/text/forward.so"
echo "not a library" > "$TMP/text/forward.so"
expect 0 "^    shim imports unknown: library forward.so: cannot read its dynamic symbols: not an ELF file" \
  "$AOTRUN" inspect "$TMP/text"
cp -rL "$EXAMPLE" "$TMP/cut"; chmod u+w "$TMP/cut/forward.so"
head -c 2000 "$PROG/forward.so" > "$TMP/cut/forward.so"
expect 0 "^    shim imports unknown: library forward.so: cannot read its dynamic symbols: no section headers inside the file" \
  "$AOTRUN" inspect "$TMP/cut"
cp -rL "$EXAMPLE" "$TMP/nolib"; rm "$TMP/nolib/forward.so"
expect 0 "shim imports unknown: cannot open named data $TMP/nolib/forward.so" \
  "$AOTRUN" inspect "$TMP/nolib"

# ---- two methods sharing weights; the second one's library is missing, so
# its imports come from the manifest's aoti_torch_imports
mkdir "$TMP/two"; cp "$PROG/forward.so" "$PROG/weights.safetensors" "$TMP/two/"
python3 - "$PROG/manifest.json" "$TMP/two/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
enc = json.loads(json.dumps(m["methods"]["forward"]))
enc["library"] = "encode.so"
enc["constants"] = [c for c in enc["constants"] if c["fqn"] != "calls"]
enc["aoti_torch_imports"] = ["aoti_torch_empty_strided", "aoti_torch_nope"]
m["methods"]["encode"] = enc
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
T2=(env AOTRUN_SHIM_LIB="$SHIM" "$AOTRUN" inspect "$TMP/two")
expect 0 "^  methods 2" "${T2[@]}"
expect 0 "^  shared weights 3" "${T2[@]}"
expect 0 "^    weight lin.weight: 48 bytes, methods forward, encode" "${T2[@]}"
expect 0 "^    weight scale: 8 bytes, methods forward, encode" "${T2[@]}"
expect 0 "^    constants 3, 68 bytes" "${T2[@]}"
expect 0 "^    shim imports 2 (from the manifest), 1 not in the shim" "${T2[@]}"
expect 0 "^      aoti_torch_nope (not in the shim)" "${T2[@]}"
expect 0 "(library not read: cannot open named data $TMP/two/encode.so" "${T2[@]}"

# ---- --json: one object with the same facts
out=$(AOTRUN_SHIM_LIB="$SHIM" "$AOTRUN" inspect "$TMP/two" --json 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -ne 0 ]] || ! python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["format_version"] == 1, d
assert d["shim"]["exports"] > 100, d["shim"]
f, e = d["methods"]
assert f["name"] == "forward" and e["name"] == "encode"
assert f["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["s0", 4]}], f["inputs"]
assert f["constants"][0] == {"fqn": "lin.weight", "name": "weight", "dtype": "float32",
                             "device": "cpu", "shape": [3, 4], "nbytes": 48}, f["constants"][0]
assert f["constant_bytes"] == 72
assert f["shim_imports"]["source"] == "library"
assert len(f["shim_imports"]["names"]) == 16 and f["shim_imports"]["missing"] == []
assert e["shim_imports"] == {"source": "manifest",
                             "names": ["aoti_torch_empty_strided", "aoti_torch_nope"],
                             "missing": ["aoti_torch_nope"]}, e["shim_imports"]
assert [w["fqn"] for w in d["shared_weights"]] == ["lin.bias", "lin.weight", "scale"]
assert d["shared_weights"][1] == {"fqn": "lin.weight", "nbytes": 48,
                                  "methods": ["forward", "encode"]}
PY
then fail "inspect --json (rc $rc): $out"; fi
out=$("$AOTRUN" inspect "$PROG" --json 2>&1)
checks=$((checks + 1))
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["shim"]["path"] is None and "no libaotrun_shim.so" in d["shim"]["error"]; assert d["methods"][0]["shim_imports"]["missing"] is None' "$out" ||
  fail "inspect --json without a shim: $out"

# ---- usage
expect 1 "inspect: unknown option '--input'" "$AOTRUN" inspect "$PROG" --input x

finish "inspect"
